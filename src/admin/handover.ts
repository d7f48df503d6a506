/** Interventions on handover markers: `handover rm`, `handover rm --owner-dead` (bulk). */
import { validateId } from '../keys.js'
import { ADMIN_HANDOVER_RM } from '../scripts/registry.js'
import type { HandoverRemoveReply } from '../wire/interventions.js'
import { runBulk } from './bulk.js'
import type { AuditOutcome, BulkOptions, BulkResult, HandoverRemoveResult } from './interventions.js'
import type { HandoverRemoveOptions } from './options.js'
import { named, type AdminContext, type ScriptCall } from './runner.js'

export async function removeHandover(
  ctx: AdminContext,
  key: string,
  opts: HandoverRemoveOptions,
): Promise<HandoverRemoveResult & { audit: AuditOutcome }> {
  return ctx.runner.run(opts, {
    ...handoverRm(ctx, key, opts.ifIncarnation, opts.ifSince ?? null),
    pinned: { kind: 'handover', key, holder: { incarnation: opts.ifIncarnation } },
    outcome: (reply): HandoverRemoveResult => named(reply, { key }),
    record: (result) => ({
      kind: 'handover',
      key,
      holder: { replicaId: result.status === 'absent' ? null : result.replicaId, incarnation: opts.ifIncarnation },
      name: result.status === 'absent' ? null : result.name,
      result: result.status,
    }),
  })
}

/** Each marker by its own script, conditioned on the incarnation and wait listed. */
export function removeHandovers(
  ctx: AdminContext,
  entries: Array<{ key: string; incarnation: string; since: number | null }>,
  opts: BulkOptions,
): Promise<BulkResult & { audit: AuditOutcome }> {
  return runBulk(ctx, 'handover', entries, (e) => ctx.runner.attempt(handoverRm(ctx, e.key, e.incarnation, e.since)), opts, 'handover rm')
}

/**
 * One marker's removal, conditioned on the incarnation that left it and the wait it marks: the one
 * script of `handover rm` and of each entry of a bulk clean-up. Validated when it is sent, so a bulk
 * entry with a bad key fails alone.
 */
function handoverRm(ctx: AdminContext, key: string, ifIncarnation: string, ifSince: number | null): ScriptCall<HandoverRemoveReply> {
  return {
    command: `handover rm ${key}`,
    check: `it was applied when ${key} has no handover marker of incarnation ${ifIncarnation}`,
    send: async () => {
      validateId(key, 'chat key')
      if (!ifIncarnation) throw new RangeError('removeHandover needs the incarnation the operator saw (ifIncarnation)')
      // A marker read without `since` decodes it as 0: then only the incarnation is compared.
      return ctx.scripts.call(ADMIN_HANDOVER_RM, { marker: ctx.keys.chat(key).handover }, { ifIncarnation, ifSince: ifSince || null })
    },
  }
}
