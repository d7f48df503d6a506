/**
 * The read side shared by the CLI and the dashboard: bounded SCANs on every master (never a full-keyspace listing),
 * pipelined HGETALLs, and the pure decoders of ./decode.ts. Times are Redis's clock. It asks its
 * questions of a StateSource (./source.ts): a live Redis, or the records of a snapshot (./records.ts).
 */
import { REPLICA_FIELDS } from '../wire/hashes.js'
import { SCHEMA_VERSION, type KeyKind, type KeyLayout, type RedisKey } from '../keys.js'
import { idFromBytes, redisKey } from '../bytes.js'
import { batchWrites, withTimeout, type RedisClient } from '../connection.js'
import { errorFromRedis } from '../errors/from-redis.js'
import type { UnreachableMaster } from './coverage.js'
import { DEFAULTS } from '../defaults.js'
import { CorruptStateError } from '../errors/corrupt-state-error.js'
import {
  decodeChat,
  decodeCheckpoint,
  decodeHandover,
  decodeLead,
  decodeLock,
  decodeReplica,
  type ChatSnapshot,
  type FlowCheckpoint,
  type HandoverMarker,
  type LeadSnapshot,
  type LockSnapshot,
  type ReplicaSnapshot,
  type ChatDetail,
} from './decode.js'
import { RedisSource, isStateSource, type ChatReadOptions, type StateSource } from './source.js'
import { INSPECT_CANDIDATES, listingPlan } from './bounded.js'
import {
  LISTING_DECODERS,
  addReplica,
  corruptReason,
  drainListing,
  eventsRange,
  eventEntry,
  schemaOf,
  streamListing,
  type DecodedBy,
  type Decoders,
  type Hash,
  type ListedBatch,
  type ListedMeta,
  type Listing,
  type ReadItem,
  type ScanOptions,
  type SchemaInfo,
} from './listing.js'
import { KeyspaceWalker, type ScanAt, type ScanStepResult, type StepOptions, type WalkerHost } from './walker.js'
import { MasterReach, unreachableError } from './reach.js'

export {
  LISTING_DECODERS,
  type Corrupt,
  type Decoders,
  type ListedBatch,
  type ListedMeta,
  type Listing,
  type ScanOptions,
  type SchemaInfo,
} from './listing.js'

export class StateReader {
  /** Where the answers come from: a live Redis, or recorded answers (a snapshot, a recording). */
  readonly source: StateSource
  readonly keys: KeyLayout
  readonly timeoutMs: number
  /** Redis commands sent by this reader (the dashboard shows its own load). */
  commands = 0
  /** The walks of the keyspace (./walker.ts), and which masters they read (./reach.ts). */
  private readonly walker: KeyspaceWalker
  private readonly reach: MasterReach
  /** See answerAfter. */
  private gate: Promise<unknown> | null = null

  constructor(from: RedisClient | StateSource, keys: KeyLayout, options: { timeoutMs?: number } = {}) {
    this.source = isStateSource(from) ? from : new RedisSource(from)
    this.keys = keys
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.readTimeoutMs
    const host: WalkerHost = {
      source: this.source,
      keys,
      call: (what, f, rawKey, gate) => this.call(what, f, rawKey, gate),
      sent: (n) => {
        this.commands += n
      },
    }
    this.reach = new MasterReach(host)
    this.walker = new KeyspaceWalker(host, this.reach)
  }

  /** One question to the source, bounded in time; `gate: false` for what the check itself asks (clock, schema). */
  private async call<T>(what: string, f: () => Promise<T>, rawKey?: RedisKey, gate = true): Promise<T> {
    // Questions asked in one turn of the event loop leave in one write.
    if (this.source instanceof RedisSource) batchWrites(this.source.redis)
    let p: Promise<T>
    try {
      p = withTimeout(f(), this.timeoutMs, what)
    } catch (err) {
      throw errorFromRedis(err, rawKey)
    }
    if (gate && this.gate) {
      p.catch(() => {})
      await this.gate // the check's failure as it is
    }
    try {
      return await p
    } catch (err) {
      throw errorFromRedis(err, rawKey)
    }
  }

  /**
   * Questions are sent at once but answered only once `check` resolved (a command's connection and
   * schema check): a command's first reads then share the check's round trip, and nothing read is
   * used before the check passed. A failed check fails every read with its error.
   */
  answerAfter(check: Promise<unknown>): void {
    check.catch(() => {})
    this.gate = check
  }

