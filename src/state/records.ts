/**
 * Recorded answers: what a snapshot (`botmesh-coord snapshot`) or a recording of the dashboard
 * (`watch --record`, one set per refresh) holds — the raw records as Redis answered them, each with
 * the Redis time it was read — and `RecordedSource`, which answers the read side's questions
 * (./source.ts) from them, so every read command and the dashboard replay through the code that
 * reads a live server. Times stay Redis's: a TTL is replayed relative to the record's read time.
 */
import { CHECKPOINT_FIELDS, HANDOVER_FIELDS } from '../wire/hashes.js'
import { idFromBytes, idToBytes, keyText } from '../bytes.js'
import type { ChatKeys, KeyKind, KeyLayout, RedisKey } from '../keys.js'
import type { ChatRaw, ChatReadOptions, Hash, ProbeName, StateSource, StreamEntry } from './source.js'
import { INSPECT_TICKETS, listFromHash, listingPlan, type ListedHash, type ListingPlan } from './bounded.js'

export interface HashRecord {
  /** The fields read (absent when Redis answered an error). */
  h?: Hash
  /** The error Redis answered for this key (WRONGTYPE…). */
  e?: string
  /** PTTL when read: ms left, -1 no expiry. */
  ttl?: number
  /** Redis ms when read. */
  at: number
  /** Only these fields were read (the dashboard's HMGET); absent: the whole hash. */
  fields?: string[]
  /** Fields left out of the record for privacy (conversation state, saved answers, marker data): their size in bytes. */
  omitted?: Record<string, number>
  /** A listing's bounded read (../state/bounded.ts): the hash's field count, and its queue's length or measured field's. */
  listed?: { size: number; extra: number }
}

/** Key names in order, held packed (a snapshot read back: ./packed-records.ts PackedNames). */
export interface KeyNameList extends Iterable<string> {
  readonly length: number
  at(i: number): string | undefined
}

export interface NodeRecord {
  /** host:port */
  name: string
  /** Every key under the prefix that SCAN returned on this master, in scan order (a full snapshot only). */
  keys?: string[] | KeyNameList
  /** The master's answers to doctor's probes: the value, or the error it answered. */
  probes?: Partial<Record<ProbeName, { value: string } | { error: string }>>
}

export interface StateRecords {
  /** Redis's clock when the read began (ms): "now" for everything replayed from these records. */
  nowMs: number
  nodes: NodeRecord[]
  /** Hashes by raw key (a key that is not UTF-8 as its id string, ../bytes.ts). */
  hashes: Record<string, HashRecord>
  /** Sorted sets (the replica index) by key: members lowest score first. */
  zsets: Record<string, { ids: string[]; at: number }>
  /** Streams (the event stream) by key: the entries read, oldest first. */
  streams: Record<string, { entries: StreamEntry[]; at: number }>
}

export function emptyRecords(nowMs: number, nodes: NodeRecord[] = []): StateRecords {
  return { nowMs, nodes, hashes: {}, zsets: {}, streams: {} }
}

/** Fields that hold what users said or what a flow stored, by kind: left out of a record unless asked. */
export const PRIVATE_FIELDS: Partial<Record<KeyKind, string[]>> = { checkpoint: [CHECKPOINT_FIELDS.data], handover: [HANDOVER_FIELDS.data] }

/** A hash as recorded: the private fields of its kind left out (their sizes kept) unless `includeState`. */
export function recordHash(
  keys: KeyLayout,
  rawKey: RedisKey,
  reply: Hash | Error,
  at: number,
  o: { ttl?: number; includeState?: boolean; fields?: string[]; omitted?: Record<string, number> } = {},
): HashRecord {
  if (reply instanceof Error) return { e: reply.message, at }
  const rec: HashRecord = { h: reply, at }
  if (o.ttl !== undefined) rec.ttl = o.ttl
  if (o.fields) rec.fields = o.fields
  // Left out by the read itself (their sizes read instead of their values).
  if (o.omitted) rec.omitted = { ...o.omitted }
  const kind = keys.parse(rawKey)?.kind
  const hidden = !o.includeState && kind ? PRIVATE_FIELDS[kind] : undefined
  if (hidden?.some((f) => reply[f] !== undefined)) {
    const h = { ...reply }
    rec.omitted ??= {}
    for (const f of hidden) {
      if (h[f] === undefined) continue
      rec.omitted[f] = Buffer.byteLength(h[f]!)
      delete h[f]
    }
    rec.h = h
  }
  return rec
}

