/** The intervention on a fenced lock: `lock release`. */
import { validateId } from '../keys.js'
import { ADMIN_LOCK_RELEASE } from '../scripts/registry.js'
import type { AuditOutcome, LockReleaseResult } from './interventions.js'
import type { ConditionOptions } from './options.js'
import { fencePast, named, type AdminContext } from './runner.js'

export async function releaseLock(
  ctx: AdminContext,
  key: string,
  opts: ConditionOptions,
): Promise<LockReleaseResult & { audit: AuditOutcome }> {
  validateId(key, 'lock key')
  return ctx.runner.run(opts, {
    command: `lock release ${key}`,
    check: fencePast(key, opts.ifFence),
    pinned: { kind: 'lock', key, fenceBefore: opts.ifFence ?? null },
    send: () => ctx.scripts.call(ADMIN_LOCK_RELEASE, { lock: ctx.keys.lock(key) }, { ifFence: opts.ifFence ?? null }),
    outcome: (reply): LockReleaseResult => named(reply, { key }),
    record: (result) => {
      const fence = 'fence' in result ? result.fence : null
      return {
        kind: 'lock',
        key,
        fenceBefore: result.status === 'released' ? result.fenceBefore : fence,
        fenceAfter: result.status === 'released' ? result.fenceAfter : fence,
        owner: result.status === 'released' || result.status === 'changed' ? result.owner : null,
        result: result.status,
      }
    },
  })
}
