/**
 * Interventions on a lead: `provider yield` (ask), `--force` (revoke), `--cancel`, and a replica
 * eviction's part in a lead.
 */
import { validateId } from '../keys.js'
import { DEFAULTS } from '../defaults.js'
import { ADMIN_LEAD_EVICT, ADMIN_LEAD_REVOKE, ADMIN_YIELD_CANCEL } from '../scripts/registry.js'
import type { YieldResult } from '../wire/types.js'
import { operatorName } from './audit.js'
import type { AuditOutcome, EvictedLead, LeadRevokeResult, YieldCancelResult } from './interventions.js'
import type { LeadRevokeOptions, YieldCancelOptions, YieldOptions } from './options.js'
import { fencePast, named, type AdminContext, type ScriptCall } from './runner.js'

export async function requestYield(ctx: AdminContext, name: string, opts: YieldOptions): Promise<YieldResult & { audit?: AuditOutcome }> {
  validateId(name, 'lead name')
  const by = opts.by ?? operatorName()
  const call: ScriptCall<YieldResult> = {
    command: `provider yield ${name}`,
    check: `it was applied when ${name} shows a pending yield request by ${by}`,
    send: () =>
      ctx.backend.requestYield(name, {
        by,
        target: opts.target ?? null,
        ttlMs: opts.ttlMs ?? DEFAULTS.yieldTtlMs,
        ifFence: opts.ifFence ?? null,
      }),
  }
  if (!opts.audit) return ctx.runner.send(call)
  // The fence to record when no request is made (most such replies carry none).
  const before = await ctx.reader.lead(name).catch(() => null)
  return ctx.runner.run(
    { ...opts, by },
    {
      ...call,
      pinned: { kind: 'lead', key: name, fenceBefore: opts.ifFence ?? null, target: opts.target ?? null },
      outcome: (result) => result,
      record: (result) => ({
        kind: 'lead',
        key: name,
        fenceBefore: result.status === 'requested' ? result.fence : (before?.fence ?? null),
        // A yield takes nothing away itself: the next grant (to a standby) carries the higher fence.
        fenceAfter: result.status === 'requested' ? result.fence : (before?.fence ?? null),
        holder: result.status === 'requested' ? result.leader : null,
        target: opts.target ?? null,
        wakeRefused: result.status === 'requested' ? (result.wakeRefused ?? null) : null,
        result: result.status,
      }),
    },
  )
}

export async function revokeLead(
  ctx: AdminContext,
  name: string,
  opts: LeadRevokeOptions,
): Promise<LeadRevokeResult & { audit: AuditOutcome }> {
  validateId(name, 'lead name')
  const by = opts.by ?? operatorName()
  return ctx.runner.run(
    { ...opts, by },
    {
      command: `provider yield ${name} --force`,
      check: fencePast(name, opts.ifFence),
      pinned: { kind: 'lead', key: name, fenceBefore: opts.ifFence ?? null, target: opts.target ?? null },
      send: () =>
        ctx.scripts.call(
          ADMIN_LEAD_REVOKE,
          { lead: ctx.keys.lead(name) },
          {
            ifFence: opts.ifFence ?? null,
            ifIncarnation: opts.ifIncarnation ?? null,
            target: opts.target ?? null,
            ttlMs: opts.ttlMs ?? DEFAULTS.yieldTtlMs,
            by,
            wakeChannelPrefix: ctx.keys.wakeChannelPrefix,
          },
        ),
      outcome: (reply): LeadRevokeResult => named(reply, { name }),
      record: (result) => {
        const fence = 'fence' in result ? result.fence : null
        return {
          kind: 'lead',
          key: name,
          fenceBefore: result.status === 'revoked' ? result.fenceBefore : fence,
          fenceAfter: result.status === 'revoked' ? result.fenceAfter : fence,
          holder: result.status === 'revoked' ? result.holder : null,
          target: opts.target ?? null,
          wakeRefused: result.status === 'revoked' ? result.wakeRefused : null,
          result: result.status,
        }
      },
    },
  )
}

export async function cancelYield(
  ctx: AdminContext,
  name: string,
  opts: YieldCancelOptions,
): Promise<YieldCancelResult & { audit: AuditOutcome }> {
  validateId(name, 'lead name')
  return ctx.runner.run(opts, {
    command: `provider yield ${name} --cancel`,
    check: `it was applied when ${name} shows no pending yield request`,
    pinned: { kind: 'lead', key: name, fenceBefore: opts.ifFence ?? null },
    send: () =>
      ctx.scripts.call(
        ADMIN_YIELD_CANCEL,
        { lead: ctx.keys.lead(name) },
        { ifRequestedAt: opts.ifRequestedAt ?? null, ifFence: opts.ifFence ?? null, wakeChannelPrefix: ctx.keys.wakeChannelPrefix },
      ),
    outcome: (reply): YieldCancelResult => named(reply, { name }),
    record: (result) => ({
      kind: 'lead',
      key: name,
      fenceBefore: result.fence,
      fenceAfter: result.fence,
      requestedBy: result.status === 'none' ? null : result.by,
      target: result.status === 'cancelled' ? result.target : null,
      wakeRefused: result.status === 'cancelled' ? result.wakeRefused : null,
      result: result.status,
    }),
  })
}

/**
 * An evicted incarnation's part in one lead: revoked if it holds it, its candidacy withdrawn. One
 * step of `replica evict`, which writes the one audit record of the whole eviction.
 */
export async function evictFromLead(ctx: AdminContext, name: string, incarnation: string): Promise<EvictedLead> {
  const reply = await ctx.scripts.call(
    ADMIN_LEAD_EVICT,
    { lead: ctx.keys.lead(name) },
    { incarnation, wakeChannelPrefix: ctx.keys.wakeChannelPrefix },
  )
  return { name, ...reply }
}
