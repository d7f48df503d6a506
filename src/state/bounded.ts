/**
 * What a listing reads of each key, bounded whatever a hash holds (docs/redis-layout.md, "Reading
 * without blocking Redis"): the named fields of its kind (HMGET), its field count (HLEN), and — by
 * kind — the head of a chat's queue with those tickets' fields, a page of a lead's candidates, or the
 * size of a checkpoint's or marker's data (HSTRLEN) instead of the data. Never a whole hash: a chat
 * with a million queued tickets, a lead with a hundred thousand candidates or a checkpoint of 200 MB
 * cost a listing what small ones do. The field tables are here, once, for the script
 * (lua/read-listing-0.lua), its pipelined fallback below, and the recorded answers (./records.ts).
 */
import type { ChainableCommander } from 'ioredis'
import type { KeyKind, RedisKey } from '../keys.js'
import { asError } from '../errors/from-redis.js'
import { CHAT_FIELDS as C } from '../wire/chat.js'
import { CHECKPOINT_FIELDS, HANDOVER_FIELDS, LEAD_FIELDS, LOCK_FIELDS, REPLICA_FIELDS } from '../wire/hashes.js'
type Hash = Record<string, string>

/** What a listing read of one key: the fields it read, the hash's field count, and its mode's number. */
export interface ListedHash {
  fields: Hash
  /** HLEN (0: the key is gone). */
  size: number
  /** 'chat': the queue's length (ZCARD; -1 a queue of another type); a measured field: its length; else 0. */
  extra: number
}

/** What one key of a kind is read as. */
export interface ListingPlan {
  /** 'chat': with its queue's head; 'lead': with a page of candidates; 'hash': named fields only. */
  mode: 'chat' | 'lead' | 'hash'
  fields: readonly string[]
  /** 'chat': tickets read from the head of the queue; 'lead': candidates read (at least, when there are that many). */
  limit: number
  /** A field whose length is read (HSTRLEN) instead of its value, or null. */
  measure: string | null
  /** 'chat': tickets read too wherever they stand in the queue (the one an operator named). */
  also?: string[]
}

/** Tickets a listing reads per chat (from the head of its queue): what its state, oldest wait and stale count are judged on. */
export const LISTING_TICKETS = 16
/** Candidates a listing reads per lead (its standbys). */
export const LISTING_CANDIDATES = 100
/** Tickets `chat inspect` shows (and reads) by default; `--tickets` changes it up to MAX_INSPECT_TICKETS. */
export const INSPECT_TICKETS = 100
export const MAX_INSPECT_TICKETS = 2000
/** Candidates `provider status` reads and shows. */
export const INSPECT_CANDIDATES = 1000

/** The chat hash's fields other than the per-ticket ones (wire/chat.ts names them). */
export const CHAT_NAMED: readonly string[] = [
  C.lastTicket,
  C.fence,
  C.holder,
  C.holderIncarnation,
  C.holderTicket,
  C.expiresAt,
  C.grantedAt,
  C.lastRenewal,
  C.waited,
  C.lastHolder,
  C.lastHolderIncarnation,
  C.previousHolder,
  C.previousHolderIncarnation,
  C.skipped,
  C.holderRequest,
  C.offered,
]
/** A lead's fields other than its candidates (`c:<incarnation>`). */
export const LEAD_NAMED: readonly string[] = Object.values(LEAD_FIELDS).filter((f) => f !== LEAD_FIELDS.candidatePrefix)
const LOCK_NAMED: readonly string[] = Object.values(LOCK_FIELDS)
/** A checkpoint's fields but its data `d` (measured instead). */
export const CHECKPOINT_NAMED: readonly string[] = Object.values(CHECKPOINT_FIELDS).filter((f) => f !== CHECKPOINT_FIELDS.data)
/** A handover marker's fields but its data `d` (measured instead). */
export const HANDOVER_NAMED: readonly string[] = Object.values(HANDOVER_FIELDS).filter((f) => f !== HANDOVER_FIELDS.data)
const REPLICA_NAMED: readonly string[] = Object.values(REPLICA_FIELDS)

