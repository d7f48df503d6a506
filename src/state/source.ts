/**
 * Where the read side's answers come from. Every read of the CLI and the dashboard asks a
 * `StateSource` a small set of questions (Redis's clock, a SCAN batch, hashes, the replica index, one
 * chat's keys, a range of the event stream, a server probe); `RedisSource` asks a live Redis, and
 * `RecordedSource` (./records.ts) answers the same questions from a snapshot or a recording. The
 * reader, the dashboard read and the decoders above them are one code path for both.
 */
import { CHECKPOINT_FIELDS } from '../wire/hashes.js'
import type { Redis } from 'ioredis'
import { isCluster, masters, type RedisClient } from '../connection.js'
import { asError, errorFromRedis, isConnectionError } from '../errors/from-redis.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import type { ChatKeys, RedisKey } from '../keys.js'
import { slotOwners, type SlotOwner } from './coverage.js'
import { refusedForGood, runReadScript, serverAddress, walkCommand } from './read-script.js'
import { READ_CHAT, READ_LISTING } from '../scripts/registry.js'
import { INSPECT_TICKETS, listPipelined, listingArgv, listingPlan, type ListedHash, type ListingPlan } from './bounded.js'

import type { ChatRaw, ChatReadOptions, Hash, ProbeName, StateSource, StreamEntry } from './source-api.js'
import { batchRead, scriptedBatchRead, type BatchRead } from './source-batch.js'

export {
  PROBES,
  isStateSource,
  type ChatRaw,
  type ChatReadOptions,
  type Hash,
  type ProbeName,
  type StateSource,
  type StreamEntry,
} from './source-api.js'

const keyName = (k: RedisKey): string => (typeof k === 'string' ? k : k.toString('latin1'))

/**
 * Keys per read-listing-0 call: a chat of a SCAN batch costs 12–15 µs of Redis time in it, so a call
 * holds Redis about half a millisecond (one of 250 held it 3 ms, past 10 ms at times, at a million chats).
 */
const LISTING_KEYS_PER_CALL = 40
/** Tickets one read-chat-2 call reads: a longer read (chat inspect --tickets) goes in pages of this many. */
const CHAT_TICKETS_PER_CALL = 500

export { WHOLE_READ_MAX_FIELDS } from './source-batch.js'

/** The live source: ioredis on a standalone server or every master of a Cluster. */
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
    if (n.options.sentinels) {
      const at = serverAddress(n)
      if (at.port !== undefined) return `${at.host}:${at.port}`
    }
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
    const n = await this.node(node)
    const [next, keys] = await walkCommand(n, () => n.scanBuffer(cursor, 'MATCH', pattern, 'COUNT', count))
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
      // A few dozen keys per call, at most WALK_IN_FLIGHT of them at a host's servers: another client's
      // command waits about a millisecond behind them, whatever the SCAN batch.
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
    const queue = item.queue
    const page = async (offset: number, limit: number, named: readonly string[], also: string) => {
      this.hashCommands++
      const args = [String(limit), String(offset), also, String(named.length), ...named]
      const answer = await runReadScript(this.client, READ_CHAT.name, [item.key, queue], args)
      if ('refused' in answer) {
        this.scriptRefused = refusedForGood(answer.refused)
        return 'refused' as const
      }
      return READ_CHAT.decode(answer.reply as never, keyName(item.key))
    }
    const h = await page(0, Math.min(plan.limit, CHAT_TICKETS_PER_CALL), plan.fields, plan.also?.[0] ?? '')
    if (h === 'refused' || h === null) return pipelined()
    if (h === 'wrongtype') return new Error('WRONGTYPE Operation against a key holding the wrong kind of value')
    // More tickets than one call reads: the next pages, each its own call (the queue may move
    // between them: a view of a long queue, not one atomic read of it).
    for (let offset = CHAT_TICKETS_PER_CALL; offset < Math.min(plan.limit, h.extra); offset += CHAT_TICKETS_PER_CALL) {
      const more = await page(offset, Math.min(CHAT_TICKETS_PER_CALL, plan.limit - offset), [], '')
      if (more === 'refused' || more === null || more === 'wrongtype') break
      Object.assign(h.fields, more.fields)
    }
    return h
  }

  /** read-listing-0 on one node (EVAL after NOSCRIPT); null when Redis refused the script. */
  private async readListing(
    n: Redis,
    items: Array<{ key: RedisKey; queue?: RedisKey }>,
    plan: ListingPlan,
  ): Promise<Array<ListedHash | Error | null> | null> {
    const argv = listingArgv(plan, items)
    this.hashCommands++
    // Redis said no (an ACL user without EVALSHA, scripting off, a slot moving or failing over): this
    // batch with pipelined commands, which answer key by key; the rest too when the script itself is refused.
    const answer = await walkCommand(n, () => runReadScript(n, READ_LISTING.name, [], argv))
    if ('refused' in answer) {
      this.scriptRefused = refusedForGood(answer.refused)
      return null
    }
    const reply = answer.reply
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
   * A snapshot's batch on one master (./source-batch.ts): the keys' hashes, the PTTL of those
   * flagged, and its TIME — by read-snapshot-0 calls, or by pipelines where Redis refuses the script.
   */
  async batchRead(node: number, keys: RedisKey[], withTtl: boolean[], omit: Array<readonly string[] | undefined> = []): Promise<BatchRead> {
    const conn = await this.node(node)
    const sent = (n: number) => {
      this.hashCommands += n
    }
    if (!this.scriptRefused) {
      const read = await scriptedBatchRead(conn, keys, withTtl, omit, sent, (message) => {
        this.scriptRefused = refusedForGood(message)
      })
      if (read) return read
    }
    return batchRead(conn, keys, withTtl, omit, sent)
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
    pipe.hstrlen(k.checkpoint, CHECKPOINT_FIELDS.data)
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
