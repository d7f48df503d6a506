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

/** A hash with more fields than this is read whole by HSCAN pages of this many, not by one HGETALL. */
export const WHOLE_READ_MAX_FIELDS = 1000

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

/** Each of these hashes whole, by HSCAN pages of WHOLE_READ_MAX_FIELDS: no one command holds Redis long. */
async function pagedHashes(conn: RedisClient, keys: Set<RedisKey>, sent: (n: number) => void): Promise<Map<RedisKey, Hash>> {
  const out = new Map<RedisKey, Hash>()
  for (const k of keys) {
    const h: Hash = {}
    let cursor = '0'
    do {
      const [next, flat] = await conn.hscan(k, cursor, 'COUNT', WHOLE_READ_MAX_FIELDS)
      for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!
      cursor = next
      sent(1)
    } while (cursor !== '0')
    out.set(k, h)
  }
  return out
}