/** The plan of a listing of `kind` (null: a kind no listing reads as a hash). */
export function listingPlan(kind: KeyKind, o: { tickets?: number; candidates?: number } = {}): ListingPlan | null {
  switch (kind) {
    case 'chat':
      return { mode: 'chat', fields: CHAT_NAMED, limit: o.tickets ?? LISTING_TICKETS, measure: null }
    case 'lead':
      return { mode: 'lead', fields: LEAD_NAMED, limit: o.candidates ?? LISTING_CANDIDATES, measure: null }
    case 'lock':
      return { mode: 'hash', fields: LOCK_NAMED, limit: 0, measure: null }
    case 'checkpoint':
      return { mode: 'hash', fields: CHECKPOINT_NAMED, limit: 0, measure: CHECKPOINT_FIELDS.data }
    case 'handover':
      return { mode: 'hash', fields: HANDOVER_NAMED, limit: 0, measure: HANDOVER_FIELDS.data }
    case 'replica':
      return { mode: 'hash', fields: REPLICA_NAMED, limit: 0, measure: null }
    default:
      return null
  }
}

/** read-listing-0's ARGV after its two fixed ones: the fields, the limit, the measured field, the keys. */
export function listingArgv(plan: ListingPlan, items: Array<{ key: RedisKey; queue?: RedisKey }>): Array<string | RedisKey> {
  const argv: Array<string | RedisKey> = [plan.mode, String(plan.fields.length), ...plan.fields, String(plan.limit), plan.measure ?? '']
  for (const it of items) {
    argv.push(it.key)
    if (plan.mode === 'chat') argv.push(it.queue ?? '')
  }
  return argv
}

/** The incarnation of a ticket field's value (`deadline|enqueuedAt|incarnation|replicaId`), or null. */
function ticketIncarnation(value: string): string | null {
  const m = /^\d+\|\d+\|([^|]*)\|/.exec(value)
  return m ? m[1]! : null
}

/**
 * A listing's read of a hash held whole (a snapshot's record, a hash read before): the same answer
 * the script gives, with `queue` the chat's queued tickets in order (null: the hash's own t: fields).
 */
export function listFromHash(h: Hash, plan: ListingPlan, queue: string[] | null = null): ListedHash {
  const fields: Hash = {}
  for (const f of plan.fields) if (h[f] !== undefined) fields[f] = h[f]!
  let size = 0
  for (const _ in h) size++
  let extra = plan.measure !== null ? Buffer.byteLength(h[plan.measure] ?? '') : 0
  if (plan.mode === 'chat') {
    const all =
      queue ??
      Object.keys(h)
        .filter((f) => f.startsWith(C.ticketPrefix))
        .map((f) => f.slice(C.ticketPrefix.length))
        .sort((a, b) => Number(a) - Number(b))
    extra = all.length
    const page = all.slice(0, plan.limit)
    for (const t of plan.also ?? []) if (!page.includes(t) && all.includes(t)) page.push(t)
    for (const t of page) {
      for (const f of [C.ticketPrefix + t, C.ticketRequestPrefix + t]) if (h[f] !== undefined) fields[f] = h[f]!
      const inc = h[C.ticketPrefix + t] === undefined ? null : ticketIncarnation(h[C.ticketPrefix + t]!)
      const w = inc === null ? undefined : h[C.waiterPrefix + inc]
      if (w !== undefined) fields[C.waiterPrefix + inc] = w
    }
  } else if (plan.mode === 'lead') {
    let n = 0
    for (const f in h) if (f.startsWith(LEAD_FIELDS.candidatePrefix) && n++ < plan.limit) fields[f] = h[f]!
  }
  return { fields, size, extra }
}

/** A connection that pipelines: a node, or the client for keys of one slot. */
interface Pipelining {
  pipeline(): ChainableCommander
}

/**
 * The script's answer without the script (an ACL user without EVALSHA, a value holding a NUL, the
 * dashboard's reads through the client): the same bounded commands in up to three pipelined rounds —
 * the named fields, sizes and the queue's head; those tickets' fields; their incarnations' w: fields.
 * A key's failure (WRONGTYPE…) is its Error.
 */
