/**
 * A snapshot: the coordination state under one prefix, captured to a file in one bounded pass (SCAN
 * on every master, one pipeline per batch with Redis's TIME in it), so that every read command can
 * answer from it later (`--from`, through RecordedSource). Not atomic across keys: each record keeps
 * the Redis time it was read, and the capture its time span. Conversation state, saved answers and
 * handover marker data are left out unless asked; the password is never in it.
 */
import { gunzipSync, gzipSync } from 'node:zlib'
import { idFromBytes, keyText } from '../bytes.js'
import { KeyLayout, SCHEMA_VERSION, type KeyKind, type Layout, type RedisKey } from '../keys.js'
import { PACKAGE_VERSION } from '../version.js'
import { DEFAULTS } from '../defaults.js'
import { emptyRecords, recordHash, type NodeRecord, type StateRecords } from './records.js'
import { PROBES, type RedisSource, type StreamEntry } from './source.js'

export const SNAPSHOT_FORMAT = 'botmesh-coord-snapshot'
export const SNAPSHOT_FORMAT_VERSION = 1

export interface SnapshotServer {
  name: string
  runId: string | null
  version: string | null
  role: string | null
}

export interface Snapshot {
  format: typeof SNAPSHOT_FORMAT
  formatVersion: number
  /** The botmesh-coord release that wrote it. */
  tool: string
  /** The key schema this release reads (the prefix's own schema record is among the records). */
  keySchema: number
  target: { url: string; prefix: string; layout: Layout }
  servers: SnapshotServer[]
  capture: {
    /** Redis's clock when the capture began and ended (ms): records were read in between. */
    startedAtMs: number
    finishedAtMs: number
    /** Wall time the capture took on the machine that ran it. */
    tookMs: number
    /** Keys under the prefix that SCAN returned. */
    keys: number
    /** Hashes read (chats, checkpoints, handover markers, leads, locks, replicas, the schema record). */
    records: number
    includeState: boolean
    /** Why the capture is not whole (--max-keys reached), or null. */
    partial: string | null
  }
  records: StateRecords
}

export interface CaptureOptions {
  /** Stop after this many keys (the snapshot then says it is partial). */
  maxKeys?: number
  /** Keep conversation state, saved answers and marker data. Default false. */
  includeState?: boolean
  /** Most recent events kept. Default 1000. */
  events?: number
  /** SCAN COUNT per batch. */
  count?: number
  /** After each batch: keys seen so far. */
  onProgress?: (keys: number) => void
  /** The URL as it may be written (its password masked). */
  url: string
}

/** The kinds read as hashes (queues are sorted sets: their tickets are in the chat hash too). */
const HASH_KINDS: ReadonlySet<KeyKind> = new Set(['chat', 'checkpoint', 'handover', 'lead', 'lock', 'replica'])
const TTL_KINDS: ReadonlySet<KeyKind> = new Set(['checkpoint', 'handover'])

function infoField(info: string, field: string): string | null {
  const m = new RegExp(`^${field}:(.*)$`, 'm').exec(info)
  return m ? m[1]!.trim() : null
}

