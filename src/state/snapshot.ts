/**
 * A snapshot: the coordination state under one prefix, captured to a file in one bounded pass (SCAN
 * on every master, one pipeline per batch with Redis's TIME in it), so that every read command can
 * answer from it later (`--from`, through RecordedSource). Not atomic across keys: each record keeps
 * the Redis time it was read, and the capture its time span. Conversation state, saved answers and
 * handover marker data are left out unless asked; the password is never in it.
 */
import { idFromBytes, keyText } from '../bytes.js'
import { KeyLayout, SCHEMA_VERSION, type KeyKind, type Layout, type RedisKey } from '../keys.js'
import { PACKAGE_VERSION } from '../version.js'
import { DEFAULTS } from '../defaults.js'
import { PRIVATE_FIELDS, recordHash, type HashRecord, type NodeRecord, type StateRecords } from './records.js'
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
    /** Keys of the prefix's own shapes that SCAN returned (a neighbour prefix's, `shop:eu:…`, are not counted). */
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

/**
 * Batches read ahead of the ones being written (snapshot), in all: Redis works while the CLI writes.
 * Shared by the masters walked at once (at least one each), so memory does not grow with their
 * number: a Cluster's masters already work side by side.
 */
const READ_AHEAD = 3

/** The kinds read as hashes (queues are sorted sets: their tickets are in the chat hash too). */
const HASH_KINDS: ReadonlySet<KeyKind> = new Set(['chat', 'checkpoint', 'handover', 'lead', 'lock', 'replica'])
const TTL_KINDS: ReadonlySet<KeyKind> = new Set(['checkpoint', 'handover'])

function infoField(info: string, field: string): string | null {
  const m = new RegExp(`^${field}:(.*)$`, 'm').exec(info)
  return m ? m[1]!.trim() : null
}

/** What a snapshot holds before its walk of the keyspace: all but its hashes, its key lists and its capture. */
export type SnapshotHead = Omit<Snapshot, 'capture' | 'records'> & { records: Omit<StateRecords, 'hashes' | 'nodes'> }

/**
 * Where a capture goes, piece by piece as it is read: the CLI's snapshot -o writes it to its file as
 * the walk goes (commands/snapshot/writer.ts), so a million chats are never held in memory at once.
 */
export interface SnapshotSink {
  start(head: SnapshotHead): void | Promise<void>
  /** The hashes of one batch, by raw key (../bytes.ts keyText). */
  hashes(records: Array<[string, HashRecord]>): void | Promise<void>
  /** The keys one SCAN batch returned on master `node` (a node's key list, in scan order). */
  nodeKeys(node: number, names: string[]): void
  /** The masters (their probes; their keys were given to nodeKeys) and how the capture went. */
  finish(nodes: NodeRecord[], capture: Snapshot['capture']): void | Promise<void>
}

/** The masters' names and probes (INFO and the rest of doctor's), and what INFO says of each server. */
async function probeServers(source: RedisSource): Promise<{ nodes: NodeRecord[]; servers: SnapshotServer[] }> {
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
    nodes.push({ name: source.nodeName(i), probes })
    servers.push({
      name: source.nodeName(i),
      runId: infoField(info, 'run_id'),
      version: infoField(info, 'redis_version'),
      role: infoField(info, 'role'),
    })
  }
  return { nodes, servers }
}

/**
 * Capture the state under `keys.prefix` from a live source into `sink`, batch by batch (both
 * layouts' keys: doctor checks for strays). Returns how the capture went.
 */
