/** Interventions on a chat's turn and queue: `chat release`, `chat skip`, and a replica eviction's part in a chat. */
import { validateId } from '../keys.js'
import { DEFAULTS } from '../defaults.js'
import { ADMIN_CHAT_EVICT, ADMIN_CHAT_RELEASE, ADMIN_CHAT_SKIP } from '../scripts/registry.js'
import type { ChatSnapshot } from '../state/decode.js'
import type { AuditOutcome, ChatReleaseResult, ChatSkipResult, EvictedChat } from './interventions.js'
import type { ConditionOptions, GrantOptions } from './options.js'
import { fencePast, named, type AdminContext } from './runner.js'

export async function releaseChat(
  ctx: AdminContext,
  key: string,
  opts: ConditionOptions & GrantOptions,
): Promise<ChatReleaseResult & { audit: AuditOutcome }> {
  validateId(key, 'chat key')
  const k = ctx.keys.chat(key)
  const leaseMs = opts.grantLeaseMs ?? (await grantLeaseFor(ctx, key))
  return ctx.runner.run(opts, {
    command: `chat release ${key}`,
    check: fencePast(key, opts.ifFence),
    pinned: {
      kind: 'chat',
      key,
      fenceBefore: opts.ifFence ?? null,
      holder: opts.ifIncarnation ? { incarnation: opts.ifIncarnation } : null,
    },
    send: () =>
      ctx.scripts.call(
        ADMIN_CHAT_RELEASE,
        { state: k.state, queue: k.queue },
        {
          ifFence: opts.ifFence ?? null,
          ifIncarnation: opts.ifIncarnation ?? null,
          leaseMs,
          idleTtlMs: ctx.idleKeyTtlMs,
          wakeChannelPrefix: ctx.keys.wakeChannelPrefix,
        },
      ),
    outcome: (reply): ChatReleaseResult => named(reply, { key }),
    record: (result) => ({
      kind: 'chat',
      key,
      fenceBefore: result.status === 'released' ? result.fenceBefore : result.fence,
      fenceAfter: result.status === 'released' ? (result.granted?.fence ?? result.fenceAfter) : result.fence,
      holder: result.status === 'released' ? result.holder : null,
      granted: result.status === 'released' ? result.granted : null,
      wakeRefused: result.status === 'released' ? result.wakeRefused : null,
      result: result.status,
    }),
  })
}

export async function skipTicket(
  ctx: AdminContext,
  key: string,
  ticket: number,
  opts: ConditionOptions & GrantOptions,
): Promise<ChatSkipResult & { audit: AuditOutcome }> {
  validateId(key, 'chat key')
  if (!Number.isSafeInteger(ticket) || ticket <= 0) throw new RangeError('ticket must be a positive integer')
  const k = ctx.keys.chat(key)
  const leaseMs = opts.grantLeaseMs ?? (await grantLeaseFor(ctx, key))
  return ctx.runner.run(opts, {
    command: `chat skip ${key} ${ticket}`,
    check: `it was applied when ticket ${ticket} is no longer queued in ${key}`,
    pinned: { kind: 'chat', key, ticket, fenceBefore: opts.ifFence ?? null },
    send: () =>
      ctx.scripts.call(
        ADMIN_CHAT_SKIP,
        { state: k.state, queue: k.queue },
        {
          ticket,
          ifIncarnation: opts.ifIncarnation ?? null,
          ifFence: opts.ifFence ?? null,
          leaseMs,
          idleTtlMs: ctx.idleKeyTtlMs,
          wakeChannelPrefix: ctx.keys.wakeChannelPrefix,
        },
      ),
    outcome: (reply): ChatSkipResult => named(reply, { key, ticket }),
    record: (result) => {
      const fence = 'fence' in result ? result.fence : null
      return {
        kind: 'chat',
        key,
        ticket,
        fenceBefore: fence,
        fenceAfter: result.status === 'skipped' ? (result.granted?.fence ?? fence) : fence,
        holder: result.status === 'skipped' ? { replicaId: result.replicaId, incarnation: result.incarnation } : null,
        granted: result.status === 'skipped' ? result.granted : null,
        wakeRefused: result.status === 'skipped' ? result.wakeRefused : null,
        result: result.status,
      }
    },
  })
}

/**
 * An evicted incarnation's part in one chat: its turn revoked, its tickets dropped, the next waiter
 * granted. One step of `replica evict`, which writes the one audit record of the whole eviction.
 */
export async function evictFromChat(ctx: AdminContext, key: string, incarnation: string, grantLeaseMs: number): Promise<EvictedChat> {
  const k = ctx.keys.chat(key)
  const reply = await ctx.scripts.call(
    ADMIN_CHAT_EVICT,
    { state: k.state, queue: k.queue },
    { incarnation, leaseMs: grantLeaseMs, idleTtlMs: ctx.idleKeyTtlMs, wakeChannelPrefix: ctx.keys.wakeChannelPrefix },
  )
  return { key, ...reply }
}

/**
 * The lease a grant made by an intervention starts with: the longest lease among the chat's holder
 * and the replicas with tickets in it (they confirm on their first poll and extend it to their own).
 */
async function grantLeaseFor(ctx: AdminContext, key: string): Promise<number> {
  let best = 0
  let chat: ChatSnapshot | null = null
  try {
    chat = (await ctx.reader.chat(key)).chat
  } catch {
    return DEFAULTS.leaseMs
  }
  if (!chat) return DEFAULTS.leaseMs
  if (chat.holder && chat.holder.lastRenewalMs > 0) best = Math.max(best, chat.holder.expiresAtMs - chat.holder.lastRenewalMs)
  const ids = [...new Set(chat.tickets.map((t) => t.replicaId))].slice(0, 20)
  const infos = await Promise.all(ids.map((id) => ctx.reader.replica(id).catch(() => null)))
  for (const r of infos) if (r?.info.leaseMs) best = Math.max(best, r.info.leaseMs)
  return best >= 300 ? best : DEFAULTS.leaseMs
}