  /** How many masters to read from (a Cluster client loads its slots first: ./source.ts). */
  private masterCount(): Promise<number> {
    return this.walker.masterCount()
  }

  /** Keys on every master, every prefix's (null: a recorded source, or not known): a bound on what a walk reads. */
  async keysInServer(): Promise<number | null> {
    const count = this.source.keyCount?.bind(this.source)
    if (!count) return null
    const nodes = await this.masterCount()
    const each = await Promise.all(Array.from({ length: nodes }, (_, n) => this.call('DBSIZE', () => count(n), undefined, false)))
    return each.reduce((a, b) => a + b, 0)
  }

  /** Redis's own clock (ms): of the first master that answers (on a Cluster one may be down). */
  async now(): Promise<number> {
    this.commands++
    return this.call('TIME', () => this.source.time(), undefined, false)
  }

  /**
   * On a Cluster: the slot owners (CLUSTER SLOTS, asked now) whose keys this reader's scans did not
   * read — a master down before its replica is promoted. Empty when every owner was read (and on a
   * standalone server or a snapshot). `kind` 'replica': only the owner of the heartbeats' slot
   * matters (every heartbeat record shares it).
   */
  unreachable(kind?: KeyKind): Promise<UnreachableMaster[]> {
    return this.reach.unreachable(kind)
  }

  async schema(): Promise<SchemaInfo | null> {
    this.commands++
    const rawKey = this.keys.schema
    const h = await this.call('HGETALL', () => this.source.hgetall(rawKey), rawKey, false)
    return schemaOf(rawKey, h)
  }

  /**
   * Is there anything under this prefix, and which prefixes hold botmesh-coord state (a schema
   * record, `<prefix>:schema`)? Asked when a listing came back empty, to tell a wrong or missing
   * `--prefix` from a quiet one. Bounded: at most `maxKeys` keys looked at per master per question
   * (SCAN MATCH, `count` per call), and at most 20 prefixes named (each checked to be a schema record).
   */
  async prefixSurvey(options: { maxKeys?: number; count?: number } = {}): Promise<{
    /** A key of this prefix was seen (its schema record, or any key under it). */
    used: boolean
    /** Prefixes with a schema record, this one excluded, sorted. */
    others: string[]
    /** Every master was scanned to its end (false: `others` may be incomplete). */
    complete: boolean
  }> {
    const maxKeys = options.maxKeys ?? 100_000
    const count = options.count ?? DEFAULTS.scanCount
    const schema = await this.schema().catch(() => null)
    if (schema) return { used: true, others: [], complete: true }
    const bound = { nodes: await this.masterCount(), maxKeys, count }
    // Keys of this prefix's own shapes only: a neighbour's (`shop:eu:…`) does not make `shop` in use.
    let used = false
    await this.walker.survey(this.keys.scanPatternOf([]), bound, (b) => (used = this.keys.owns(b)))
    if (!used) {
      this.commands++
      const tail = await this.call('XREVRANGE', () => this.source.xrevrange(this.keys.events, '+', '-', 1)).catch(() => [])
      used = tail.length > 0
    }
    if (used) return { used: true, others: [], complete: true }
    const candidates = new Set<string>()
    const complete = await this.walker.survey('*:schema', bound, (b) => {
      const k = idFromBytes(b)
      if (candidates.size < 20 && k.endsWith(':schema') && k.length > ':schema'.length) candidates.add(k.slice(0, -':schema'.length))
    })
    candidates.delete(this.keys.prefix)
    const list = [...candidates]
    this.commands += list.length
    const hashes = await Promise.all(
      list.map((p) => this.call('HGETALL', () => this.source.hgetall(redisKey(`${p}:schema`))).catch(() => ({}))),
    )
    const others = list.filter((_, i) => /^\d+$/.test((hashes[i] as Hash).version ?? '')).sort()
    return { used: false, others, complete }
  }

  /** A schema newer than this release understands cannot be read safely: what every command refuses. */
  static schemaProblem(s: SchemaInfo | null): string | null {
    if (s && s.version > SCHEMA_VERSION) return `schema ${s.version} is newer than this release understands (${SCHEMA_VERSION})`
    return null
  }

