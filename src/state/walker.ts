/**
 * The reader's walk of the keyspace (./reader.ts owns one): bounded SCANs on every master (never a
 * full-keyspace listing), the keys of the kinds asked for read as a listing reads them (./bounded.ts),
 * and which masters answered — a Cluster master that does not is noted and the others are still read,
 * so that the reader's unreachable() can name it.
 */
import { KIND_SEGMENTS, type KeyKind, type KeyLayout, type RedisKey } from '../keys.js'
import { hasLoneSurrogate, keyNameFromBytes, redisKey, startsWithBytes } from '../bytes.js'
import { errorFromRedis, isConnectionError } from '../errors/from-redis.js'
import { DEFAULTS } from '../defaults.js'
import { listingPlan, type ListedHash, type ListingPlan } from './bounded.js'
import type { StateSource } from './source.js'
import type { Hash, ReadItem, ScanOptions } from './listing.js'
import type { MasterReach } from './reach.js'

/** A key of a SCAN batch that is one of ours, of a kind asked for. */
type ScannedKey = { rawKey: RedisKey; id: string; kind: KeyKind }
type ReadOptions = Pick<ScanOptions, 'fields' | 'whole'> & { keysOnly?: boolean }
/** The keys of one kind in a batch, and how a listing reads them (null: whole, or only `fields`). */
type ReadGroup = { kind: KeyKind; ks: ScannedKey[]; plan: ListingPlan | null }

/** Where a walk that goes on across calls stands: a master, and its SCAN cursor. */
export type ScanAt = { node: number; cursor: string }
/** How one step of such a walk reads: `keysOnly`, the names of the keys alone. */
export type StepOptions = Pick<ScanOptions, 'count' | 'fields'> & { keysOnly?: boolean }
/** One step's keys, where the next starts, and whether every master was walked. */
export interface ScanStepResult {
  items: Array<ReadItem>
  next: ScanAt
  wrapped: boolean
}

/** Batches of one master asked for ahead of the one being decoded (a walk without a limit). */
const SCAN_AHEAD = 3

/** How a walk asks its questions: through its reader's bounded call, counting the commands it sends. */
export interface WalkerHost {
  readonly source: StateSource
  readonly keys: KeyLayout
  /** One question to the source, bounded in time (StateReader's call). */
  call<T>(what: string, f: () => Promise<T>, rawKey?: RedisKey, gate?: boolean): Promise<T>
  /** Redis commands sent. */
  sent(n: number): void
}

/** A hash without fields (a key gone between the SCAN and the read), found without listing its fields. */
function isEmpty(h: Hash): boolean {
  for (const _ in h) return false
  return true
}

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

export class KeyspaceWalker {
  private heads: { id: string; heads: Buffer[] } | null = null

  constructor(
    private readonly host: WalkerHost,
    /** Which masters the walks read, and which failed. */
    private readonly reach: MasterReach,
  ) {}

  private get source(): StateSource {
    return this.host.source
  }

  /** How many masters to read from (a Cluster client loads its slots first: ./source.ts). */
  masterCount(): Promise<number> {
    return this.host.call('TIME', () => this.source.nodeCount(), undefined, false)
  }

  /**
   * Each of `nodes` masters SCANned for `pattern` (at most `maxKeys` keys each, `count` per call), until
   * `onKey` says stop (true). Otherwise whether every master was scanned to its end.
   */
  async survey(
    pattern: string,
    bound: { nodes: number; maxKeys: number; count: number },
    onKey: (k: Buffer) => boolean | void,
  ): Promise<boolean> {
    const { nodes, maxKeys, count } = bound
    let complete = true
    for (let node = 0; node < nodes; node++) {
      let cursor = '0'
      let looked = 0
      try {
        do {
          this.host.sent(1)
          const step = await this.host.call('SCAN', () => this.source.scan(node, cursor, pattern, count))
          cursor = step.cursor
          looked += count
          if (step.keys.some((b) => onKey(b) === true)) return true
        } while (cursor !== '0' && looked < maxKeys)
      } catch (err) {
        if (!this.reach.nodeFailed(node, err)) throw err
        complete = false
        continue
      }
      if (cursor !== '0') complete = false
    }
    return complete
  }

  /** StateReader.scanKinds: every key of the given kinds under the prefix, in one pass over the keyspace. */
  async *scanKinds(kinds: KeyKind[], options: ScanOptions = {}): AsyncGenerator<Array<ReadItem>> {
    const nodes = await this.masterCount()
    if (options.limit === undefined) {
      let seen = 0
      for await (const step of mergeWalks(Array.from({ length: nodes }, (_, node) => this.walkAhead(node, kinds, options)))) {
        seen += step.scanned
        options.onProgress?.(seen)
        if (step.items.length) yield step.items
      }
      this.reach.walkedAll = true
      return
    }
    yield* this.walkLimited(nodes, kinds, options, options.limit)
  }

