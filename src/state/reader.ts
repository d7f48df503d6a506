/**
 * The read side shared by the CLI and the dashboard: bounded SCANs on every master (never a full-keyspace listing),
 * pipelined HGETALLs, and the pure decoders of ./decode.ts. Times are Redis's clock. It asks its
 * questions of a StateSource (./source.ts): a live Redis, or the records of a snapshot (./records.ts).
 */
import { KIND_SEGMENTS, KeyLayout, SCHEMA_VERSION, type KeyKind, type Layout, type RedisKey } from '../keys.js'
import { hasLoneSurrogate, idFromBytes, keyNameFromBytes, keyText, redisKey, startsWithBytes } from '../bytes.js'
import { batchWrites, withTimeout, type RedisClient } from '../connection.js'
import { errorFromRedis, isConnectionError } from '../errors/from-redis.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { formatRanges, ownerOfSlot, unreachableOwners, type UnreachableMaster } from './coverage.js'
import { DEFAULTS } from '../defaults.js'
import { CorruptStateError } from '../errors/corrupt-state-error.js'
import { parseBoundedJson } from '../wire/json.js'
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
import { RedisSource, type ChatReadOptions, type StateSource } from './source.js'
import { INSPECT_CANDIDATES, listingPlan, type ListedHash } from './bounded.js'

export interface ScanOptions {
  /** Read only these fields (HMGET) of the keys of a kind instead of the whole hash (HGETALL). */
  fields?: Partial<Record<KeyKind, string[]>>
  /** SCAN COUNT per call (a bound on the work of one Redis call). Default 1000. */
  count?: number
  /** Called after each batch with the number of keys seen so far. */
  onProgress?: (seen: number) => void
  /** Stop after this many keys (the dashboard's bounded refresh). */
  limit?: number
  /**
   * Read the keys of these kinds whole (HGETALL) instead of as a listing reads them (./bounded.ts): for
   * an intervention that must find every ticket of an incarnation, never for a listing.
   */
  whole?: KeyKind[]
}

/** A decoded item, or the key that could not be decoded (listings go on past a corrupt value). */
export interface Corrupt {
  rawKey: string
  error: string
}

export interface Listing<T> {
  items: T[]
  corrupt: Corrupt[]
  /** Keys seen by SCAN. */
  scanned: number
  /** True when `limit` stopped the scan early. */
  truncated: boolean
}

export interface SchemaInfo {
  version: number
  layout: Layout
  createdAt: number | null
}

type Hash = Record<string, string>
/** Beside a listing's fields: the hash's field count, and its queue's length or its measured field's (./bounded.ts). */
export type ListedMeta = { size: number; extra: number }
/** A key read by a walk: its fields (all, or a listing's), and what the listing measured. */
type ReadItem = { rawKey: RedisKey; id: string; kind: KeyKind; hash: Hash; meta?: ListedMeta }
/** A key of a SCAN batch that is one of ours, of a kind asked for. */
type ScannedKey = { rawKey: RedisKey; id: string; kind: KeyKind }

/** Batches of one master asked for ahead of the one being decoded (a walk without a limit). */
const SCAN_AHEAD = 3

/** Several walks at once: each step as soon as its walk has it. The first error ends them all. */
async function* mergeWalks<T>(walks: Array<AsyncGenerator<T>>): AsyncGenerator<T> {
  if (walks.length === 1) return yield* walks[0]!
  const next = (i: number) => walks[i]!.next().then((r) => ({ i, r }))
  const pending = new Map(walks.map((_, i) => [i, next(i)]))
  try {
    while (pending.size) {
      const { i, r } = await Promise.race(pending.values())
      if (r.done) {
        pending.delete(i)
        continue
      }
      pending.set(i, next(i))
      yield r.value
    }
  } finally {
    // An error (or a consumer that stopped) ends the other walks; their reads in flight are dropped.
    for (const p of pending.values()) p.catch(() => {})
    for (const w of walks) w.return(undefined).catch(() => {})
  }
}
export type Decoders = Partial<Record<KeyKind, (id: string, rawKey: RedisKey, h: Hash, meta?: ListedMeta) => unknown>>
type DecodedBy<F> = F extends (...a: never[]) => infer R ? Exclude<R, null> : never

/** One batch of a streamed listing (StateReader.listStream): its decoded items by kind, and its corrupt keys. */
export interface ListedBatch<D extends Decoders> {
  items: Array<{ [K in keyof D & KeyKind]: { kind: K; value: DecodedBy<D[K]> } }[keyof D & KeyKind]>
  corrupt: Array<Corrupt & { kind: KeyKind }>
}