  /**
   * Every key of the given kinds under the prefix, in one pass over the keyspace (a listing of chats,
   * leads and locks does not walk it three times): SCAN MATCH for those kinds only (KeyLayout.scanPatternOf)
   * in batches of `count` on every master, each batch fetched with one pipeline on the node that owns it.
   *
   * Without a `limit`, a master is asked for its next batches while one is decoded (SCAN_AHEAD of them, ./walker.ts,
   * in flight), and the masters of a Cluster are walked at once: batches come as they are read, in no
   * particular order. With a `limit` (a bounded look, the dashboard's refresh), one batch at a time,
   * master after master, so that nothing past the limit is read.
   */
  scanKinds(kinds: KeyKind[], options: ScanOptions = {}): AsyncGenerator<Array<ReadItem>> {
    return this.walker.scanKinds(kinds, options)
  }

  /**
   * One step of a walk of the keyspace that goes on across calls (the exporter's inventory: a bounded
   * read per scrape): one SCAN batch on one master, from where `at` stands, with the hashes of the
   * keys of `kinds` in it (`keysOnly`: their names alone, no read per key). `next` is where the next step starts; `wrapped` once every master was walked.
   */
  scanStep(at: ScanAt, kinds: KeyKind[], options: StepOptions = {}): Promise<ScanStepResult> {
    return this.walker.scanStep(at, kinds, options)
  }

  private async list<T>(
    kind: KeyKind,
    decode: (id: string, rawKey: RedisKey, h: Hash, meta?: ListedMeta) => T | null,
    options: ScanOptions = {},
  ): Promise<Listing<T>> {
    const out = await this.listMany({ [kind]: decode } as Decoders, options)
    return out[kind] as unknown as Listing<T>
  }

  /**
   * Chats, leads and locks (any of them) in one pass over the keyspace, decoded batch by batch as
   * the walk reads them: nothing is kept between batches, so a listing of a million keys can print
   * its first rows at once and hold one batch in memory. `summary()` once the walk has ended: the
   * keys seen, and whether `limit` cut it short.
   */
  listStream<D extends Decoders>(
    decoders: D,
    options: ScanOptions = {},
  ): { batches: AsyncGenerator<ListedBatch<D>>; summary(): { scanned: number; truncated: boolean } } {
    const kinds = Object.keys(decoders) as KeyKind[]
    return streamListing(decoders, options, (o) => this.scanKinds(kinds, o))
  }

  /** Chats, leads and locks (any of them) in one pass over the keyspace, every item kept (listStream). */
  async listMany<D extends Decoders>(decoders: D, options: ScanOptions = {}): Promise<{ [K in keyof D]: Listing<DecodedBy<D[K]>> }> {
    return drainListing(Object.keys(decoders) as KeyKind[], this.listStream(decoders, options))
  }

  /**
   * Live replicas from the replica index (one ZRANGE and one pipeline of heartbeat records, which
   * share a slot on a cluster): what liveness checks need, without walking the keyspace. `replicas()`
   * scans instead, and also finds records the index does not list (corrupt or orphaned ones).
   */
  async liveReplicas(): Promise<Listing<ReplicaSnapshot>> {
    this.commands++
    let ids: string[]
    try {
      ids = await this.call('ZRANGE', () => this.source.zrange(this.keys.replicaIndex), this.keys.replicaIndex)
    } catch (err) {
      if (this.source.slotOwners && unreachableError(err)) throw await this.reach.heartbeatsUnreachable(err)
      // A corrupt index is one corrupt key: nobody counts as alive, and the listing goes on.
      if (err instanceof CorruptStateError)
        return { items: [], corrupt: [{ rawKey: this.keys.replicaIndex, error: corruptReason(err) }], scanned: 1, truncated: false }
      throw err
    }
    const out: Listing<ReplicaSnapshot> = { items: [], corrupt: [], scanned: ids.length, truncated: false }
    if (ids.length === 0) return out
    this.commands += ids.length
    const replies = await this.call(
      'HGETALL',
      () =>
        this.source.hashes(
          null,
          ids.map((id) => this.keys.replica(id)),
        ),
      this.keys.replicaIndex,
    )
    ids.forEach((id, i) => addReplica(out, id, this.keys.replica(id), replies[i] ?? {}))
    return out
  }

  replicas(options?: ScanOptions): Promise<Listing<ReplicaSnapshot>> {
    return this.list('replica', LISTING_DECODERS.replica, options)
  }

  chats(options?: ScanOptions): Promise<Listing<ChatSnapshot>> {
    return this.list('chat', LISTING_DECODERS.chat, options)
  }