export async function captureTo(source: RedisSource, keys: KeyLayout, o: CaptureOptions, sink: SnapshotSink): Promise<Snapshot['capture']> {
  const started = performance.now()
  const includeState = o.includeState === true
  const count = o.count ?? DEFAULTS.scanCount
  const startedAtMs = await source.time()
  const { nodes, servers } = await probeServers(source)
  let hashesRead = 0
  const record = (rawKey: RedisKey, reply: Record<string, string> | Error, at: number, ttl?: number, omitted?: Record<string, number>) => {
    if (!(reply instanceof Error) && Object.keys(reply).length === 0 && !omitted) return null
    hashesRead++
    return [keyText(rawKey), recordHash(keys, rawKey, reply, at, { ttl, includeState, omitted })] as [string, HashRecord]
  }
  const kept = (rs: Array<[string, HashRecord] | null>) => rs.filter((r): r is [string, HashRecord] => r !== null)

  // The records every command reads first: the schema, the replica index, the event stream's tail.
  const [schema] = await source.hashes(null, [keys.schema])
  const tail: StreamEntry[] = (await source.xrevrange(keys.events, '+', '-', o.events ?? 1000)).reverse()
  await sink.start({
    format: SNAPSHOT_FORMAT,
    formatVersion: SNAPSHOT_FORMAT_VERSION,
    tool: `botmesh-coord ${PACKAGE_VERSION}`,
    keySchema: SCHEMA_VERSION,
    target: { url: o.url, prefix: keys.prefix, layout: keys.layout },
    servers,
    records: {
      nowMs: startedAtMs,
      zsets: { [keys.replicaIndex]: { ids: await source.zrange(keys.replicaIndex), at: startedAtMs } },
      streams: { [keys.events]: { entries: tail, at: startedAtMs } },
    },
  })
  await sink.hashes(kept([record(keys.schema, schema!, startedAtMs)]))

  // Every key of the prefix's kinds (its fixed names are read above), master by master, in SCAN
  // batches; each batch's hashes (and the TTLs of checkpoints and markers) in one pipeline on that
  // master, read at that master's TIME.
  const other = new KeyLayout(keys.prefix, keys.layout === 'cluster' ? 'standalone' : 'cluster')
  const kindOf = (k: Buffer) => keys.parse(k)?.kind ?? other.parse(k)?.kind ?? null
  let seen = 0
  let partial: string | null = null
  const scan = (node: number, cursor: string) => {
    const p = source.scan(node, cursor, keys.scanPatternOf([]), count)
    p.catch(() => {}) // awaited below; a walk that stops first leaves it
    return p
  }
  // Batches are written one at a time, in the order their reads were asked for; each walk has up to
  // `ahead` batches read while the one before them is written.
  const ahead = Math.max(1, Math.floor(READ_AHEAD / (o.maxKeys === undefined ? nodes.length : 1)))
  let recording: Promise<void> = Promise.resolve()
  let stopped = false
  const walkNode = async (node: number): Promise<void> => {
    let cursor = '0'
    let next = scan(node, cursor)
    /** This walk's batches asked for and not yet written, oldest first. */
    const unwritten: Array<Promise<void>> = []
    do {
      const step = await next
      if (stopped) return
      cursor = step.cursor
      // The next SCAN is asked now, so Redis works on it while this batch is read.
      if (cursor !== '0') next = scan(node, cursor)
      // Only this prefix's own key shapes: a neighbour prefix's keys (`shop:eu:…`, `shop:cx:…`) are
      // neither recorded nor counted against --max-keys.
      let batch = step.keys.filter((b) => keys.owns(b))
      const cut = o.maxKeys !== undefined && seen + batch.length > o.maxKeys
      if (cut) batch = batch.slice(0, o.maxKeys! - seen)
      seen += batch.length
      sink.nodeKeys(
        node,
        batch.map((b) => idFromBytes(b)),
      )
      const hashes: Buffer[] = []
      const kinds: KeyKind[] = []
      for (const b of batch) {
        const kind = kindOf(b)
        if (kind === null || !HASH_KINDS.has(kind)) continue
        hashes.push(b)
        kinds.push(kind)
      }
      if (hashes.length) {
        // Without --include-state a checkpoint's or marker's data is not kept: its size is read, not its value.
        const read = source.batchRead(
          node,
          hashes,
          kinds.map((k) => TTL_KINDS.has(k)),
          includeState ? [] : kinds.map((k) => PRIVATE_FIELDS[k]),
        )
        const before = recording
        recording = (async () => {
          const { replies, ttls, nowMs, omitted } = await read
          await before
          await sink.hashes(kept(hashes.map((b, i) => record(b, replies[i]!, nowMs, ttls[i] ?? undefined, omitted[i]))))
        })()
        recording.catch(() => {}) // awaited below, and after the walks
        unwritten.push(recording)
        if (unwritten.length > ahead) await unwritten.shift()
      }
      o.onProgress?.(seen)
      if (cut || (o.maxKeys !== undefined && seen >= o.maxKeys && (cursor !== '0' || node < nodes.length - 1))) {
        partial = `stopped after --max-keys ${o.maxKeys} keys`
        stopped = true
        return
      }
    } while (cursor !== '0')
  }
  const walk = (node: number) =>
    walkNode(node).catch((err: unknown) => {
      stopped = true // the other masters' walks stop at their next batch
      throw err
    })
  // A Cluster's masters are walked at once; with --max-keys one after the other, so that the keys
  // kept are the first masters' (as the capture says).
  if (o.maxKeys === undefined) await Promise.all(nodes.map((_, node) => walk(node)))
  else for (let node = 0; node < nodes.length && !stopped; node++) await walk(node)
  await recording
  const capture: Snapshot['capture'] = {
    startedAtMs,
    finishedAtMs: await source.time(),
    tookMs: Math.round(performance.now() - started),
    keys: seen,
    records: hashesRead,
    includeState,
    partial,
  }
  await sink.finish(nodes, capture)
  return capture
}