/** The decoders of the listings, by kind (a null result skips the key). */
export const LISTING_DECODERS = {
  chat: (id: string, raw: RedisKey, h: Hash, m?: ListedMeta) => decodeChat(id, raw, h, m?.extra),
  lead: (id: string, raw: RedisKey, h: Hash, m?: ListedMeta) => decodeLead(id, raw, h, m?.size),
  lock: (id: string, raw: RedisKey, h: Hash) => decodeLock(id, raw, h),
  checkpoint: (id: string, raw: RedisKey, h: Hash, m?: ListedMeta) => decodeCheckpoint(id, raw, h, m?.extra),
  handover: (id: string, raw: RedisKey, h: Hash, m?: ListedMeta) => decodeHandover(id, raw, h, m?.extra),
} as const

/** A hash without fields (a key gone between the SCAN and the read), found without listing its fields. */
function isEmpty(h: Hash): boolean {
  for (const _ in h) return false
  return true
}

/** The message of an error, without a "Redis unreachable:" prefix. */
function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/^Redis unreachable:\s*/, '')
}

/** The reason a key is corrupt, without the key (the listing names it). */
function corruptReason(err: CorruptStateError): string {
  return err.message.replace(/^corrupt value at Redis key "[^"]*":\s*/, '')
}

/** A source given as a Redis client is the live one. */
function isSource(x: RedisClient | StateSource): x is StateSource {
  return typeof (x as StateSource).origin === 'string' && typeof (x as StateSource).probe === 'function'
}

export class StateReader {
  /** Where the answers come from: a live Redis, or recorded answers (a snapshot, a recording). */
  readonly source: StateSource
  readonly keys: KeyLayout
  readonly timeoutMs: number
  /** Redis commands sent by this reader (the dashboard shows its own load). */
  commands = 0
  /** Cluster masters whose keys this reader's scans read, and those that failed (host:port → error). */
  private readonly answered = new Set<string>()
  private readonly failed = new Map<string, string>()
  /** A scan walked every master the client knew (not stopped by a limit). */
  private walkedAll = false
  /** See answerAfter. */
  private gate: Promise<unknown> | null = null

