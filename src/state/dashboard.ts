/**
 * One bounded read of everything the dashboard shows. Its cost does not grow with the number of
 * chats: live replicas come from the replica index, and the chats and leads worth showing come from
 * the replicas' own heartbeat records (what each holds, waits for and campaigns for), capped at `topChats`.
 */
import { withTimeout } from '../connection.js'
import { errorFromRedis } from '../errors/from-redis.js'
import { DEFAULTS } from '../defaults.js'
import { listingPlan, type ListingPlan } from './bounded.js'
import { decodeChat, decodeLead, decodeReplica, type ChatSnapshot, type LeadSnapshot, type ReplicaSnapshot } from './decode.js'
import type { KeyLayout, RedisKey } from '../keys.js'
import { keyText } from '../bytes.js'
import { chatHealth, leaseHealth, liveness, stuckReasons, type ChatHealth, type LeaseState } from './health.js'
import type { StateReader } from './reader.js'
import { CHECKPOINT_FIELDS as CP, REPLICA_FIELDS } from '../wire/hashes.js'

/** Keys per batch of a refresh on one server, handed to the listings' read (read-listing-0 calls of a few dozen keys each). */
const DASHBOARD_KEYS_PER_CALL = 250

export interface DashboardChat {
  chat: ChatSnapshot
  /** Checkpoint flow and step, when the chat has one. */
  checkpoint: { flow: string; step: string; ephemeral: boolean } | null
  /** The health model's verdict on its turn and queue (src/state/health.ts). */
  health: ChatHealth
  /** Why it looks stuck or late, in words (empty when it does not). */
  stuck: string[]
  queueLength: number
  /** Oldest queued ticket's wait (ms), or null. */
  oldestWaitMs: number | null
}

export interface DashboardSnapshot {
  nowMs: number
  replicas: ReplicaSnapshot[]
  /** Leads the replicas hold or campaign for. */
  providers: LeadSnapshot[]
  chats: DashboardChat[]
  /** Leases (chat turns and leads) by time left, soonest first, with their state (a late holder stands out). */
  expiring: Array<{ kind: 'chat' | 'lead'; key: string; replicaId: string; fence: number; expiresInMs: number; state: LeaseState }>
  events: Array<{ id: string; event: Record<string, unknown> }>
  /** Redis commands this read sent. */
  commands: number
  /** Keys that could not be decoded (shown, not fatal). */
  corrupt: Array<{ rawKey: string; error: string }>
}

export interface DashboardOptions {
  topChats?: number
  events?: number
  timeoutMs?: number
  /** The bot's turnWaitMs: a turn held longer than half of it while others wait needs attention. */
  turnWaitMs?: number
}

type Hash = Record<string, string>

