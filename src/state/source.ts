/**
 * Where the read side's answers come from. Every read of the CLI and the dashboard asks a
 * `StateSource` a small set of questions (Redis's clock, a SCAN batch, hashes, the replica index, one
 * chat's keys, a range of the event stream, a server probe); `RedisSource` asks a live Redis, and
 * `RecordedSource` (./records.ts) answers the same questions from a snapshot or a recording. The
 * reader, the dashboard read and the decoders above them are one code path for both.
 */
import type { Redis } from 'ioredis'
import { isCluster, masters, type RedisClient } from '../connection.js'
import { asError, errorFromRedis, isConnectionError } from '../errors/from-redis.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import type { ChatKeys, RedisKey } from '../keys.js'
import { slotOwners, type SlotOwner } from './coverage.js'
import { loadScript } from '../scripts/load.js'
import { READ_CHAT, READ_LISTING, READ_SNAPSHOT, type SnapshotRead } from '../scripts/registry.js'
import { INSPECT_TICKETS, listPipelined, listingArgv, listingPlan, type ListedHash, type ListingPlan } from './bounded.js'

export type Hash = Record<string, string>
export type StreamEntry = [id: string, fields: string[]]

/** What `doctor` asks each master about its configuration. */
export const PROBES = ['info', 'maxmemory-policy', 'save', 'cluster-info'] as const
export type ProbeName = (typeof PROBES)[number]

/** What `chat()` reads of a chat's queue and checkpoint: never all of a long queue, nor a checkpoint's data unless asked. */
export interface ChatReadOptions {
  /** Tickets read from the head of the queue. Default INSPECT_TICKETS (./bounded.ts). */
  tickets?: number
  /** A ticket read too, wherever it stands in the queue (the one an operator names). */
  ticket?: number
  /** Read the checkpoint's data `d` (its state and saved answer); otherwise only its length. */
  checkpointData?: boolean
}

/** One chat's keys read together (one slot): the raw replies, each an error or its value. */
export interface ChatRaw {
  /** The chat hash's named fields and the fields of the tickets read (./bounded.ts). */
  state: Hash | Error
  /** Tickets queued (ZCARD of the queue; -1 a queue of another type). */
  queued: number
  checkpoint: Hash | Error
  /** The length of the checkpoint's data when it was not read (null: read, or no checkpoint). */
  checkpointDataBytes: number | null
  /** PTTL of the checkpoint (-1 none, -2 no key). */
  checkpointTtl: number | Error
  handover: Hash | Error
  handoverTtl: number | Error
  /** Redis's clock when read (ms). */
  nowMs: number
}