export async function listPipelined(
  conn: Pipelining,
  items: Array<{ key: RedisKey; queue?: RedisKey }>,
  plan: ListingPlan,
): Promise<Array<ListedHash | Error>> {
  const per = 2 + (plan.mode === 'chat' ? 2 : plan.mode === 'lead' ? 1 : 0) + (plan.measure !== null ? 1 : 0)
  const first = conn.pipeline()
  for (const it of items) {
    first.hlen(it.key)
    first.hmget(it.key, ...plan.fields)
    if (plan.mode === 'chat') {
      first.zcard(it.queue ?? '')
      first.zrange(it.queue ?? '', 0, String(Math.max(0, plan.limit - 1)))
    } else if (plan.mode === 'lead') first.hscan(it.key, '0', 'MATCH', `${LEAD_FIELDS.candidatePrefix}*`, 'COUNT', String(plan.limit))
    if (plan.measure !== null) first.hstrlen(it.key, plan.measure)
  }
  const r = (await first.exec()) ?? []
  const out: Array<ListedHash | Error> = []
  const tickets: Array<string[]> = []
  /** A lead's candidate scan: where it stands and how many it found. */
  const cursors = new Map<number, { cursor: string; found: number }>()
  items.forEach((_, i) => {
    const at = (j: number) => r[i * per + j] ?? [new Error('no reply'), null]
    const [e0, size] = at(0)
    const [e1, values] = at(1)
    if (e0 || e1) return (out.push(asError(e0 ?? e1)), tickets.push([]))
    const fields: Hash = {}
    ;(values as Array<string | null>).forEach((v, j) => {
      if (v !== null) fields[plan.fields[j]!] = v
    })
    let extra = 0
    let next = 2
    let queued: string[] = []
    if (plan.mode === 'chat') {
      const [ez, n] = at(next++)
      const [, ids] = at(next++)
      extra = ez ? -1 : Number(n)
      queued = ez || !Array.isArray(ids) || plan.limit <= 0 ? [] : (ids as string[])
    } else if (plan.mode === 'lead') {
      const [, scan] = at(next++)
      const pairs = Array.isArray(scan) ? ((scan as [string, string[]])[1] ?? []) : []
      for (let j = 0; j + 1 < pairs.length; j += 2) fields[pairs[j]!] = pairs[j + 1]!
      if (Array.isArray(scan)) cursors.set(i, { cursor: String(scan[0]), found: pairs.length / 2 })
    }
    if (plan.measure !== null) {
      const [em, len] = at(next++)
      if (!em) extra = Number(len)
    }
    tickets.push(queued)
    out.push({ fields, size: Number(size), extra })
  })
  // COUNT is a hint: like the script, more HSCAN pages (at most 4 calls in all) until `limit` candidates are read.
  for (let call = 1; plan.mode === 'lead' && call < 4; call++) {
    const more = [...cursors].filter(([i, c]) => c.cursor !== '0' && c.found < plan.limit && !(out[i] instanceof Error))
    if (more.length === 0) break
    const p = conn.pipeline()
    for (const [i] of more)
      p.hscan(items[i]!.key, cursors.get(i)!.cursor, 'MATCH', `${LEAD_FIELDS.candidatePrefix}*`, 'COUNT', String(plan.limit))
    const rr = (await p.exec()) ?? []
    more.forEach(([i, c], n) => {
      const [err, scan] = rr[n] ?? [new Error('no reply'), null]
      if (err || !Array.isArray(scan)) return void (c.cursor = '0')
      const pairs = (scan as [string, string[]])[1] ?? []
      const listed = out[i] as ListedHash
      for (let j = 0; j + 1 < pairs.length; j += 2) listed.fields[pairs[j]!] = pairs[j + 1]!
      c.cursor = String(scan[0])
      c.found += pairs.length / 2
    })
  }
  if (plan.mode !== 'chat' || (tickets.every((t) => t.length === 0) && !plan.also?.length)) return out
  // The head tickets' fields, then the w: fields of their incarnations.
  for (const round of ['tickets', 'waiters'] as const) {
    const asked: Array<string[]> = items.map((_, i) => {
      const o = out[i]!
      if (o instanceof Error) return []
      if (round === 'tickets') {
        for (const t of plan.also ?? []) if (!tickets[i]!.includes(t)) tickets[i]!.push(t)
        return tickets[i]!.flatMap((t) => [C.ticketPrefix + t, C.ticketRequestPrefix + t])
      }
      const incs = new Set<string>()
      for (const t of tickets[i]!) {
        const v = o.fields[C.ticketPrefix + t]
        const inc = v === undefined ? null : ticketIncarnation(v)
        if (inc !== null) incs.add(C.waiterPrefix + inc)
      }
      return [...incs]
    })
    const p = conn.pipeline()
    items.forEach((it, i) => {
      if (asked[i]!.length) p.hmget(it.key, ...asked[i]!)
    })
    const rr = (await p.exec()) ?? []
    let j = 0
    items.forEach((_, i) => {
      if (!asked[i]!.length) return
      const [err, values] = rr[j++] ?? [null, null]
      const o = out[i]!
      if (err || o instanceof Error || !Array.isArray(values)) return
      ;(values as Array<string | null>).forEach((v, k) => {
        if (v !== null) o.fields[asked[i]![k]!] = v
      })
    })
  }
  return out
}