export async function readDashboard(reader: StateReader, options: DashboardOptions = {}): Promise<DashboardSnapshot> {
  const source = reader.source
  const keys: KeyLayout = reader.keys
  const topChats = options.topChats ?? DEFAULTS.dashboardChats
  const timeoutMs = options.timeoutMs ?? DEFAULTS.dashboardTimeoutMs
  let commands = 0
  const corrupt: DashboardSnapshot['corrupt'] = []
  const call = async <T>(what: string, f: () => Promise<T>, rawKey?: RedisKey): Promise<T> => {
    commands++
    try {
      return await withTimeout(f(), timeoutMs, what)
    } catch (err) {
      throw errorFromRedis(err, rawKey)
    }
  }

  const [time, ids] = await Promise.all([
    call('TIME', () => source.time()),
    call('ZRANGE', () => source.zrange(keys.replicaIndex), keys.replicaIndex),
  ])
  const nowMs = time

  // Replica records share one slot on a cluster (the prefix is their hash tag): one pipeline.
  const replicas: ReplicaSnapshot[] = []
  if (ids.length) {
    commands += ids.length
    const res = await withTimeout(
      source.hashes(
        null,
        ids.map((id) => keys.replica(id)),
      ),
      timeoutMs,
      'replicas',
    ).catch((e: unknown) => {
      throw errorFromRedis(e, keys.replicaIndex)
    })
    ids.forEach((id, i) => {
      const h = res[i] ?? {}
      const rawKey = keys.replica(id)
      if (h instanceof Error) return corrupt.push({ rawKey: keyText(rawKey), error: h.message })
      if (h[REPLICA_FIELDS.beat] === undefined) return
      try {
        const rec = decodeReplica(id, rawKey, h)
        if (rec.expiresAtMs > nowMs) replicas.push(rec)
      } catch (e) {
        corrupt.push({ rawKey: keyText(rawKey), error: (e as Error).message })
      }
    })
  }
  replicas.sort((a, b) => a.replicaId.localeCompare(b.replicaId))

  // What the replicas hold, wait for and campaign for.
  const chatKeys = new Set<string>()
  const leadNames = new Set<string>()
  for (const rep of replicas) {
    for (const h of rep.leases.held) (h.kind === 'chat' ? chatKeys : leadNames).add(h.key)
    for (const w of rep.leases.waiting) chatKeys.add(w.key)
    for (const c of rep.leases.campaigns ?? []) leadNames.add(c)
  }

  // What a listing reads of each (./bounded.ts). On one server, the listings' own read (a few dozen keys
  // per read-listing-0 call, two at the server at a time); on a Cluster, one key at a time through the
  // client (one slot each).
  const oneNode = !source.slotOwners && (await source.nodeCount()) === 1
  const miss = { fields: {}, size: 0, extra: 0 }
  const listed = async (items: Array<{ key: RedisKey; queue?: RedisKey }>, plan: ListingPlan) => {
    const read = (batch: typeof items) =>
      call('HMGET', () => source.listing(oneNode ? 0 : null, batch, plan), batch[0]!.key).then(
        (rs) => batch.map((_, i) => rs[i] ?? miss),
        (e: unknown) => batch.map(() => e as Error),
      )
    const batches: Array<typeof items> = []
    for (let i = 0; i < items.length; i += oneNode ? DASHBOARD_KEYS_PER_CALL : 1)
      batches.push(items.slice(i, i + (oneNode ? DASHBOARD_KEYS_PER_CALL : 1)))
    return (await Promise.all(batches.map(read))).flat()
  }
  const chatPlan = listingPlan('chat')!
  const leadPlan = listingPlan('lead')!
  const cpPlan: ListingPlan = { mode: 'hash', fields: [CP.flow, CP.step, CP.ephemeral], limit: 0, measure: null }
  const chatList = [...chatKeys].slice(0, topChats * DEFAULTS.dashboardChatsReadFactor)
  const [chatHashes, cpHashes, leadHashes, events] = await Promise.all([
    listed(
      chatList.map((k) => ({ key: keys.chat(k).state, queue: keys.chat(k).queue })),
      chatPlan,
    ),
    listed(
      chatList.map((k) => ({ key: keys.chat(k).checkpoint })),
      cpPlan,
    ),
    listed(
      [...leadNames].map((n) => ({ key: keys.lead(n) })),
      leadPlan,
    ),
    reader.events({ count: options.events ?? DEFAULTS.dashboardEvents }).then((e) => {
      commands++
      return e
    }),
  ])

  const live = liveness(replicas, nowMs)
  const chats: DashboardChat[] = []
  chatList.forEach((key, i) => {
    const r = chatHashes[i]
    const rawKey = keys.chat(key).state
    if (r instanceof Error) return corrupt.push({ rawKey: keyText(rawKey), error: r.message })
    if (!r || r.size === 0) return
    let chat: ChatSnapshot
    try {
      chat = decodeChat(key, rawKey, r.fields, r.extra)
    } catch (e) {
      return corrupt.push({ rawKey: keyText(rawKey), error: (e as Error).message })
    }
    const listedCp = cpHashes[i]
    const cp: Hash = listedCp && !(listedCp instanceof Error) ? listedCp.fields : {}
    const health = chatHealth(chat, live, nowMs, { turnWaitMs: options.turnWaitMs })
    chats.push({
      chat,
      checkpoint: cp[CP.flow] ? { flow: cp[CP.flow]!, step: cp[CP.step] ?? '', ephemeral: cp[CP.ephemeral] === '1' } : null,
      health,
      stuck: stuckReasons(health),
      queueLength: health.queueLength,
      oldestWaitMs: health.oldestWaitMs,
    })
  })
  // The stuck first, then the busiest (longest queue, oldest wait), then held ones.
  chats.sort(
    (a, b) =>
      b.stuck.length - a.stuck.length ||
      b.queueLength - a.queueLength ||
      (b.oldestWaitMs ?? -1) - (a.oldestWaitMs ?? -1) ||
      a.chat.key.localeCompare(b.chat.key),
  )
  chats.splice(topChats)

  const providers: LeadSnapshot[] = []
  ;[...leadNames].forEach((name, i) => {
    const r = leadHashes[i]
    const rawKey = keys.lead(name)
    if (r instanceof Error) return corrupt.push({ rawKey: keyText(rawKey), error: r.message })
    if (!r || r.size === 0) return
    try {
      providers.push(decodeLead(name, rawKey, r.fields, r.size))
    } catch (e) {
      corrupt.push({ rawKey: keyText(rawKey), error: (e as Error).message })
    }
  })
  providers.sort((a, b) => a.key.localeCompare(b.key))

  const expiring: DashboardSnapshot['expiring'] = []
  for (const c of chats) {
    const h = c.chat.holder
    if (h && c.chat.fence !== null)
      expiring.push({
        kind: 'chat',
        key: c.chat.key,
        replicaId: h.replicaId,
        fence: c.chat.fence,
        expiresInMs: h.expiresAtMs - nowMs,
        state: c.health.holder!.state,
      })
  }
  for (const p of providers) {
    if (p.holder && p.fence !== null)
      expiring.push({
        kind: 'lead',
        key: p.key,
        replicaId: p.holder.replicaId,
        fence: p.fence,
        expiresInMs: p.holder.expiresAtMs - nowMs,
        state: leaseHealth(p.holder, live, nowMs).state,
      })
  }
  expiring.sort((a, b) => a.expiresInMs - b.expiresInMs)

  return { nowMs, replicas, providers, chats, expiring, events, commands, corrupt }
}