export interface StateSource {
  /** 'redis' for a live server; 'recorded' for a snapshot or a recording. */
  readonly origin: 'redis' | 'recorded'
  /** Redis commands sent so far by hashes(), where it knows (one per batch when read by a script). */
  readonly hashCommands?: number
  /** The masters to walk (one for a standalone server). */
  nodeCount(): Promise<number>
  /** `host:port` of a master, for reports. */
  nodeName(node: number): string
  /** Redis's clock (ms), from the first master. */
  time(): Promise<number>
  /** One SCAN batch on one master: the keys as bytes, and the next cursor ('0' once done). */
  scan(node: number, cursor: string, pattern: string, count: number): Promise<{ cursor: string; keys: Buffer[] }>
  /**
   * Hashes of keys that one pipeline reads: on `node` (a SCAN batch), or, with `node` null, through the
   * client (keys of one slot). `fields[i]` reads only those fields of key i. A key's failure is its Error.
   */
  hashes(node: number | null, keys: RedisKey[], fields?: Array<string[] | undefined>): Promise<Array<Hash | Error>>
  /**
   * What a listing shows of keys of one kind (./bounded.ts): named fields, sizes, a chat's queue head, a
   * lead's candidates — bounded whatever the hashes hold. On `node` (a SCAN batch), or, with `node`
   * null, through the client (keys of one slot). A key's failure is its Error.
   */
  listing(node: number | null, items: Array<{ key: RedisKey; queue?: RedisKey }>, plan: ListingPlan): Promise<Array<ListedHash | Error>>
  hgetall(key: RedisKey): Promise<Hash>
  /** Members of a sorted set, lowest score first. */
  zrange(key: RedisKey): Promise<string[]>
  /** One chat — its turn and the head of its queue, checkpoint, handover marker — in one round trip (two or three for a queue). */
  chat(keys: ChatKeys, options?: ChatReadOptions): Promise<ChatRaw>
  /** XRANGE key start end COUNT count. */
  xrange(key: string, start: string, end: string, count: number): Promise<StreamEntry[]>
  /** XREVRANGE key end start COUNT count. */
  xrevrange(key: string, end: string, start: string, count: number): Promise<StreamEntry[]>
  /** A master's answer to a configuration probe (INFO, CONFIG GET …, CLUSTER INFO); rejects as Redis refused it. */
  probe(node: number, what: ProbeName): Promise<string>
  /**
   * A Redis Cluster only (absent elsewhere): the slot owners as the cluster sees them now (CLUSTER
   * SLOTS from any node that answers; null when none does), and a key's slot — what a read compares
   * the masters it reached with (./coverage.ts).
   */
  slotOwners?(): Promise<SlotOwner[] | null>
  keySlot?(key: string): Promise<number | null>
  /** How many keys a master holds, every prefix's (DBSIZE): what a full walk reads at most. A live Redis only. */
  keyCount?(node: number): Promise<number>
}

const keyName = (k: RedisKey): string => (typeof k === 'string' ? k : k.toString('latin1'))

/** Keys per read-listing-0 call (a chat of a SCAN batch costs about 15 µs of Redis time in it). */
const LISTING_KEYS_PER_CALL = 250

/** The live source: ioredis on a standalone server or every master of a Cluster. */
/** A hash with more fields than this is read whole by HSCAN pages of this many, not by one HGETALL. */
export const WHOLE_READ_MAX_FIELDS = 1000
/** Fields one read-snapshot-0 call reads at most (about a millisecond of Redis time), and the keys it is given. */
const SNAPSHOT_FIELDS_PER_CALL = 5_000
const SNAPSHOT_KEYS_PER_CALL = 250

export class RedisSource implements StateSource {
  readonly origin = 'redis' as const
  readonly redis: RedisClient
  hashCommands = 0
  /** read-listing-0 was refused here (an ACL user without EVALSHA, scripting off): pipelines from now on. */
  private scriptRefused = false

  constructor(redis: RedisClient) {
    this.redis = redis
    if (isCluster(redis)) {
      // Asked of the masters first, then the replicas: any node that answers knows the slot map.
      const anyNode = async <T>(ask: (n: Redis) => Promise<T>): Promise<T | null> => {
        for (const node of [...redis.nodes('master'), ...redis.nodes('slave')]) {
          try {
            return await ask(node)
          } catch {
            // the next node
          }
        }
        return null
      }
      this.slotOwners = async () => {
        const reply = await anyNode((n) => n.call('CLUSTER', 'SLOTS'))
        return reply === null ? null : slotOwners(reply)
      }
      this.keySlot = async (key: string) => {
        const slot = await anyNode((n) => n.call('CLUSTER', 'KEYSLOT', key))
        return slot === null ? null : Number(slot)
      }
    }
  }

  slotOwners?: () => Promise<SlotOwner[] | null>
  keySlot?: (key: string) => Promise<number | null>

  private get client(): Redis {
    return this.redis as Redis
  }

