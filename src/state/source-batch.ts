/**
 * A snapshot's read of one SCAN batch on a live master (RedisSource.batchRead, ./source.ts): the
 * keys' hashes, the PTTL of those flagged and the master's TIME in one pipeline; a hash of many fields
 * by HSCAN pages, and the private fields left out of a record read by their sizes alone.
 */
import type { Redis } from 'ioredis'
import type { RedisClient } from '../connection.js'
import { asError, errorFromRedis } from '../errors/from-redis.js'
import type { RedisKey } from '../keys.js'
import type { Hash } from './source-api.js'
import { runReadScript, walkCommand } from './read-script.js'
import { READ_SNAPSHOT, type SnapshotRead } from '../scripts/registry.js'

/** A hash with more fields than this is read whole by HSCAN pages (HSCAN_PAGE_FIELDS), not by one HGETALL. */
export const WHOLE_READ_MAX_FIELDS = 1000
/**
 * Fields asked per HSCAN page of a bigger hash. Measured on a 2-core machine against a hash of a
 * million fields: a page of 1,000 held Redis 1.6 ms (median) and 5.5 ms at most when idle, past
 * 10 ms when loaded; one of 250 held it 0.45 ms and 1.2 ms.
 */
export const HSCAN_PAGE_FIELDS = 250
/**
 * Fields one read-snapshot-0 call reads at most (about a millisecond of Redis time), and the keys it is
 * given (50 chats or checkpoints: about 0.3 ms; with 100, another client's p99 read 5.9 ms against 4.0 ms
 * during a snapshot of a million chats).
 */
const SNAPSHOT_FIELDS_PER_CALL = 5_000
const SNAPSHOT_KEYS_PER_CALL = 50

export interface BatchRead {
  replies: Array<Hash | Error>
  ttls: Array<number | null>
  nowMs: number
  omitted: Array<Record<string, number> | undefined>
}

type PipelineReplies = Array<[Error | null, unknown]>
/** How each key is read: the fields kept (null: the whole hash), and those whose sizes alone are read. */
type KeyPlan = { kept: string[] | null; left: string[] }

/**
 * A snapshot's batch: the keys' hashes, the PTTL of those flagged, and the master's TIME, in one
 * pipeline on it. A hash of many fields is read by HSCAN pages (manyFields); of a key with `omit[i]`
 * fields (a checkpoint's data, not kept without --include-state) only their sizes are read
 * (HSTRLEN), in `omitted[i]`, never their values. `sent` counts the HSCAN pages.
 */
export async function batchRead(
  conn: Redis,
  keys: RedisKey[],
  withTtl: boolean[],
  omit: Array<readonly string[] | undefined>,
  sent: (n: number) => void,
): Promise<BatchRead> {
  const big = await manyFields(conn, keys)
  const names = await fieldNames(conn, keys, omit, big)
  const pipe = conn.pipeline()
  const plan = keys.map((k, i) => {
    const fields = names.get(i)
    const left = fields ? fields.filter((f) => omit[i]!.includes(f)) : []
    const kept = fields ? fields.filter((f) => !omit[i]!.includes(f)) : []
    if (big.has(k))
      pipe.exists(k) // read by HSCAN pages below
    else if (fields && kept.length) pipe.hmget(k, ...kept)
    else if (fields) pipe.exists(k)
    else pipe.hgetall(k)
    for (const f of left) pipe.hstrlen(k, f)
    if (withTtl[i]) pipe.pttl(k)
    return { kept: fields ? kept : null, left }
  })
  pipe.time()
  const r = ((await pipe.exec()) ?? []) as PipelineReplies
  const paged = await pagedHashes(conn, big, sent)
  return assemble(keys, withTtl, plan, r, paged)
}