/** Capture the state under `keys.prefix` from a live source (both layouts' keys: doctor checks for strays). */
export async function captureSnapshot(source: RedisSource, keys: KeyLayout, o: CaptureOptions): Promise<Snapshot> {
  const started = performance.now()
  const includeState = o.includeState === true
  const count = o.count ?? DEFAULTS.scanCount
  const startedAtMs = await source.time()
  const nodeCount = await source.nodeCount()
  const nodes: NodeRecord[] = []
  const servers: SnapshotServer[] = []
  for (let i = 0; i < nodeCount; i++) {
    const probes: NodeRecord['probes'] = {}
    for (const what of PROBES) {
      try {
        probes[what] = { value: await source.probe(i, what) }
      } catch (err) {
        probes[what] = { error: err instanceof Error ? err.message : String(err) }
      }
    }
    const info = probes.info && 'value' in probes.info ? probes.info.value : ''
    nodes.push({ name: source.nodeName(i), keys: [], probes })
    servers.push({
      name: source.nodeName(i),
      runId: infoField(info, 'run_id'),
      version: infoField(info, 'redis_version'),
      role: infoField(info, 'role'),
    })
  }
  const records = emptyRecords(startedAtMs, nodes)
  let hashesRead = 0
  const keep = (rawKey: RedisKey, reply: Record<string, string> | Error, at: number, ttl?: number) => {
    if (!(reply instanceof Error) && Object.keys(reply).length === 0) return
    records.hashes[keyText(rawKey)] = recordHash(keys, rawKey, reply, at, { ttl, includeState })
    hashesRead++
  }

  // The records every command reads first: the schema, the replica index, the event stream's tail.
  const [schema] = await source.hashes(null, [keys.schema])
  keep(keys.schema, schema!, startedAtMs)
  records.zsets[keys.replicaIndex] = { ids: await source.zrange(keys.replicaIndex), at: startedAtMs }
  const tail: StreamEntry[] = (await source.xrevrange(keys.events, '+', '-', o.events ?? 1000)).reverse()
  records.streams[keys.events] = { entries: tail, at: startedAtMs }

  // Every key under the prefix, master by master, in SCAN batches; each batch's hashes (and the TTLs
  // of checkpoints and markers) in one pipeline on that master, read at that master's TIME.
  const other = new KeyLayout(keys.prefix, keys.layout === 'cluster' ? 'standalone' : 'cluster')
  const kindOf = (k: Buffer) => keys.parse(k)?.kind ?? other.parse(k)?.kind ?? null
  let seen = 0
  let partial: string | null = null
  scan: for (let node = 0; node < nodeCount; node++) {
    let cursor = '0'
    do {
      const step = await source.scan(node, cursor, `${keys.prefix}:*`, count)
      cursor = step.cursor
      let batch = step.keys
      const cut = o.maxKeys !== undefined && seen + batch.length > o.maxKeys
      if (cut) batch = batch.slice(0, o.maxKeys! - seen)
      seen += batch.length
      nodes[node]!.keys!.push(...batch.map((b) => idFromBytes(b)))
      const hashes = batch.filter((b) => {
        const kind = kindOf(b)
        return kind !== null && HASH_KINDS.has(kind)
      })
      if (hashes.length) {
        const { replies, ttls, nowMs } = await source.batchRead(
          node,
          hashes,
          hashes.map((b) => TTL_KINDS.has(kindOf(b)!)),
        )
        hashes.forEach((b, i) => keep(b, replies[i]!, nowMs, ttls[i] ?? undefined))
      }
      o.onProgress?.(seen)
      if (cut || (o.maxKeys !== undefined && seen >= o.maxKeys && (cursor !== '0' || node < nodeCount - 1))) {
        partial = `stopped after --max-keys ${o.maxKeys} keys`
        break scan
      }
    } while (cursor !== '0')
  }
  const finishedAtMs = await source.time()
  return {
    format: SNAPSHOT_FORMAT,
    formatVersion: SNAPSHOT_FORMAT_VERSION,
    tool: `botmesh-coord ${PACKAGE_VERSION}`,
    keySchema: SCHEMA_VERSION,
    target: { url: o.url, prefix: keys.prefix, layout: keys.layout },
    servers,
    capture: {
      startedAtMs,
      finishedAtMs,
      tookMs: Math.round(performance.now() - started),
      keys: seen,
      records: hashesRead,
      includeState,
      partial,
    },
    records,
  }
}

/** The file's bytes: JSON, gzipped when the name ends in .gz. */
export function encodeSnapshot(s: Snapshot, gzip: boolean): Buffer {
  const json = Buffer.from(JSON.stringify(s))
  return gzip ? gzipSync(json) : json
}

/** Why a file is not a snapshot this release reads (a thrown Error with one line), or the snapshot. */
export function decodeSnapshot(bytes: Buffer): Snapshot {
  let text: string
  try {
    text = (bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString('utf8')
  } catch {
    throw new Error('not a snapshot: the gzip data is damaged')
  }
  let s: Partial<Snapshot>
  try {
    s = JSON.parse(text) as Partial<Snapshot>
  } catch {
    throw new Error('not a snapshot: not JSON')
  }
  if (!s || typeof s !== 'object' || s.format !== SNAPSHOT_FORMAT) throw new Error('not a botmesh-coord snapshot')
  if (typeof s.formatVersion !== 'number' || s.formatVersion > SNAPSHOT_FORMAT_VERSION)
    throw new Error(
      `snapshot format ${String(s.formatVersion)} is newer than this release reads (${SNAPSHOT_FORMAT_VERSION}): upgrade botmesh-coord`,
    )
  if (!s.records || !s.target || !s.capture) throw new Error('not a snapshot: records, target or capture missing')
  return s as Snapshot
}