  /**
   * The masters. A Cluster client knows its nodes only once it loaded the slots (until then it may
   * list just its startup node): a first keyless command, queued until the client is ready, makes sure of it.
   */
  async nodes(): Promise<Redis[]> {
    const cluster = this.redis
    if (isCluster(cluster) && (cluster.status !== 'ready' || cluster.nodes('master').length === 0)) {
      // Ready once the slots are loaded. A keyless command would do too, but it goes to a random
      // master, which may be the one that is down while its replica is not yet promoted.
      await new Promise<void>((resolve, reject) => {
        if (cluster.status === 'ready') return resolve()
        const onReady = () => (cluster.off('end', onEnd), resolve())
        const onEnd = () => (cluster.off('ready', onReady), reject(new Error('Connection is closed.')))
        cluster.once('ready', onReady)
        cluster.once('end', onEnd)
      })
    }
    return masters(this.redis)
  }

  async nodeCount(): Promise<number> {
    return (await this.nodes()).length
  }

  nodeName(node: number): string {
    const n = masters(this.redis)[node]
    if (!n) return `node ${node}`
    // Through sentinels the options name no server: the address the connection reached does.
    const stream = (n as unknown as { stream?: { remoteAddress?: string; remotePort?: number } }).stream
    if (n.options.sentinels && stream?.remoteAddress) return `${stream.remoteAddress}:${stream.remotePort}`
    return `${n.options.host}:${n.options.port}`
  }

  private async node(i: number): Promise<Redis> {
    const n = (await this.nodes())[i]
    // A master the client dropped meanwhile (its connection ended: down, failing over) is one that does not answer.
    if (!n) throw new CoordinationUnavailableError('unreachable', `no master ${i}: the cluster changed during the read`)
    return n
  }

  /** Redis's clock: of the first master that answers (on a Cluster one may be down, failing over). */
  async time(): Promise<number> {
    const nodes = await this.nodes()
    let first: unknown
    for (const node of nodes.length ? nodes : [await this.node(0)]) {
      try {
        const [s, us] = await node.time()
        return Number(s) * 1000 + Math.floor(Number(us) / 1000)
      } catch (err) {
        first ??= err
        if (!isCluster(this.redis) || !isConnectionError(err)) throw err
      }
    }
    throw first
  }

  async keyCount(node: number): Promise<number> {
    return Number(await (await this.node(node)).dbsize())
  }

  async scan(node: number, cursor: string, pattern: string, count: number): Promise<{ cursor: string; keys: Buffer[] }> {
    const [next, keys] = await (await this.node(node)).scanBuffer(cursor, 'MATCH', pattern, 'COUNT', count)
    return { cursor: String(next), keys }
  }

  /** Hashes read whole (HGETALL), or only `fields[i]` of key i (HMGET), with one pipeline. */
  async hashes(node: number | null, keys: RedisKey[], fields?: Array<string[] | undefined>): Promise<Array<Hash | Error>> {
    if (keys.length === 0) return []
    return this.pipelined(node, keys, fields)
  }

  /**
   * A SCAN batch's listing comes from one read-listing-0 call on its node; a key it cannot carry (a
   * value holding a NUL), a batch whose script Redis refused, or keys read through the client, from
   * the same bounded commands pipelined (./bounded.ts).
   */
  async listing(
    node: number | null,
    items: Array<{ key: RedisKey; queue?: RedisKey }>,
    plan: ListingPlan,
  ): Promise<Array<ListedHash | Error>> {
    if (items.length === 0) return []
    // Chats read through the client (the dashboard): one script call each, routed by its keys.
    if (node === null && plan.mode === 'chat') return Promise.all(items.map((it) => this.chatState(it, plan)))
    const conn = node === null ? this.client : await this.node(node)
    if (node !== null && !this.scriptRefused) {
      // A few hundred keys per call: each call stays a few milliseconds of Redis time, whatever the SCAN batch.
      const chunks: Array<typeof items> = []
      for (let i = 0; i < items.length; i += LISTING_KEYS_PER_CALL) chunks.push(items.slice(i, i + LISTING_KEYS_PER_CALL))
      const parts = await Promise.all(chunks.map((c) => this.readListing(conn, c, plan)))
      const read = parts.some((p) => p === null) ? null : parts.flatMap((p) => p!)
      if (read) {
        const again = items.filter((_, i) => read[i] === null)
        if (again.length === 0) return read as Array<ListedHash | Error>
        this.hashCommands += again.length
        const more = await listPipelined(conn, again, plan)
        let j = 0
        return read.map((h) => h ?? more[j++]!)
      }
    }
    this.hashCommands += items.length
    return listPipelined(conn, items, plan)
  }

