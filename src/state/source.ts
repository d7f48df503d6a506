/**
 * Where the read side's answers come from. Every read of the CLI and the dashboard asks a
 * `StateSource` a small set of questions (Redis's clock, a SCAN batch, hashes, the replica index, one
 * chat's keys, a range of the event stream, a server probe); `RedisSource` asks a live Redis, and
 * `RecordedSource` (./records.ts) answers the same questions from a snapshot or a recording. The
 * reader, the dashboard read and the decoders above them are one code path for both.
 */
import type { Redis } from 'ioredis'
import { isCluster, masters, type RedisClient } from '../connection.js'
import { errorFromRedis, isConnectionError } from '../errors/from-redis.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import type { ChatKeys, RedisKey } from '../keys.js'
import { slotOwners, type SlotOwner } from './coverage.js'
import { loadScript } from '../scripts/load.js'
import { READ_HASHES } from '../scripts/registry.js'

export type Hash = Record<string, string>
export type StreamEntry = [id: string, fields: string[]]

/** What `doctor` asks each master about its configuration. */
export const PROBES = ['info', 'maxmemory-policy', 'save', 'cluster-info'] as const
export type ProbeName = (typeof PROBES)[number]

/** One chat's keys read together (one slot): the raw replies, each an error or its value. */
export interface ChatRaw {
  state: Hash | Error
  checkpoint: Hash | Error
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
  hgetall(key: RedisKey): Promise<Hash>
  /** Members of a sorted set, lowest score first. */
  zrange(key: RedisKey): Promise<string[]>
  /** One chat whole, in one round trip. */
  chat(keys: ChatKeys): Promise<ChatRaw>
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
}

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)))

/** The live source: ioredis on a standalone server or every master of a Cluster. */
export class RedisSource implements StateSource {
  readonly origin = 'redis' as const
  readonly redis: RedisClient
  hashCommands = 0
  /** read-hashes-0 was refused here (an ACL user without EVALSHA, scripting off): HGETALLs from now on. */
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

  async scan(node: number, cursor: string, pattern: string, count: number): Promise<{ cursor: string; keys: Buffer[] }> {
    const [next, keys] = await (await this.node(node)).scanBuffer(cursor, 'MATCH', pattern, 'COUNT', count)
    return { cursor: String(next), keys }
  }

  /**
   * A SCAN batch's hashes read whole on its node come from one read-hashes-0 call (one reply element
   * per key instead of one per field); a key it cannot carry (a value holding a NUL), or a batch whose
   * script Redis refused, is read with the pipeline below.
   */
  async hashes(node: number | null, keys: RedisKey[], fields?: Array<string[] | undefined>): Promise<Array<Hash | Error>> {
    if (keys.length === 0) return []
    if (node !== null && !fields?.some((f) => f) && !this.scriptRefused) {
      const read = await this.readHashes(node, keys)
      if (read) {
        const again = keys.filter((_, i) => read[i] === null)
        if (again.length === 0) return read as Array<Hash | Error>
        const more = await this.pipelined(node, again)
        let j = 0
        return read.map((h) => h ?? more[j++]!)
      }
    }
    return this.pipelined(node, keys, fields)
  }

  /** read-hashes-0 on one node (EVAL after NOSCRIPT); null when Redis refused the script. */
  private async readHashes(node: number, keys: RedisKey[]): Promise<Array<Hash | Error | null> | null> {
    const n = await this.node(node)
    const script = loadScript(READ_HASHES.name)
    this.hashCommands++
    let reply: unknown
    try {
      try {
        reply = await n.evalsha(script.sha, 0, ...keys)
      } catch (err) {
        if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err
        reply = await n.eval(script.source, 0, ...keys)
      }
    } catch (err) {
      // Redis said no (an ACL user without EVALSHA, scripting off, a slot moving or failing over): this
      // batch with HGETALLs, which answer key by key; the rest too when the script itself is refused.
      if ((err as Error)?.name !== 'ReplyError') throw err
      this.scriptRefused = /NOPERM|unknown command|disabled/i.test((err as Error).message)
      return null
    }
    return READ_HASHES.decode(reply, READ_HASHES.name).map((h) =>
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

  /** A snapshot's batch: the keys' hashes, the PTTL of those flagged, and the master's TIME, in one pipeline on it. */
  async batchRead(
    node: number,
    keys: RedisKey[],
    withTtl: boolean[],
  ): Promise<{ replies: Array<Hash | Error>; ttls: Array<number | null>; nowMs: number }> {
    const pipe = (await this.node(node)).pipeline()
    keys.forEach((k, i) => {
      pipe.hgetall(k)
      if (withTtl[i]) pipe.pttl(k)
    })
    pipe.time()
    const r = (await pipe.exec()) ?? []
    const replies: Array<Hash | Error> = []
    const ttls: Array<number | null> = []
    let j = 0
    keys.forEach((_, i) => {
      const [err, h] = r[j++] ?? [null, {}]
      replies.push(err ? asError(err) : ((h ?? {}) as Hash))
      if (withTtl[i]) {
        const [terr, t] = r[j++] ?? [null, null]
        ttls.push(terr ? null : (t as number))
      } else ttls.push(null)
    })
    const [terr, time] = r[j] ?? [null, null]
    if (terr || !time) throw errorFromRedis(terr ?? new Error('no TIME reply'), undefined)
    const [s, us] = time as [string, string]
    return { replies, ttls, nowMs: Number(s) * 1000 + Math.floor(Number(us) / 1000) }
  }

  hgetall(key: RedisKey): Promise<Hash> {
    return this.client.hgetall(key)
  }

  zrange(key: RedisKey): Promise<string[]> {
    return this.client.zrange(key, '0', '-1')
  }

  async chat(k: ChatKeys): Promise<ChatRaw> {
    // One pipeline: a Cluster client routes it by the first key's slot, which all keys of a chat share.
    const pipe = this.client.pipeline()
    pipe.hgetall(k.state)
    pipe.hgetall(k.checkpoint)
    pipe.pttl(k.checkpoint)
    pipe.hgetall(k.handover)
    pipe.time()
    pipe.pttl(k.handover)
    const r = (await pipe.exec()) ?? []
    const val = <T>(i: number): T | Error => {
      const [err, v] = r[i] ?? [null, null]
      return err ? asError(err) : (v as T)
    }
    const time = val<[string, string]>(4)
    if (time instanceof Error) throw errorFromRedis(time, k.state)
    return {
      state: val<Hash>(0),
      checkpoint: val<Hash>(1),
      checkpointTtl: val<number>(2),
      handover: val<Hash>(3),
      handoverTtl: val<number>(5),
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