/** The field names of the keys whose values are partly left out (a handful of fields each), by key index. */
async function fieldNames(
  conn: Redis,
  keys: RedisKey[],
  omit: Array<readonly string[] | undefined>,
  big: Set<RedisKey>,
): Promise<Map<number, string[]>> {
  const names = new Map<number, string[]>()
  const withOmit = keys.map((k, i) => (omit[i]?.length && !big.has(k) ? i : -1)).filter((i) => i >= 0)
  if (withOmit.length) {
    const pipe = conn.pipeline()
    for (const i of withOmit) pipe.hkeys(keys[i]!)
    const r = (await pipe.exec()) ?? []
    withOmit.forEach((i, n) => {
      const [err, fields] = r[n] ?? [null, null]
      if (!err) names.set(i, fields as string[])
    })
  }
  return names
}

/** The batch's replies, in the order batchRead queued its commands, as what it returns. */
function assemble(keys: RedisKey[], withTtl: boolean[], plan: KeyPlan[], r: PipelineReplies, paged: Map<RedisKey, Hash>): BatchRead {
  const replies: Array<Hash | Error> = []
  const ttls: Array<number | null> = []
  const omitted: Array<Record<string, number> | undefined> = []
  let j = 0
  keys.forEach((k, i) => {
    const [err, h] = r[j++] ?? [null, {}]
    const { kept, left } = plan[i]!
    if (err) replies.push(asError(err))
    else if (paged.has(k)) replies.push(paged.get(k)!)
    else if (kept) {
      const hash: Hash = {}
      if (kept.length) (h as Array<string | null>).forEach((v, n) => v !== null && (hash[kept[n]!] = v))
      replies.push(hash)
    } else replies.push((h ?? {}) as Hash)
    const sizes: Record<string, number> = {}
    for (const f of left) sizes[f] = Number((r[j++] ?? [null, 0])[1])
    omitted.push(left.length ? sizes : undefined)
    if (withTtl[i]) {
      const [terr, t] = r[j++] ?? [null, null]
      ttls.push(terr ? null : (t as number))
    } else ttls.push(null)
  })
  const [terr, time] = r[j] ?? [null, null]
  if (terr || !time) throw errorFromRedis(terr ?? new Error('no TIME reply'), undefined)
  const [s, us] = time as [string, string]
  return { replies, ttls, nowMs: Number(s) * 1000 + Math.floor(Number(us) / 1000), omitted }
}

/**
 * Of `keys`, the hashes with more than WHOLE_READ_MAX_FIELDS fields (one pipeline of HLEN): read whole
 * with one HGETALL, a chat with a million tickets would hold Redis for a second. Another type's key
 * (HLEN refused) is left to the HGETALL, which reports it.
 */
async function manyFields(conn: RedisClient, keys: RedisKey[]): Promise<Set<RedisKey>> {
  const big = new Set<RedisKey>()
  if (keys.length === 0) return big
  const pipe = conn.pipeline()
  for (const k of keys) pipe.hlen(k)
  const lens = (await pipe.exec()) ?? []
  keys.forEach((k, i) => {
    const [err, n] = lens[i] ?? [null, 0]
    if (!err && Number(n) > WHOLE_READ_MAX_FIELDS) big.add(k)
  })
  return big
}

/** Each of these hashes whole, by HSCAN pages of HSCAN_PAGE_FIELDS: no one command holds Redis long. */
async function pagedHashes(conn: RedisClient, keys: Set<RedisKey>, sent: (n: number) => void): Promise<Map<RedisKey, Hash>> {
  const out = new Map<RedisKey, Hash>()
  for (const k of keys) {
    const h: Hash = {}
    let cursor = '0'
    do {
      const [next, flat] = await conn.hscan(k, cursor, 'COUNT', HSCAN_PAGE_FIELDS)
      for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!
      cursor = next
      sent(1)
    } while (cursor !== '0')
    out.set(k, h)
  }
  return out
}