  /** One chat's turn and queue head: read-chat-2 through the client (EVAL after NOSCRIPT), or pipelined where the script cannot serve. */
  private async chatState(item: { key: RedisKey; queue?: RedisKey }, plan: ListingPlan): Promise<ListedHash | Error> {
    const pipelined = async () => {
      this.hashCommands++
      return (await listPipelined(this.client, [item], plan))[0]!
    }
    if (this.scriptRefused || !item.queue) return pipelined()
    const script = loadScript(READ_CHAT.name)
    const args = [String(plan.limit), plan.also?.[0] ?? '', String(plan.fields.length), ...plan.fields]
    this.hashCommands++
    let reply: unknown
    try {
      try {
        reply = await this.client.evalsha(script.sha, 2, item.key, item.queue, ...args)
      } catch (err) {
        if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err
        reply = await this.client.eval(script.source, 2, item.key, item.queue, ...args)
      }
    } catch (err) {
      if ((err as Error)?.name !== 'ReplyError') throw err
      this.scriptRefused = /NOPERM|unknown command|disabled/i.test((err as Error).message)
      return pipelined()
    }
    const h = READ_CHAT.decode(reply as never, keyName(item.key))
    if (h === 'wrongtype') return new Error('WRONGTYPE Operation against a key holding the wrong kind of value')
    return h ?? pipelined()
  }

  /** read-listing-0 on one node (EVAL after NOSCRIPT); null when Redis refused the script. */
  private async readListing(
    n: Redis,
    items: Array<{ key: RedisKey; queue?: RedisKey }>,
    plan: ListingPlan,
  ): Promise<Array<ListedHash | Error | null> | null> {
    const script = loadScript(READ_LISTING.name)
    const argv = listingArgv(plan, items)
    this.hashCommands++
    let reply: unknown
    try {
      try {
        reply = await n.evalsha(script.sha, 0, ...argv)
      } catch (err) {
        if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err
        reply = await n.eval(script.source, 0, ...argv)
      }
    } catch (err) {
      // Redis said no (an ACL user without EVALSHA, scripting off, a slot moving or failing over): this
      // batch with pipelined commands, which answer key by key; the rest too when the script itself is refused.
      if ((err as Error)?.name !== 'ReplyError') throw err
      this.scriptRefused = /NOPERM|unknown command|disabled/i.test((err as Error).message)
      return null
    }
    return READ_LISTING.decode(reply, READ_LISTING.name).map((h) =>
      h === 'wrongtype' ? new Error('WRONGTYPE Operation against a key holding the wrong kind of value') : h,
    )
  }

  private async pipelined(node: number | null, keys: RedisKey[], fields?: Array<string[] | undefined>): Promise<Array<Hash | Error>> {
    this.hashCommands += keys.length
    const pipe = (node === null ? this.client : await this.node(node)).pipeline()
    keys.forEach((k, i) => {
      const f = fields?.[i]
      if (f) pipe.hmget(k, ...f)
      else pipe.hgetall(k)
    })
    const replies = (await pipe.exec()) ?? []
    return keys.map((_, i) => {
      const [err, reply] = replies[i] ?? [null, null]
      if (err) return asError(err)
      const f = fields?.[i]
      if (!f) return (reply ?? {}) as Hash
      const h: Hash = {}
      ;(reply as Array<string | null>).forEach((v, j) => {
        if (v !== null) h[f[j]!] = v
      })
      return h
    })
  }