/** A stream id (`ms-seq`, `ms`, `-`, `+`, `(id`) as a comparable pair; `end` completes a bare `ms` upwards. */
function streamId(id: string, end: boolean): [bigint, bigint] {
  if (id === '-') return [0n, 0n]
  if (id === '+') return [2n ** 64n, 2n ** 64n]
  const [ms, seq] = id.split('-')
  return [BigInt(ms!), seq === undefined ? (end ? 2n ** 64n - 1n : 0n) : BigInt(seq)]
}
const cmp = (a: [bigint, bigint], b: [bigint, bigint]) =>
  a[0] === b[0] ? (a[1] === b[1] ? 0 : a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1

/** The entries in [start, end] (either bound exclusive with a leading `(`), oldest first. */
function inRange(entries: StreamEntry[], start: string, end: string): StreamEntry[] {
  const lo = start.startsWith('(') ? { id: streamId(start.slice(1), true), open: true } : { id: streamId(start, false), open: false }
  const hi = end.startsWith('(') ? { id: streamId(end.slice(1), false), open: true } : { id: streamId(end, true), open: false }
  return entries.filter(([id]) => {
    const v = streamId(id, false)
    const a = cmp(v, lo.id)
    const b = cmp(v, hi.id)
    return (lo.open ? a > 0 : a >= 0) && (hi.open ? b < 0 : b <= 0)
  })
}

/**
 * What a read-only view of packed records (./packed-records.ts asObject) answers for this symbol: the
 * store itself, whose lookups skip the view.
 */
export const PACKED_STORE = Symbol.for('botmesh-coord.packed-records')

/** Answers the read side's questions from recorded answers (a snapshot, or one refresh of a recording). */
export class RecordedSource implements StateSource {
  readonly origin = 'recorded' as const
  readonly records: StateRecords
  /** The record of a key (its text, ../bytes.ts keyText). */
  readonly record: (key: string) => HashRecord | undefined

  constructor(records: StateRecords) {
    this.records = records
    const packed = (records.hashes as { [PACKED_STORE]?: { get(key: string): HashRecord | undefined } })[PACKED_STORE]
    this.record = packed ? (key) => packed.get(key) : (key) => this.records.hashes[key]
  }

  nodeCount(): Promise<number> {
    return Promise.resolve(Math.max(1, this.records.nodes.length))
  }

  nodeName(node: number): string {
    return this.records.nodes[node]?.name ?? `node ${node}`
  }

  time(): Promise<number> {
    return Promise.resolve(this.records.nowMs)
  }

  /** Where each node's keys that match a pattern stand in its list, kept for the walk's next batches (every batch asks again). */
  private readonly matched = new Map<string, number[]>()

  scan(node: number, cursor: string, pattern: string, count: number): Promise<{ cursor: string; keys: Buffer[] }> {
    const at = `${node}\u0000${pattern}`
    const names = this.records.nodes[node]?.keys ?? []
    let all = this.matched.get(at)
    if (!all) {
      const match = globMatcher(pattern)
      all = []
      for (let i = 0; i < names.length; i++) if (match(names.at(i)!)) all.push(i)
      this.matched.set(at, all)
    }
    const from = Number(cursor)
    const to = from + Math.max(1, count)
    return Promise.resolve({ cursor: to >= all.length ? '0' : String(to), keys: all.slice(from, to).map((i) => idToBytes(names.at(i)!)) })
  }

  private hash(key: RedisKey): Hash | Error {
    const rec = this.record(keyText(key))
    if (!rec) return {}
    if (rec.e !== undefined) return new Error(rec.e)
    return rec.h ?? {}
  }

  hashes(_node: number | null, keys: RedisKey[], fields?: Array<string[] | undefined>): Promise<Array<Hash | Error>> {
    return Promise.resolve(
      keys.map((k, i) => {
        const h = this.hash(k)
        const f = fields?.[i]
        if (h instanceof Error || !f) return h
        return Object.fromEntries(f.filter((x) => h[x] !== undefined).map((x) => [x, h[x]!]))
      }),
    )
  }

  /** A listing's read of a recorded key: as it was read (a recording of listings), or taken from the whole hash (a snapshot). */
  private listed(key: RedisKey, plan: ListingPlan): ListedHash | Error {
    const rec = this.record(keyText(key))
    if (!rec) return { fields: {}, size: 0, extra: 0 }
    if (rec.e !== undefined) return new Error(rec.e)
    const h = rec.h ?? {}
    if (rec.listed) return { fields: h, ...rec.listed }
    const out = listFromHash(h, plan)
    // A snapshot taken without --include-state kept the length of what it left out.
    if (plan.measure !== null && rec.omitted?.[plan.measure] !== undefined) out.extra = rec.omitted[plan.measure]!
    return out
  }

  listing(_node: number | null, items: Array<{ key: RedisKey; queue?: RedisKey }>, plan: ListingPlan): Promise<Array<ListedHash | Error>> {
    return Promise.resolve(items.map((it) => this.listed(it.key, plan)))
  }

  hgetall(key: RedisKey): Promise<Hash> {
    const h = this.hash(key)
    return h instanceof Error ? Promise.reject(h) : Promise.resolve(h)
  }

  zrange(key: RedisKey): Promise<string[]> {
    return Promise.resolve(this.records.zsets[keyText(key)]?.ids ?? [])
  }

  chat(k: ChatKeys, o: ChatReadOptions = {}): Promise<ChatRaw> {
    const plan = { ...listingPlan('chat', { tickets: o.tickets ?? INSPECT_TICKETS })!, also: o.ticket ? [String(o.ticket)] : undefined }
    const state = this.listed(k.state, plan)
    const recs = [k.state, k.checkpoint, k.handover].map((x) => this.record(keyText(x)))
    // Read together in Redis; here each record has its own read time: the chat's is its state's.
    const nowMs = recs.find((r) => r !== undefined)?.at ?? this.records.nowMs
    const ttl = (key: RedisKey): number => {
      const rec = this.record(keyText(key))
      if (!rec || rec.e !== undefined) return -2
      if (rec.ttl === undefined || rec.ttl < 0) return rec.ttl ?? -1
      return Math.max(0, rec.at + rec.ttl - nowMs)
    }
    // As a live read: the checkpoint's data only when asked for, its length otherwise.
    let checkpoint = this.hash(k.checkpoint)
    let checkpointDataBytes: number | null = null
    if (!o.checkpointData && !(checkpoint instanceof Error) && Object.keys(checkpoint).length) {
      const cp = this.listed(k.checkpoint, listingPlan('checkpoint')!)
      if (!(cp instanceof Error)) {
        checkpoint = cp.fields
        checkpointDataBytes = cp.extra
      }
    }
    return Promise.resolve({
      state: state instanceof Error ? state : state.fields,
      queued: state instanceof Error ? 0 : state.extra,
      checkpoint,
      checkpointDataBytes,
      checkpointTtl: ttl(k.checkpoint),
      handover: this.hash(k.handover),
      handoverTtl: ttl(k.handover),
      nowMs,
    })
  }

  xrange(key: string, start: string, end: string, count: number): Promise<StreamEntry[]> {
    return Promise.resolve(inRange(this.records.streams[key]?.entries ?? [], start, end).slice(0, count))
  }

  xrevrange(key: string, end: string, start: string, count: number): Promise<StreamEntry[]> {
    return Promise.resolve(
      inRange(this.records.streams[key]?.entries ?? [], start, end)
        .slice(-count)
        .reverse(),
    )
  }

  probe(node: number, what: ProbeName): Promise<string> {
    const p = this.records.nodes[node]?.probes?.[what]
    if (!p) return Promise.reject(new Error(`ERR unknown: ${what} was not captured in this snapshot`))
    return 'value' in p ? Promise.resolve(p.value) : Promise.reject(new Error(p.error))
  }
}

/**
 * A live source that keeps what it answers: the dashboard's bounded reads of one refresh, recorded
 * (`watch --record`). `take()` hands over the records since the last take and starts new ones.
 */
export class RecordingSource implements StateSource {
  readonly origin = 'redis' as const
  private current: StateRecords

  constructor(
    readonly inner: StateSource,
    private readonly keys: KeyLayout,
    private readonly includeState = false,
  ) {
    this.current = emptyRecords(0)
  }

  take(): StateRecords {
    const done = this.current
    this.current = emptyRecords(
      0,
      done.nodes.map((n) => ({ name: n.name })),
    )
    return done
  }

  private keep(key: RedisKey, reply: Hash | Error, o: { ttl?: number; fields?: string[]; listed?: HashRecord['listed'] } = {}): void {
    const at = this.current.nowMs
    const text = keyText(key)
    const had = this.current.hashes[text]
    // A whole hash read once in this refresh is not replaced by a partial read of it.
    if (had && !had.fields && o.fields) return
    const rec = recordHash(this.keys, key, reply, at, { ...o, includeState: this.includeState })
    if (o.listed && !(reply instanceof Error)) rec.listed = o.listed
    this.current.hashes[text] = rec
  }

  nodeCount(): Promise<number> {
    return this.inner.nodeCount()
  }
  nodeName(node: number): string {
    return this.inner.nodeName(node)
  }
  async time(): Promise<number> {
    const t = await this.inner.time()
    if (!this.current.nowMs) this.current.nowMs = t
    return t
  }
  scan(node: number, cursor: string, pattern: string, count: number): Promise<{ cursor: string; keys: Buffer[] }> {
    return this.inner.scan(node, cursor, pattern, count).then((r) => {
      const n = (this.current.nodes[node] ??= { name: this.inner.nodeName(node) })
      // A walk of this prefix's keys records its own alone, not a neighbour's the pattern let through
      // (the survey of other prefixes' schema records, `*:schema`, keeps what it found).
      const ks = (n.keys ??= []) as string[] // a recording's lists are arrays
      const mine = pattern.startsWith(`${this.keys.prefix}:`)
      for (const b of r.keys) if (!mine || this.keys.owns(b)) ks.push(idFromBytes(b))
      return r
    })
  }
  async hashes(node: number | null, keys: RedisKey[], fields?: Array<string[] | undefined>): Promise<Array<Hash | Error>> {
    const out = await this.inner.hashes(node, keys, fields)
    out.forEach((h, i) => this.keep(keys[i]!, h, { fields: fields?.[i] }))
    return out
  }
  async listing(
    node: number | null,
    items: Array<{ key: RedisKey; queue?: RedisKey }>,
    plan: ListingPlan,
  ): Promise<Array<ListedHash | Error>> {
    const out = await this.inner.listing(node, items, plan)
    out.forEach((r, i) =>
      r instanceof Error
        ? this.keep(items[i]!.key, r)
        : this.keep(items[i]!.key, r.fields, { fields: Object.keys(r.fields), listed: { size: r.size, extra: r.extra } }),
    )
    return out
  }
  async hgetall(key: RedisKey): Promise<Hash> {
    const h = await this.inner.hgetall(key)
    this.keep(key, h)
    return h
  }
  async zrange(key: RedisKey): Promise<string[]> {
    const ids = await this.inner.zrange(key)
    this.current.zsets[keyText(key)] = { ids, at: this.current.nowMs }
    return ids
  }
  async chat(k: ChatKeys, o?: ChatReadOptions): Promise<ChatRaw> {
    const r = await this.inner.chat(k, o)
    const at = r.nowMs
    const put = (key: RedisKey, h: Hash | Error, ttl?: number | Error) => {
      if (!(h instanceof Error) && Object.keys(h).length === 0) return
      this.current.hashes[keyText(key)] = recordHash(this.keys, key, h, at, {
        ttl: typeof ttl === 'number' ? ttl : undefined,
        includeState: this.includeState,
      })
    }
    if (r.state instanceof Error || Object.keys(r.state).length)
      this.keep(
        k.state,
        r.state,
        r.state instanceof Error ? {} : { fields: Object.keys(r.state), listed: { size: Object.keys(r.state).length, extra: r.queued } },
      )
    put(k.checkpoint, r.checkpoint, r.checkpointTtl)
    put(k.handover, r.handover, r.handoverTtl)
    return r
  }
  private keepEntries(key: string, entries: StreamEntry[]): StreamEntry[] {
    const s = (this.current.streams[key] ??= { entries: [], at: this.current.nowMs })
    const seen = new Set(s.entries.map(([id]) => id))
    s.entries.push(...entries.filter(([id]) => !seen.has(id)))
    s.entries.sort((a, b) => cmp(streamId(a[0], false), streamId(b[0], false)))
    return entries
  }
  xrange(key: string, start: string, end: string, count: number): Promise<StreamEntry[]> {
    return this.inner.xrange(key, start, end, count).then((e) => this.keepEntries(key, e))
  }
  xrevrange(key: string, end: string, start: string, count: number): Promise<StreamEntry[]> {
    return this.inner.xrevrange(key, end, start, count).then((e) => this.keepEntries(key, e))
  }
  probe(node: number, what: ProbeName): Promise<string> {
    return this.inner.probe(node, what)
  }
}

/**
 * SCAN MATCH as Redis reads the patterns the reader sends: `<prefix>:<kind>:*`, `<prefix>:[<kinds>]:*`,
 * `<prefix>:[<first letters>]*` and `*:schema` (`*` any run, `[...]` one of those characters; a prefix
 * holds no glob characters).
 */
function globMatcher(pattern: string): (key: string) => boolean {
  const source = pattern.replace(/\[[^\]]*\]|\*|[^[*]+/g, (part) => {
    if (part === '*') return '[\\s\\S]*'
    if (part.startsWith('[')) return `[${part.slice(1, -1).replace(/[\\\]^-]/g, '\\$&')}]`
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  })
  const re = new RegExp(`^${source}$`)
  return (key) => re.test(key)
}