  leads(options?: ScanOptions): Promise<Listing<LeadSnapshot>> {
    return this.list('lead', LISTING_DECODERS.lead, options)
  }

  locks(options?: ScanOptions): Promise<Listing<LockSnapshot>> {
    return this.list('lock', LISTING_DECODERS.lock, options)
  }

  checkpoints(options?: ScanOptions): Promise<Listing<FlowCheckpoint>> {
    return this.list('checkpoint', LISTING_DECODERS.checkpoint, options)
  }

  handovers(options?: ScanOptions): Promise<Listing<HandoverMarker>> {
    return this.list('handover', LISTING_DECODERS.handover, options)
  }

  /**
   * One chat — its turn and the head of its queue (`tickets`, default INSPECT_TICKETS; `queued` on the
   * snapshot says how many there are), checkpoint (its data only with `checkpointData`), handover
   * marker — in one round trip, two or three with a queue: a bounded read whatever the chat holds.
   */
  async chat(key: string, options: ChatReadOptions = {}): Promise<ChatDetail> {
    const k = this.keys.chat(key)
    this.commands += 10
    const r = await this.call('chat', () => this.source.chat(k, options), k.state)
    const val = <T>(v: T | Error, rawKey: RedisKey): T => {
      if (v instanceof Error) throw errorFromRedis(v, rawKey)
      return v
    }
    const state = val(r.state, k.state)
    const cp = val(r.checkpoint, k.checkpoint)
    const ttl = val(r.checkpointTtl, k.checkpoint)
    const ho = val(r.handover, k.handover)
    const hoTtl = val(r.handoverTtl, k.handover)
    return {
      chat: Object.keys(state).length ? decodeChat(key, k.state, state, r.queued) : null,
      checkpoint: Object.keys(cp).length ? decodeCheckpoint(key, k.checkpoint, cp, r.checkpointDataBytes ?? undefined) : null,
      checkpointTtlMs: ttl >= 0 ? ttl : null,
      handover: Object.keys(ho).length ? decodeHandover(key, k.handover, ho) : null,
      handoverTtlMs: hoTtl >= 0 ? hoTtl : null,
      nowMs: r.nowMs,
    }
  }

  /** One lead, with a page of its candidates (`candidates`, default INSPECT_CANDIDATES; `candidateCount` says how many stand). */
  async lead(name: string, options: { candidates?: number } = {}): Promise<LeadSnapshot | null> {
    const rawKey = this.keys.lead(name)
    this.commands += 3
    const plan = listingPlan('lead', { candidates: options.candidates ?? INSPECT_CANDIDATES })!
    const [r] = await this.call('HMGET', () => this.source.listing(null, [{ key: rawKey }], plan), rawKey)
    if (r instanceof Error) throw errorFromRedis(r, rawKey)
    return r && r.size > 0 ? decodeLead(name, rawKey, r.fields, r.size) : null
  }

  async replica(replicaId: string): Promise<ReplicaSnapshot | null> {
    const rawKey = this.keys.replica(replicaId)
    this.commands++
    const h = await this.call('HGETALL', () => this.source.hgetall(rawKey), rawKey)
    return h[REPLICA_FIELDS.beat] !== undefined ? decodeReplica(replicaId, rawKey, h) : null
  }

  async lock(key: string): Promise<LockSnapshot | null> {
    const rawKey = this.keys.lock(key)
    this.commands++
    const h = await this.call('HGETALL', () => this.source.hgetall(rawKey), rawKey)
    return Object.keys(h).length ? decodeLock(key, rawKey, h) : null
  }

  /**
   * Entries of the event stream, oldest first: the most recent `count` — of those from `sinceMs` to
   * `untilMs` (Redis ms, inclusive) and before the entry id `before` (exclusive, for paging back) —
   * or with `after` the next `count` after that entry id.
   */
  async events(
    options: { count?: number; after?: string; sinceMs?: number; untilMs?: number; before?: string } = {},
  ): Promise<Array<{ id: string; event: Record<string, unknown> }>> {
    const count = options.count ?? 50
    const r = this.source
    this.commands++
    const entries = options.after
      ? await this.call('XRANGE', () => r.xrange(this.keys.events, `(${options.after}`, '+', count), this.keys.events)
      : (await this.call('XREVRANGE', () => r.xrevrange(this.keys.events, ...eventsRange(options), count), this.keys.events)).reverse()
    return entries.map(([id, fields]) => eventEntry(id, fields))
  }
}