  /**
   * A snapshot's batch: the keys' hashes, the PTTL of those flagged, and the master's TIME after
   * them. Of a key with `omit[i]` fields (a checkpoint's data, not kept without --include-state) only
   * their sizes are read (HSTRLEN), in `omitted[i]`, never their values. Read by read-snapshot-0 calls
   * on the node (a few per batch: each reads at most SNAPSHOT_FIELDS_PER_CALL fields); a hash of many
   * fields, a value holding a NUL, or a node that refuses the script, by pipelines (batchPipelined).
   */
  async batchRead(
    node: number,
    keys: RedisKey[],
    withTtl: boolean[],
    omit: Array<readonly string[] | undefined> = [],
  ): Promise<{
    replies: Array<Hash | Error>
    ttls: Array<number | null>
    nowMs: number
    omitted: Array<Record<string, number> | undefined>
  }> {
    const conn = await this.node(node)
    const scripted = this.scriptRefused ? null : await this.readSnapshot(conn, keys, withTtl, omit)
    if (!scripted) return this.batchPipelined(conn, keys, withTtl, omit)
    const again = keys.map((_, i) => i).filter((i) => scripted[i] === null || scripted[i] === 'many')
    const rest = again.length
      ? await this.batchPipelined(
          conn,
          again.map((i) => keys[i]!),
          again.map((i) => withTtl[i]!),
          again.map((i) => omit[i]),
        )
      : null
    const [s, us] = await conn.time()
    const out = {
      replies: [] as Array<Hash | Error>,
      ttls: [] as Array<number | null>,
      omitted: [] as Array<Record<string, number> | undefined>,
    }
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

  /**
   * read-snapshot-0 on one node until every key is answered (keys past a call's budget go in the
   * next call); null when Redis refused the script (this batch, and the rest when it is refused for good, by pipelines).
   */
  private async readSnapshot(
    n: Redis,
    keys: RedisKey[],
    withTtl: boolean[],
    omit: Array<readonly string[] | undefined>,
  ): Promise<SnapshotRead[] | null> {
    const script = loadScript(READ_SNAPSHOT.name)
    const out: SnapshotRead[] = new Array<SnapshotRead>(keys.length).fill('later')
    let pending = keys.map((_, i) => i)
    while (pending.length) {
      const argv: Array<string | Buffer> = [String(SNAPSHOT_FIELDS_PER_CALL), String(WHOLE_READ_MAX_FIELDS)]
      for (const i of pending.slice(0, SNAPSHOT_KEYS_PER_CALL)) argv.push(keys[i]!, withTtl[i] ? '1' : '0', (omit[i] ?? []).join(','))
      this.hashCommands++
      let reply: unknown
      try {
        try {
          reply = await n.evalsha(script.sha, 0, ...argv)
        } catch (err) {
          if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err
          reply = await n.eval(script.source, 0, ...argv)
        }
      } catch (err) {
        if ((err as Error)?.name !== 'ReplyError') throw err
        this.scriptRefused = /NOPERM|unknown command|disabled/i.test((err as Error).message)
        return null
      }
      const answered = READ_SNAPSHOT.decode(reply, READ_SNAPSHOT.name)
      pending.slice(0, SNAPSHOT_KEYS_PER_CALL).forEach((i, k) => (out[i] = answered[k] ?? null))
      // A call reads at least one hash, so each round answers some of the keys.
      pending = pending.filter((i) => out[i] === 'later')
    }
    return out
  }

  /**
   * A snapshot's batch by pipelines (a node that refuses read-snapshot-0, and the keys it cannot
   * carry): the keys' hashes, the PTTL of those flagged, and the master's TIME, in one pipeline on
   * it. A hash of many fields is read by HSCAN pages (manyFields).
   */
  private async batchPipelined(
    conn: Redis,
    keys: RedisKey[],
    withTtl: boolean[],
    omit: Array<readonly string[] | undefined> = [],
  ): Promise<{
    replies: Array<Hash | Error>
    ttls: Array<number | null>
    nowMs: number
    omitted: Array<Record<string, number> | undefined>
  }> {
    const big = await this.manyFields(conn, keys)
    // The field names of the keys whose values are partly left out (a handful of fields each).
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
    const r = (await pipe.exec()) ?? []
    const paged = await this.pagedHashes(conn, big)
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
  private async manyFields(conn: RedisClient, keys: RedisKey[]): Promise<Set<RedisKey>> {
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
  private async pagedHashes(conn: RedisClient, keys: Set<RedisKey>): Promise<Map<RedisKey, Hash>> {
    const out = new Map<RedisKey, Hash>()
    for (const k of keys) {
      const h: Hash = {}
      let cursor = '0'
      do {
        const [next, flat] = await conn.hscan(k, cursor, 'COUNT', WHOLE_READ_MAX_FIELDS)
        for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!
        cursor = next
        this.hashCommands++
      } while (cursor !== '0')
      out.set(k, h)
    }
    return out
  }

  hgetall(key: RedisKey): Promise<Hash> {
    return this.client.hgetall(key)
  }

  zrange(key: RedisKey): Promise<string[]> {
    return this.client.zrange(key, '0', '-1')
  }

  async chat(k: ChatKeys, o: ChatReadOptions = {}): Promise<ChatRaw> {
    const plan = { ...listingPlan('chat', { tickets: o.tickets ?? INSPECT_TICKETS })!, also: o.ticket ? [String(o.ticket)] : undefined }
    const cpPlan = listingPlan('checkpoint')!
    // One pipeline: a Cluster client routes it by the first key's slot, which all keys of a chat share.
    const pipe = this.client.pipeline()
    if (o.checkpointData) pipe.hgetall(k.checkpoint)
    else pipe.hmget(k.checkpoint, ...cpPlan.fields)
    pipe.pttl(k.checkpoint)
    pipe.hgetall(k.handover)
    pipe.time()
    pipe.pttl(k.handover)
    pipe.hstrlen(k.checkpoint, 'd')
    const [state, r] = await Promise.all([this.chatState({ key: k.state, queue: k.queue }, plan), pipe.exec()])
    const val = <T>(i: number): T | Error => {
      const [err, v] = r?.[i] ?? [null, null]
      return err ? asError(err) : (v as T)
    }
    const time = val<[string, string]>(3)
    if (time instanceof Error) throw errorFromRedis(time, k.state)
    let checkpoint = val<Hash | Array<string | null>>(0)
    if (Array.isArray(checkpoint)) {
      const h: Hash = {}
      checkpoint.forEach((v, j) => {
        if (v !== null) h[cpPlan.fields[j]!] = v
      })
      checkpoint = h
    }
    const dataBytes = val<number>(5)
    const cpFound = !(checkpoint instanceof Error) && Object.keys(checkpoint).length > 0
    return {
      state: state instanceof Error ? state : state!.fields,
      queued: state instanceof Error ? 0 : state!.extra,
      checkpoint,
      checkpointDataBytes: !o.checkpointData && cpFound && typeof dataBytes === 'number' ? dataBytes : null,
      checkpointTtl: val<number>(1),
      handover: val<Hash>(2),
      handoverTtl: val<number>(4),
      nowMs: Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000),
    }
  }

  xrange(key: string, start: string, end: string, count: number): Promise<StreamEntry[]> {
    return this.client.xrange(key, start, end, 'COUNT', count) as Promise<StreamEntry[]>
  }

  xrevrange(key: string, end: string, start: string, count: number): Promise<StreamEntry[]> {
    return this.client.xrevrange(key, end, start, 'COUNT', count) as Promise<StreamEntry[]>
  }

  async probe(node: number, what: ProbeName): Promise<string> {
    const n = await this.node(node)
    switch (what) {
      case 'info':
        return n.info()
      case 'maxmemory-policy':
        return ((await n.config('GET', 'maxmemory-policy')) as string[])[1] ?? ''
      case 'save':
        return ((await n.config('GET', 'save')) as string[])[1] ?? ''
      case 'cluster-info':
        return (await n.call('CLUSTER', 'INFO')) as string
    }
  }
}