/**
 * A snapshot's batch by read-snapshot-0 calls on the node (a few per batch: each reads at most
 * SNAPSHOT_FIELDS_PER_CALL fields of SNAPSHOT_KEYS_PER_CALL keys), the master's TIME after them; a
 * hash of many fields or a value holding a NUL by pipelines (batchRead). Null when Redis refused the
 * script (`refused` is told why).
 */
export async function scriptedBatchRead(
  conn: Redis,
  keys: RedisKey[],
  withTtl: boolean[],
  omit: Array<readonly string[] | undefined>,
  sent: (n: number) => void,
  refused: (message: string) => void,
): Promise<BatchRead | null> {
  const scripted = await readSnapshot(conn, keys, withTtl, omit, sent, refused)
  if (!scripted) return null
  const again = keys.map((_, i) => i).filter((i) => scripted[i] === null || scripted[i] === 'many')
  const rest = again.length
    ? await batchRead(
        conn,
        again.map((i) => keys[i]!),
        again.map((i) => withTtl[i]!),
        again.map((i) => omit[i]),
        sent,
      )
    : null
  const [s, us] = await conn.time()
  const out: Omit<BatchRead, 'nowMs'> = { replies: [], ttls: [], omitted: [] }
  let j = 0
  scripted.forEach((r, i) => {
    if (r === null || r === 'many') {
      out.replies.push(rest!.replies[j]!)
      out.ttls.push(rest!.ttls[j]!)
      out.omitted.push(rest!.omitted[j++])
    } else if (r === 'wrongtype' || r === 'later') {
      out.replies.push(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))
      out.ttls.push(null)
      out.omitted.push(undefined)
    } else {
      out.replies.push(r.hash)
      out.ttls.push(withTtl[i] ? r.ttl : null)
      out.omitted.push(omit[i]?.length && Object.keys(r.omitted).length ? r.omitted : undefined)
    }
  })
  return { ...out, nowMs: Number(s) * 1000 + Math.floor(Number(us) / 1000) }
}

/** read-snapshot-0 on one node until every key is answered (keys past a call's budget go in the next call); null when Redis refused it. */
async function readSnapshot(
  n: Redis,
  keys: RedisKey[],
  withTtl: boolean[],
  omit: Array<readonly string[] | undefined>,
  sent: (n: number) => void,
  refused: (message: string) => void,
): Promise<SnapshotRead[] | null> {
  const out: SnapshotRead[] = new Array<SnapshotRead>(keys.length).fill('later')
  let pending = keys.map((_, i) => i)
  while (pending.length) {
    // The calls of a round are asked for together, at most WALK_IN_FLIGHT at a host's servers: Redis
    // runs the next while this process decodes one, and other clients' commands wait behind two at most.
    const calls: number[][] = []
    for (let s = 0; s < pending.length; s += SNAPSHOT_KEYS_PER_CALL) calls.push(pending.slice(s, s + SNAPSHOT_KEYS_PER_CALL))
    const answers = await Promise.all(
      calls.map((call) => {
        const argv: Array<string | Buffer> = [String(SNAPSHOT_FIELDS_PER_CALL), String(WHOLE_READ_MAX_FIELDS)]
        for (const i of call) argv.push(keys[i]!, withTtl[i] ? '1' : '0', (omit[i] ?? []).join(','))
        sent(1)
        return walkCommand(n, () => runReadScript(n, READ_SNAPSHOT.name, [], argv))
      }),
    )
    for (const [c, answer] of answers.entries()) {
      // Redis said no (an ACL user without EVALSHA, scripting off): this batch by pipelines.
      if ('refused' in answer) {
        refused(answer.refused)
        return null
      }
      const answered = READ_SNAPSHOT.decode(answer.reply, READ_SNAPSHOT.name)
      calls[c]!.forEach((i, k) => (out[i] = answered[k] ?? null))
    }
    // A call reads at least its first hash, so each round answers some of the keys.
    pending = pending.filter((i) => out[i] === 'later')
  }
  return out
}