  constructor(from: RedisClient | StateSource, keys: KeyLayout, options: { timeoutMs?: number } = {}) {
    this.source = isSource(from) ? from : new RedisSource(from)
    this.keys = keys
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.readTimeoutMs
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
  private async masterCount(): Promise<number> {
    return this.call('TIME', () => this.source.nodeCount(), undefined, false)
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

  /** The master that holds every heartbeat did not answer: which one it is, in the error (and in unreachable('replica')). */
  private async heartbeatsUnreachable(err: unknown): Promise<CoordinationUnavailableError> {
    const [owners, slot] = await Promise.all([
      this.source.slotOwners ? this.source.slotOwners().catch(() => null) : null,
      this.source.keySlot ? this.source.keySlot(this.keys.replicaIndex).catch(() => null) : null,
    ])
    const owner = owners && slot !== null ? ownerOfSlot(owners, slot) : undefined
    if (owner) this.failed.set(owner.node, errorText(err))
    const where = owner ? `master ${owner.node} (slots ${formatRanges(owner.ranges)})` : 'the master of their slot'
    return new CoordinationUnavailableError(
      'unreachable',
      `cannot know the live replicas: ${where}, which holds every heartbeat under prefix ${this.keys.prefix}, does not answer (${errorText(err)}); a failover may be under way`,
      { cause: err },
    )
  }

  /** A read a master did not answer (down, failing over), rather than a refusal of Redis. */
  private unreachableError(err: unknown): boolean {
    return (err instanceof CoordinationUnavailableError && err.reason === 'unreachable') || isConnectionError(err)
  }

  /**
   * On a Cluster: the slot owners (CLUSTER SLOTS, asked now) whose keys this reader's scans did not
   * read — a master down before its replica is promoted. Empty when every owner was read (and on a
   * standalone server or a snapshot). `kind` 'replica': only the owner of the heartbeats' slot
   * matters (every heartbeat record shares it).
   */
  async unreachable(kind?: KeyKind): Promise<UnreachableMaster[]> {
    if (!this.source.slotOwners || (this.answered.size === 0 && this.failed.size === 0)) return []
    this.commands++
    const owners = await this.source.slotOwners().catch(() => null)
    if (!owners) return [...this.failed].map(([node, error]) => ({ node, slots: '?', error }))
    // After a scan of every master, an owner not read is missing; before one, only those that failed.
    const read = this.walkedAll ? this.answered : new Set(owners.map((o) => o.node).filter((n) => !this.failed.has(n)))
    const missing = unreachableOwners(owners, read, this.failed)
    if (kind !== 'replica' || missing.length === 0 || !this.source.keySlot) return missing
    this.commands++
    const slot = await this.source.keySlot(this.keys.replicaIndex).catch(() => null)
    const owner = slot === null ? undefined : ownerOfSlot(owners, slot)
    return owner ? missing.filter((m) => m.node === owner.node) : missing
  }

  async schema(): Promise<SchemaInfo | null> {
    this.commands++
    const rawKey = this.keys.schema
    const h = await this.call('HGETALL', () => this.source.hgetall(rawKey), rawKey, false)
    if (!h || Object.keys(h).length === 0) return null
    if (!/^\d+$/.test(h.version ?? '')) {
      throw new CorruptStateError(rawKey, `field version is not a whole number: ${JSON.stringify(String(h.version ?? '').slice(0, 40))}`)
    }
    const layout = h.layout ?? 'standalone'
    if (layout !== 'standalone' && layout !== 'cluster')
      throw new CorruptStateError(rawKey, `field layout is ${JSON.stringify(layout.slice(0, 40))}`)
    return { version: Number(h.version), layout, createdAt: h.createdAt && /^\d+$/.test(h.createdAt) ? Number(h.createdAt) : null }
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
    const nodes = await this.masterCount()
    /** Each master SCANned for `pattern` (at most maxKeys keys each), until `onKey` says stop. */
    const walk = async (pattern: string, onKey: (k: Buffer) => boolean | void): Promise<boolean> => {
      let complete = true
      for (let node = 0; node < nodes; node++) {
        let cursor = '0'
        let looked = 0
        try {
          do {
            this.commands++
            const step = await this.call('SCAN', () => this.source.scan(node, cursor, pattern, count))
            cursor = step.cursor
            looked += count
            if (step.keys.some((b) => onKey(b) === true)) return true
          } while (cursor !== '0' && looked < maxKeys)
        } catch (err) {
          if (!this.nodeFailed(node, err)) throw err
          complete = false
          continue
        }
        if (cursor !== '0') complete = false
      }
      return complete
    }
    // Keys of this prefix's own shapes only: a neighbour's (`shop:eu:…`) does not make `shop` in use.
    let used = false
    await walk(this.keys.scanPatternOf([]), (b) => (used = this.keys.owns(b)))
    if (!used) {
      this.commands++
      const tail = await this.call('XREVRANGE', () => this.source.xrevrange(this.keys.events, '+', '-', 1)).catch(() => [])
      used = tail.length > 0
    }
    if (used) return { used: true, others: [], complete: true }
    const candidates = new Set<string>()
    const complete = await walk('*:schema', (b) => {
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
   * Without a `limit`, a master is asked for its next batches while one is decoded (SCAN_AHEAD of them
   * in flight), and the masters of a Cluster are walked at once: batches come as they are read, in no
   * particular order. With a `limit` (a bounded look, the dashboard's refresh), one batch at a time,
   * master after master, so that nothing past the limit is read.
   */
  async *scanKinds(kinds: KeyKind[], options: ScanOptions = {}): AsyncGenerator<Array<ReadItem>> {
    let seen = 0
    const nodes = await this.masterCount()
    if (options.limit === undefined) {
      for await (const step of mergeWalks(Array.from({ length: nodes }, (_, node) => this.walkAhead(node, kinds, options)))) {
        seen += step.scanned
        options.onProgress?.(seen)
        if (step.items.length) yield step.items
      }
      this.walkedAll = true
      return
    }
    for (let node = 0; node < nodes; node++) {
      let cursor = '0'
      do {
        let step: Awaited<ReturnType<StateReader['scanBatch']>>
        try {
          step = await this.scanBatch(node, cursor, kinds, options)
        } catch (err) {
          if (!this.nodeFailed(node, err)) throw err
          break
        }
        cursor = step.cursor
        seen += step.scanned
        options.onProgress?.(seen)
        if (step.items.length) yield step.items
        if (seen >= options.limit) return
      } while (cursor !== '0')
      if (!this.failed.has(this.source.nodeName(node))) this.answered.add(this.source.nodeName(node))
    }
    this.walkedAll = true
  }

  /**
   * A Cluster master that does not answer (down, failing over): noted, and the others are still read
   * — unreachable() names it, so the listing is partial, not silently short. False: the error is the read's.
   */
  private nodeFailed(node: number, err: unknown): boolean {
    if (!this.source.slotOwners || !this.unreachableError(err)) return false
    this.failed.set(this.source.nodeName(node), errorText(err))
    return true
  }

  /** One master walked whole, its next SCAN and reads asked for while a batch is decoded. */
  private async *walkAhead(
    node: number,
    kinds: KeyKind[],
    options: ScanOptions,
  ): AsyncGenerator<{ scanned: number; items: Array<ReadItem> }> {
    const quiet = <T>(p: Promise<T>): Promise<T> => (p.catch(() => {}), p)
    const scan = (cursor: string): Promise<{ cursor: string; scanned: number; ours: ScannedKey[] }> =>
      quiet(this.scanKeys(node, cursor, kinds, options))
    let next: Promise<{ cursor: string; scanned: number; ours: ScannedKey[] }> | null = scan('0')
    const pending: Array<{ scanned: number; items: Promise<Array<ReadItem>> }> = []
    try {
      while (next || pending.length) {
        while (next && pending.length < SCAN_AHEAD) {
          const step: { cursor: string; scanned: number; ours: ScannedKey[] } = await next
          const { cursor, scanned, ours } = step
          // The next SCAN and this batch's read leave together, so Redis has the next batch to work on.
          next = cursor !== '0' ? scan(cursor) : null
          pending.push({ scanned, items: quiet(this.readKeys(node, ours, options)) })
        }
        const b = pending.shift()!
        yield { scanned: b.scanned, items: await b.items }
      }
    } catch (err) {
      if (!this.nodeFailed(node, err)) throw err
      return
    }
    this.answered.add(this.source.nodeName(node))
  }

  /**
   * One step of a walk of the keyspace that goes on across calls (the exporter's inventory: a bounded
   * read per scrape): one SCAN batch on one master, from where `at` stands, with the hashes of the
   * keys of `kinds` in it (`keysOnly`: their names alone, no read per key). `next` is where the next step starts; `wrapped` once every master was walked.
   */
  async scanStep(
    at: { node: number; cursor: string },
    kinds: KeyKind[],
    options: Pick<ScanOptions, 'count' | 'fields'> & { keysOnly?: boolean } = {},
  ): Promise<{
    items: Array<ReadItem>
    next: { node: number; cursor: string }
    wrapped: boolean
  }> {
    const nodes = await this.masterCount()
    const index = at.node < nodes ? at.node : 0
    const step = await this.scanBatch(index, index === at.node ? at.cursor : '0', kinds, options)
    if (step.cursor !== '0') return { items: step.items, next: { node: index, cursor: step.cursor }, wrapped: false }
    const last = index + 1 >= nodes
    return { items: step.items, next: { node: last ? 0 : index + 1, cursor: '0' }, wrapped: last }
  }

  /** One SCAN batch on one node, and the hashes (or `fields`) of its keys of `kinds`, fetched with one pipeline. */
  private async scanBatch(
    node: number,
    cursor: string,
    kinds: KeyKind[],
    options: Pick<ScanOptions, 'count' | 'fields'> & { keysOnly?: boolean },
  ): Promise<{ cursor: string; scanned: number; items: Array<ReadItem> }> {
    const { cursor: next, scanned, ours } = await this.scanKeys(node, cursor, kinds, options)
    return { cursor: next, scanned, items: await this.readKeys(node, ours, options) }
  }

  /** One SCAN batch on one node: its keys of `kinds`, parsed. */
  private async scanKeys(
    node: number,
    cursor: string,
    kinds: KeyKind[],
    options: Pick<ScanOptions, 'count'>,
  ): Promise<{ cursor: string; scanned: number; ours: ScannedKey[] }> {
    const count = options.count ?? DEFAULTS.scanCount
    const wanted = new Set(kinds)
    const pattern = this.keys.scanPatternOf(kinds)
    this.commands++
    // Keys as bytes: a key that is not UTF-8 is read back exactly (an id with lone surrogates, ../bytes.ts).
    const { cursor: next, keys: batch } = await this.call('SCAN', () => this.source.scan(node, cursor, pattern, count))
    const ours: ScannedKey[] = []
    const heads = this.kindHeads(kinds)
    // A neighbour prefix's key the pattern let through (`shop:cx:…`) is not counted as scanned.
    let scanned = 0
    for (const bytes of batch) {
      if (!this.keys.owns(bytes)) continue
      scanned++
      // Another kind's key (a checkpoint, a queue) is passed over before it is decoded.
      if (heads && !heads.some((h) => startsWithBytes(bytes, h))) continue
      const text = keyNameFromBytes(bytes)
      const parsed = this.keys.parse(text)
      if (parsed !== null && wanted.has(parsed.kind)) ours.push({ rawKey: redisKey(text), id: parsed.id, kind: parsed.kind })
    }
    return { cursor: next, scanned, ours }
  }

  /**
   * The bytes every key of these kinds starts with (`<prefix>:<segment>:`), or null when a key's bytes
   * cannot be told apart before it is decoded (a prefix holding a lone surrogate).
   */
  private kindHeads(kinds: KeyKind[]): Buffer[] | null {
    const p = this.keys.prefix
    if (hasLoneSurrogate(p)) return null
    const id = kinds.join(',')
    if (this.heads?.id !== id) this.heads = { id, heads: kinds.map((k) => Buffer.from(`${p}:${KIND_SEGMENTS[k]}:`, 'utf8')) }
    return this.heads.heads
  }

  private heads: { id: string; heads: Buffer[] } | null = null

  /**
   * What a listing shows of a SCAN batch's keys (./bounded.ts: named fields, sizes, a queue's head, a
   * page of candidates; one script call per kind on its node), or only `fields` (HMGET), or with
   * `keysOnly` nothing.
   */
  private async readKeys(
    node: number,
    ours: ScannedKey[],
    options: Pick<ScanOptions, 'fields' | 'whole'> & { keysOnly?: boolean },
  ): Promise<ReadItem[]> {
    const out: ReadItem[] = []
    if (options.keysOnly) {
      for (const k of ours) out.push({ rawKey: k.rawKey, id: k.id, kind: k.kind, hash: {} })
      return out
    }
    if (!ours.length) return out
    const sentBefore = this.source.hashCommands
    const byKind = new Map<KeyKind, ScannedKey[]>()
    for (const k of ours) {
      const group = byKind.get(k.kind)
      if (group) group.push(k)
      else byKind.set(k.kind, [k])
    }
    const groups = [...byKind].map(([kind, ks]) => ({
      kind,
      ks,
      plan: options.fields?.[kind] || options.whole?.includes(kind) ? null : listingPlan(kind),
    }))
    const replies = await this.call('HMGET', () =>
      Promise.all(
        groups.map(({ kind, ks, plan }) =>
          plan
            ? this.source.listing(
                node,
                ks.map((k) => ({ key: k.rawKey, queue: kind === 'chat' ? this.keys.chat(k.id).queue : undefined })),
                plan,
              )
            : this.source.hashes(
                node,
                ks.map((k) => k.rawKey),
                ks.map((k) => options.fields?.[k.kind]),
              ),
        ),
      ),
    )
    // One per key with pipelines; one per batch and kind when the source read it with a script.
    this.commands += sentBefore === undefined ? ours.length : this.source.hashCommands! - sentBefore
    groups.forEach(({ ks, plan }, g) => {
      ks.forEach((k, i) => {
        const reply = replies[g]![i] ?? {}
        const { id, kind } = k
        // A node that cannot serve the key now (CLUSTERDOWN, MOVED during a failover, LOADING) is not
        // a corrupt value: the batch fails, and a Cluster listing names the master as unreachable.
        if (reply instanceof Error && isConnectionError(reply)) throw errorFromRedis(reply, k.rawKey)
        if (reply instanceof Error) return out.push({ rawKey: k.rawKey, id, kind, hash: { __error: reply.message } })
        const listed = plan ? (reply as ListedHash) : null
        if (listed) {
          if (listed.size > 0)
            out.push({ rawKey: k.rawKey, id, kind, hash: listed.fields, meta: { size: listed.size, extra: listed.extra } })
        } else if (!isEmpty(reply as Hash)) out.push({ rawKey: k.rawKey, id, kind, hash: reply as Hash })
      })
    })
    return out
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
    let scanned = 0
    const walk = this.scanKinds(kinds, {
      ...options,
      onProgress: (n) => {
        scanned = n
        options.onProgress?.(n)
      },
    })
    async function* batches(): AsyncGenerator<ListedBatch<D>> {
      for await (const batch of walk) {
        const out: ListedBatch<D> = { items: [], corrupt: [] }
        for (const { rawKey, id, kind, hash, meta } of batch) {
          if (hash.__error) {
            out.corrupt.push({ kind, rawKey: keyText(rawKey), error: /WRONGTYPE/.test(hash.__error) ? 'wrong Redis type' : hash.__error })
            continue
          }
          try {
            const v = decoders[kind]!(id, rawKey, hash, meta)
            if (v !== null) out.items.push({ kind, value: v } as ListedBatch<D>['items'][number])
          } catch (err) {
            out.corrupt.push({ kind, rawKey: keyText(rawKey), error: err instanceof CorruptStateError ? err.message : String(err) })
          }
        }
        yield out
      }
    }
    return {
      batches: batches(),
      summary: () => ({ scanned, truncated: options.limit !== undefined && scanned >= options.limit }),
    }
  }

  /** Chats, leads and locks (any of them) in one pass over the keyspace, every item kept (listStream). */
  async listMany<D extends Decoders>(decoders: D, options: ScanOptions = {}): Promise<{ [K in keyof D]: Listing<DecodedBy<D[K]>> }> {
    const kinds = Object.keys(decoders) as KeyKind[]
    const result = Object.fromEntries(kinds.map((k) => [k, { items: [], corrupt: [], scanned: 0, truncated: false }])) as Record<
      string,
      Listing<unknown>
    >
    const stream = this.listStream(decoders, options)
    for await (const batch of stream.batches) {
      for (const { kind, value } of batch.items) result[kind]!.items.push(value)
      for (const { kind, ...c } of batch.corrupt) result[kind]!.corrupt.push(c)
    }
    const { scanned, truncated } = stream.summary()
    kinds.forEach((k, i) => {
      // The pass is shared: its keys are counted once, on the first kind.
      result[k]!.scanned = i === 0 ? scanned : 0
      result[k]!.truncated = truncated
    })
    return result as { [K in keyof D]: Listing<DecodedBy<D[K]>> }
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
      if (this.source.slotOwners && this.unreachableError(err)) throw await this.heartbeatsUnreachable(err)
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
    ids.forEach((id, i) => {
      const rawKey = this.keys.replica(id)
      const h = replies[i] ?? {}
      if (h instanceof Error)
        return out.corrupt.push({
          rawKey: keyText(rawKey),
          error: /WRONGTYPE/.test(h.message) ? 'wrong Redis type' : h.message,
        })
      if (h.beat === undefined) return
      try {
        out.items.push(decodeReplica(id, rawKey, h))
      } catch (e) {
        out.corrupt.push({ rawKey: keyText(rawKey), error: (e as Error).message })
      }
    })
    return out
  }

  replicas(options?: ScanOptions): Promise<Listing<ReplicaSnapshot>> {
    // A record with only an eviction tombstone is not a live replica.
    return this.list('replica', (id, raw, h) => (h.beat === undefined ? null : decodeReplica(id, raw, h)), options)
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

  /** One chat whole — state, checkpoint (and its TTL), handover marker — in one round trip (one slot). */
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
    return h.beat !== undefined ? decodeReplica(replicaId, rawKey, h) : null
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
      : (
          await this.call(
            'XREVRANGE',
            () =>
              r.xrevrange(
                this.keys.events,
                options.before !== undefined
                  ? `(${options.before}`
                  : options.untilMs !== undefined
                    ? String(Math.floor(options.untilMs))
                    : '+',
                options.sinceMs === undefined ? '-' : String(Math.max(0, Math.floor(options.sinceMs))),
                count,
              ),
            this.keys.events,
          )
        ).reverse()
    return entries.map(([id, fields]) => {
      const i = fields.indexOf('e')
      const raw = i >= 0 && i % 2 === 0 ? fields[i + 1] : undefined
      let event: unknown
      try {
        event = raw === undefined ? undefined : parseBoundedJson(raw)
      } catch {
        event = undefined
      }
      // An entry is a JSON object in field `e`; anything else is reported as a corrupt entry.
      if (typeof event !== 'object' || event === null || Array.isArray(event)) {
        return { id, event: { type: 'corrupt', raw: String(raw ?? fields.join(' ')).slice(0, 200) } }
      }
      return { id, event: event as Record<string, unknown> }
    })
  }
}
