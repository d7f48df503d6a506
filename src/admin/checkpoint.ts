/** Interventions on checkpoints: `checkpoint rm`, `checkpoints rm --flow …` (bulk), `checkpoint extend`. */
import { validateId } from '../keys.js'
import { ADMIN_CHECKPOINT_EXTEND, ADMIN_CHECKPOINT_RM } from '../scripts/registry.js'
import type { CheckpointRemoveReply } from '../wire/interventions.js'
import { runBulk } from './bulk.js'
import type {
  AuditOptions,
  AuditOutcome,
  BulkOptions,
  BulkResult,
  CheckpointExtendResult,
  CheckpointRemoveResult,
} from './interventions.js'
import { named, type AdminContext, type ScriptCall } from './runner.js'

export async function removeCheckpoint(
  ctx: AdminContext,
  key: string,
  revision: number,
  opts: AuditOptions,
): Promise<CheckpointRemoveResult & { audit: AuditOutcome }> {
  return ctx.runner.run(opts, {
    ...checkpointRm(ctx, key, revision),
    pinned: { kind: 'checkpoint', key, revisionExpected: revision },
    outcome: (reply): CheckpointRemoveResult => named(reply, { key }),
    record: (result) => ({
      kind: 'checkpoint',
      key,
      revisionExpected: revision,
      revision: result.status === 'absent' ? null : result.revision,
      flow: result.status === 'absent' ? null : result.flow,
      step: result.status === 'absent' ? null : result.step,
      result: result.status,
    }),
  })
}

/** Each entry by its own compare-and-set script on the revision listed: a changed one is skipped, never removed. */
export function removeCheckpoints(
  ctx: AdminContext,
  entries: Array<{ key: string; revision: number }>,
  opts: BulkOptions,
): Promise<BulkResult & { audit: AuditOutcome }> {
  return runBulk(ctx, 'checkpoint', entries, (e) => ctx.runner.attempt(checkpointRm(ctx, e.key, e.revision)), opts, 'checkpoints rm')
}

/**
 * One checkpoint's removal, compare-and-set on a revision: the one script of `checkpoint rm` and of
 * each entry of a bulk clean-up. The key is validated when it is sent, so a bulk entry with a bad
 * key fails alone.
 */
function checkpointRm(ctx: AdminContext, key: string, revision: number): ScriptCall<CheckpointRemoveReply> {
  return {
    command: `checkpoint rm ${key}`,
    check: `it was applied when ${key} has no checkpoint at revision ${revision}`,
    send: async () => {
      validateId(key, 'checkpoint key')
      return ctx.scripts.call(ADMIN_CHECKPOINT_RM, { checkpoint: ctx.keys.chat(key).checkpoint }, { revision })
    },
  }
}

export async function extendCheckpoint(
  ctx: AdminContext,
  key: string,
  revision: number,
  ttlMs: number,
  opts: AuditOptions,
): Promise<CheckpointExtendResult & { audit: AuditOutcome }> {
  validateId(key, 'checkpoint key')
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) throw new RangeError('ttlMs must be a positive whole number of ms')
  return ctx.runner.run(opts, {
    command: `checkpoint extend ${key}`,
    check: `it was applied when the checkpoint of ${key} expires about ${ttlMs} ms after the call`,
    pinned: { kind: 'checkpoint', key, revisionExpected: revision, ttlMs },
    send: () => ctx.scripts.call(ADMIN_CHECKPOINT_EXTEND, { checkpoint: ctx.keys.chat(key).checkpoint }, { revision, ttlMs }),
    outcome: (reply): CheckpointExtendResult => named(reply, { key, ttlMs }),
    record: (result) => ({
      kind: 'checkpoint',
      key,
      revisionExpected: revision,
      revision: result.status === 'absent' ? null : result.revision,
      ttlMs,
      expiresInMsBefore: result.status === 'extended' || result.status === 'unchanged' ? result.expiresInMsBefore : null,
      result: result.status,
    }),
  })
}