  /** A walk with a limit: one batch at a time, master after master, so that nothing past the limit is read. */
  private async *walkLimited(nodes: number, kinds: KeyKind[], options: ScanOptions, limit: number): AsyncGenerator<Array<ReadItem>> {
    let seen = 0
    for (let node = 0; node < nodes; node++) {
      let cursor = '0'
      do {
        let step: Awaited<ReturnType<KeyspaceWalker['scanBatch']>>
        try {
          step = await this.scanBatch(node, cursor, kinds, options)
        } catch (err) {
          if (!this.reach.nodeFailed(node, err)) throw err
          break
        }
        cursor = step.cursor
        seen += step.scanned
        options.onProgress?.(seen)
        if (step.items.length) yield step.items
        if (seen >= limit) return
      } while (cursor !== '0')
      if (!this.reach.failed.has(this.source.nodeName(node))) this.reach.answered.add(this.source.nodeName(node))
    }
    this.reach.walkedAll = true
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
      if (!this.reach.nodeFailed(node, err)) throw err
      return
    }
    this.reach.answered.add(this.source.nodeName(node))
  }

  /** StateReader.scanStep: one SCAN batch on one master, from where `at` stands, and the next place to start. */
  async scanStep(at: ScanAt, kinds: KeyKind[], options: StepOptions = {}): Promise<ScanStepResult> {
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
    options: StepOptions,
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
    const keys = this.host.keys
    const wanted = new Set(kinds)
    const pattern = keys.scanPatternOf(kinds)
    this.host.sent(1)
    // Keys as bytes: a key that is not UTF-8 is read back exactly (an id with lone surrogates, ../bytes.ts).
    const { cursor: next, keys: batch } = await this.host.call('SCAN', () => this.source.scan(node, cursor, pattern, count))
    const ours: ScannedKey[] = []
    const heads = this.kindHeads(kinds)
    // A neighbour prefix's key the pattern let through (`shop:cx:…`) is not counted as scanned.
    let scanned = 0
    for (const bytes of batch) {
      if (!keys.owns(bytes)) continue
      scanned++
      // Another kind's key (a checkpoint, a queue) is passed over before it is decoded.
      if (heads && !heads.some((h) => startsWithBytes(bytes, h))) continue
      const text = keyNameFromBytes(bytes)
      const parsed = keys.parse(text)
      if (parsed !== null && wanted.has(parsed.kind)) ours.push({ rawKey: redisKey(text), id: parsed.id, kind: parsed.kind })
    }
    return { cursor: next, scanned, ours }
  }

  /**
   * The bytes every key of these kinds starts with (`<prefix>:<segment>:`), or null when a key's bytes
   * cannot be told apart before it is decoded (a prefix holding a lone surrogate).
   */
  private kindHeads(kinds: KeyKind[]): Buffer[] | null {
    const p = this.host.keys.prefix
    if (hasLoneSurrogate(p)) return null
    const id = kinds.join(',')
    if (this.heads?.id !== id) this.heads = { id, heads: kinds.map((k) => Buffer.from(`${p}:${KIND_SEGMENTS[k]}:`, 'utf8')) }
    return this.heads.heads
  }

  /**
   * What a listing shows of a SCAN batch's keys (./bounded.ts: named fields, sizes, a queue's head, a
   * page of candidates; one script call per kind on its node), or only `fields` (HMGET), or with
   * `keysOnly` nothing.
   */
  private async readKeys(node: number, ours: ScannedKey[], options: ReadOptions): Promise<ReadItem[]> {
    const out: ReadItem[] = []
    if (options.keysOnly) {
      for (const k of ours) out.push({ rawKey: k.rawKey, id: k.id, kind: k.kind, hash: {} })
      return out
    }
    if (!ours.length) return out
    const sentBefore = this.source.hashCommands
    const groups = readGroups(ours, options)
    const replies = await this.host.call('HMGET', () => Promise.all(groups.map((g) => this.readGroup(node, g, options))))
    // One per key with pipelines; one per batch and kind when the source read it with a script.
    this.host.sent(sentBefore === undefined ? ours.length : this.source.hashCommands! - sentBefore)
    groups.forEach(({ ks, plan }, g) => {
      ks.forEach((k, i) => {
        const item = readItem(k, plan, replies[g]![i] ?? {})
        if (item) out.push(item)
      })
    })
    return out
  }

  /** The keys of one kind of a batch, read as a listing reads them, or their hashes (or only `fields`). */
  private readGroup(node: number, { kind, ks, plan }: ReadGroup, options: ReadOptions): Promise<Array<ListedHash | Hash | Error>> {
    if (plan)
      return this.source.listing(
        node,
        ks.map((k) => ({ key: k.rawKey, queue: kind === 'chat' ? this.host.keys.chat(k.id).queue : undefined })),
        plan,
      )
    return this.source.hashes(
      node,
      ks.map((k) => k.rawKey),
      ks.map((k) => options.fields?.[k.kind]),
    )
  }
}

/** A batch's keys by kind, each kind with how a listing reads it (none when it is read whole or by `fields`). */
function readGroups(ours: ScannedKey[], options: ReadOptions): ReadGroup[] {
  const byKind = new Map<KeyKind, ScannedKey[]>()
  for (const k of ours) {
    const group = byKind.get(k.kind)
    if (group) group.push(k)
    else byKind.set(k.kind, [k])
  }
  return [...byKind].map(([kind, ks]) => ({
    kind,
    ks,
    plan: options.fields?.[kind] || options.whole?.includes(kind) ? null : listingPlan(kind),
  }))
}

/** What a walk yields of one key's reply: its fields, the error Redis answered, or nothing (a key gone). */
function readItem(k: ScannedKey, plan: ListingPlan | null, reply: ListedHash | Hash | Error): ReadItem | null {
  const { id, kind } = k
  // A node that cannot serve the key now (CLUSTERDOWN, MOVED during a failover, LOADING) is not
  // a corrupt value: the batch fails, and a Cluster listing names the master as unreachable.
  if (reply instanceof Error && isConnectionError(reply)) throw errorFromRedis(reply, k.rawKey)
  if (reply instanceof Error) return { rawKey: k.rawKey, id, kind, hash: { __error: reply.message } }
  const listed = plan ? (reply as ListedHash) : null
  if (listed)
    return listed.size > 0 ? { rawKey: k.rawKey, id, kind, hash: listed.fields, meta: { size: listed.size, extra: listed.extra } } : null
  return isEmpty(reply as Hash) ? null : { rawKey: k.rawKey, id, kind, hash: reply as Hash }
}
