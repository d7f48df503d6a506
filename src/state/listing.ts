/**
 * What the read side (./reader.ts) makes of the answers it gets, without asking anything: what a walk
 * of the keyspace (./walker.ts) yields, the decoders of each kind, the batches a streamed listing
 * decodes them into (a corrupt key is reported beside the items, and the listing goes on past it),
 * and the schema record, heartbeat records and event-stream entries as the reader returns them.
 */
import { REPLICA_FIELDS, SCHEMA_FIELDS } from '../wire/hashes.js'
import type { KeyKind, Layout, RedisKey } from '../keys.js'
import { keyText } from '../bytes.js'
import { CorruptStateError } from '../errors/corrupt-state-error.js'
import { parseBoundedJson } from '../wire/json.js'
import { decodeChat, decodeCheckpoint, decodeHandover, decodeLead, decodeLock, decodeReplica, type ReplicaSnapshot } from './decode.js'

export interface ScanOptions {
  /** Read only these fields (HMGET) of the keys of a kind instead of the whole hash (HGETALL). */
  fields?: Partial<Record<KeyKind, string[]>>
  /** SCAN COUNT per call (a bound on the work of one Redis call). Default DEFAULTS.scanCount. */
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

export type Hash = Record<string, string>
/** Beside a listing's fields: the hash's field count, and its queue's length or its measured field's (./bounded.ts). */
export type ListedMeta = { size: number; extra: number }
/** A key read by a walk: its fields (all, or a listing's), and what the listing measured. */
export type ReadItem = { rawKey: RedisKey; id: string; kind: KeyKind; hash: Hash; meta?: ListedMeta }

export type Decoders = Partial<Record<KeyKind, (id: string, rawKey: RedisKey, h: Hash, meta?: ListedMeta) => unknown>>
export type DecodedBy<F> = F extends (...a: never[]) => infer R ? Exclude<R, null> : never

/** One batch of a streamed listing (StateReader.listStream): its decoded items by kind, and its corrupt keys. */
export interface ListedBatch<D extends Decoders> {
  items: Array<{ [K in keyof D & KeyKind]: { kind: K; value: DecodedBy<D[K]> } }[keyof D & KeyKind]>
  corrupt: Array<Corrupt & { kind: KeyKind }>
}

/** A streamed listing: its batches, and once the walk has ended the keys seen and whether `limit` cut it short. */
export type ListingStream<D extends Decoders> = {
  batches: AsyncGenerator<ListedBatch<D>>
  summary(): { scanned: number; truncated: boolean }
}

/** The decoders of the listings, by kind (a null result skips the key). */
export const LISTING_DECODERS = {
  chat: (id: string, raw: RedisKey, h: Hash, m?: ListedMeta) => decodeChat(id, raw, h, m?.extra),
  lead: (id: string, raw: RedisKey, h: Hash, m?: ListedMeta) => decodeLead(id, raw, h, m?.size),
  lock: (id: string, raw: RedisKey, h: Hash) => decodeLock(id, raw, h),
  checkpoint: (id: string, raw: RedisKey, h: Hash, m?: ListedMeta) => decodeCheckpoint(id, raw, h, m?.extra),
  handover: (id: string, raw: RedisKey, h: Hash, m?: ListedMeta) => decodeHandover(id, raw, h, m?.extra),
  // A record with only an eviction tombstone is not a live replica.
  replica: (id: string, raw: RedisKey, h: Hash) => (h[REPLICA_FIELDS.beat] === undefined ? null : decodeReplica(id, raw, h)),
} as const

/** A walk's batch decoded: each key's item (a null decode skips it), or why it is corrupt. */
function decodeBatch<D extends Decoders>(decoders: D, batch: ReadItem[]): ListedBatch<D> {
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
  return out
}

/**
 * The batches of a walk (`walk`, given the options it reads with) decoded as the walk reads them:
 * nothing is kept between batches. The keys seen are counted as the walk reports them.
 */
export function streamListing<D extends Decoders>(
  decoders: D,
  options: ScanOptions,
  walk: (options: ScanOptions) => AsyncGenerator<ReadItem[]>,
): ListingStream<D> {
  let scanned = 0
  const batches = walk({
    ...options,
    onProgress: (n) => {
      scanned = n
      options.onProgress?.(n)
    },
  })
  async function* decoded(): AsyncGenerator<ListedBatch<D>> {
    for await (const batch of batches) yield decodeBatch(decoders, batch)
  }
  return {
    batches: decoded(),
    summary: () => ({ scanned, truncated: options.limit !== undefined && scanned >= options.limit }),
  }
}

/** A streamed listing drained: every item and corrupt key kept, by kind. */
export async function drainListing<D extends Decoders>(
  kinds: KeyKind[],
  stream: ListingStream<D>,
): Promise<{ [K in keyof D]: Listing<DecodedBy<D[K]>> }> {
  const result = Object.fromEntries(kinds.map((k) => [k, { items: [], corrupt: [], scanned: 0, truncated: false }])) as Record<
    string,
    Listing<unknown>
  >
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

/** A heartbeat record read from the replica index's ids into `out`: a live replica, a corrupt key, or nothing (no beat). */
export function addReplica(out: Listing<ReplicaSnapshot>, id: string, rawKey: RedisKey, h: Hash | Error): void {
  if (h instanceof Error) {
    out.corrupt.push({
      rawKey: keyText(rawKey),
      error: /WRONGTYPE/.test(h.message) ? 'wrong Redis type' : h.message,
    })
    return
  }
  if (h[REPLICA_FIELDS.beat] === undefined) return
  try {
    out.items.push(decodeReplica(id, rawKey, h))
  } catch (e) {
    out.corrupt.push({ rawKey: keyText(rawKey), error: (e as Error).message })
  }
}

/** An entry of the event stream: a JSON object in field `e`; anything else is reported as a corrupt entry. */
export function eventEntry(id: string, fields: string[]): { id: string; event: Record<string, unknown> } {
  const i = fields.indexOf('e')
  const raw = i >= 0 && i % 2 === 0 ? fields[i + 1] : undefined
  let event: unknown
  try {
    event = raw === undefined ? undefined : parseBoundedJson(raw)
  } catch {
    event = undefined
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    return { id, event: { type: 'corrupt', raw: String(raw ?? fields.join(' ')).slice(0, 200) } }
  }
  return { id, event: event as Record<string, unknown> }
}

export interface SchemaInfo {
  version: number
  layout: Layout
  createdAt: number | null
}

/** The schema record (`<prefix>:schema`) read: null when there is none; a corrupt one throws. */
export function schemaOf(rawKey: RedisKey, h: Hash): SchemaInfo | null {
  if (!h || Object.keys(h).length === 0) return null
  const version = h[SCHEMA_FIELDS.version] ?? ''
  if (!/^\d+$/.test(version)) {
    throw new CorruptStateError(rawKey, `field ${SCHEMA_FIELDS.version} is not a whole number: ${JSON.stringify(version.slice(0, 40))}`)
  }
  const layout = h[SCHEMA_FIELDS.layout] ?? 'standalone'
  if (layout !== 'standalone' && layout !== 'cluster')
    throw new CorruptStateError(rawKey, `field ${SCHEMA_FIELDS.layout} is ${JSON.stringify(layout.slice(0, 40))}`)
  const createdAt = h[SCHEMA_FIELDS.createdAt]
  return { version: Number(version), layout, createdAt: createdAt && /^\d+$/.test(createdAt) ? Number(createdAt) : null }
}

/** The reason a key is corrupt, without the key (the listing names it). */
export function corruptReason(err: CorruptStateError): string {
  return err.message.replace(/^corrupt value at Redis key "[^"]*":\s*/, '')
}

/** The XREVRANGE bounds (end, start) of StateReader.events: before an entry id, up to `untilMs`, from `sinceMs`. */
export function eventsRange(options: { sinceMs?: number; untilMs?: number; before?: string }): [end: string, start: string] {
  const end =
    options.before !== undefined ? `(${options.before}` : options.untilMs !== undefined ? String(Math.floor(options.untilMs)) : '+'
  return [end, options.sinceMs === undefined ? '-' : String(Math.max(0, Math.floor(options.sinceMs)))]
}
