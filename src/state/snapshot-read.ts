/**
 * Reading a snapshot file back (`--from`, `snapshot diff`) as it streams in: the document is never one
 * string. The scanner (./snapshot-scanner.ts) walks its bytes once and parses the records' hashes
 * (`records.hashes`, one per key: a million chats make two million) and the masters' key lists one
 * record, one name at a time, each record checked here as it is parsed; the rest of the document —
 * its head, streams, probes and capture, small whatever the state's size — is parsed whole at the
 * end, and then checked as one (shapeProblem).
 *
 * How much is read is bounded by the process's heap (snapshotReadLimit): a file past what the heap
 * holds is refused with one line, not a crash.
 */
import { SnapshotScanner, snapshotReadLimit } from './snapshot-scanner.js'
import { PackedNames } from './packed-records.js'
import { SNAPSHOT_FORMAT, SNAPSHOT_FORMAT_VERSION, type Snapshot } from './snapshot.js'

export { SNAPSHOT_MAX_BYTES, snapshotLimitReason, snapshotReadLimit, snapshotTooLarge } from './snapshot-scanner.js'

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)
const isStr = (v: unknown): v is string => typeof v === 'string'
const strings = (v: unknown): boolean => Array.isArray(v) && v.every(isStr)
const textFields = (h: unknown): boolean => {
  if (!isObj(h)) return false
  for (const f in h) if (typeof h[f] !== 'string') return false
  return true
}

/** Where one record of records.hashes departs from the format, or null. */
function hashProblem(k: string, h: unknown): string | null {
  const where = () => `records.hashes[${JSON.stringify(k.slice(0, 80))}]`
  if (!isObj(h) || !isNum(h.at)) return `${where()} is not a record`
  if (h.h !== undefined && !textFields(h.h)) return `${where()}.h is not a hash of text fields`
  if (h.e !== undefined && !isStr(h.e)) return `${where()}.e is not text`
  if (h.ttl !== undefined && !isNum(h.ttl)) return `${where()}.ttl is not a number`
  if (h.fields !== undefined && !strings(h.fields)) return `${where()}.fields is not a list of names`
  if (h.omitted !== undefined && (!isObj(h.omitted) || !Object.values(h.omitted).every(isNum)))
    return `${where()}.omitted is not sizes by field`
  return null
}

/**
 * Where a decoded file departs from the snapshot format (a path and what is wrong), or null.
 * `hashesChecked`: the records of records.hashes were checked one by one as they were read.
 */
function shapeProblem(s: Record<string, unknown>, hashesChecked: boolean): string | null {
  const t = s.target
  if (!isObj(t) || !isStr(t.url) || !isStr(t.prefix) || (t.layout !== 'standalone' && t.layout !== 'cluster'))
    return 'target is not {url, prefix, layout}'
  if (!Array.isArray(s.servers) || !s.servers.every(isObj)) return 'servers is not a list'
  const c = s.capture
  if (!isObj(c)) return 'capture is not an object'
  for (const f of ['startedAtMs', 'finishedAtMs', 'tookMs', 'keys', 'records'])
    if (!isNum(c[f]) || (f.endsWith('AtMs') && Math.abs(c[f]) > 8.64e15)) return `capture.${f} is not a number of ms`
  if (c.partial !== null && c.partial !== undefined && !isStr(c.partial)) return 'capture.partial is not text'
  const r = s.records
  if (!isObj(r)) return 'records is not an object'
  if (!isNum(r.nowMs) || Math.abs(r.nowMs) > 8.64e15) return 'records.nowMs is not a number of ms'
  if (!Array.isArray(r.nodes)) return 'records.nodes is not a list'
  for (const n of r.nodes) {
    if (!isObj(n) || !isStr(n.name)) return 'records.nodes has an entry without a name'
    // A scanned list (PackedNames) was checked name by name as it was read.
    if (n.keys !== undefined && !(n.keys instanceof PackedNames) && !strings(n.keys))
      return `records.nodes ${n.name}: keys is not a list of names`
    if (n.probes !== undefined) {
      if (!isObj(n.probes)) return `records.nodes ${n.name}: probes is not an object`
      for (const [k, p] of Object.entries(n.probes))
        if (!isObj(p) || !(isStr(p.value) || isStr(p.error))) return `records.nodes ${n.name}: probe ${k} is malformed`
    }
  }
  if (!isObj(r.hashes)) return 'records.hashes is not an object'
  if (!hashesChecked)
    for (const k in r.hashes) {
      const problem = hashProblem(k, r.hashes[k])
      if (problem) return problem
    }
  if (!isObj(r.zsets)) return 'records.zsets is not an object'
  for (const [k, z] of Object.entries(r.zsets))
    if (!isObj(z) || !strings(z.ids) || !isNum(z.at)) return `records.zsets[${JSON.stringify(k.slice(0, 80))}] is not {ids, at}`
  if (!isObj(r.streams)) return 'records.streams is not an object'
  for (const [k, st] of Object.entries(r.streams)) {
    const ok =
      isObj(st) &&
      isNum(st.at) &&
      Array.isArray(st.entries) &&
      st.entries.every((e) => Array.isArray(e) && e.length === 2 && isStr(e[0]) && strings(e[1]))
    if (!ok) return `records.streams[${JSON.stringify(k.slice(0, 80))}] is not {entries: [id, fields], at}`
  }
  return null
}

/** A scanner for one snapshot document, each record of records.hashes checked as it is parsed. */
export function snapshotScanner(limit = snapshotReadLimit()): SnapshotScanner {
  return new SnapshotScanner(limit, hashProblem)
}

/** The snapshot a scanner has read whole, or why it is not one (a thrown Error with one line). */
export function scannedSnapshot(scanner: SnapshotScanner): Snapshot {
  const { rest: s, hashes, nodeKeys } = scanner.end()
  if (!isObj(s) || s.format !== SNAPSHOT_FORMAT) throw new Error('not a botmesh-coord snapshot')
  if (typeof s.formatVersion !== 'number' || s.formatVersion > SNAPSHOT_FORMAT_VERSION)
    throw new Error(
      `snapshot format ${String(s.formatVersion)} is newer than this release reads (${SNAPSHOT_FORMAT_VERSION}): upgrade botmesh-coord`,
    )
  if (!s.records || !s.target || !s.capture) throw new Error('not a snapshot: records, target or capture missing')
  const r = s.records
  let hashesChecked = false
  if (isObj(r)) {
    // What the scan parsed (and checked) apart goes back where the document had it.
    if (hashes && isObj(r.hashes)) {
      r.hashes = hashes
      hashesChecked = true
    }
    if (Array.isArray(r.nodes))
      for (const [i, names] of nodeKeys) {
        const node = r.nodes[i] as unknown
        if (isObj(node)) node.keys = names
      }
  }
  const problem = shapeProblem(s, hashesChecked)
  if (problem) throw new Error(`not a snapshot: ${problem}`)
  return s as unknown as Snapshot
}

/**
 * A snapshot from its file's bytes (decompressed), read as they stream in; the cause of a refusal as
 * a thrown Error (one line). `onBytes`: after each piece, the bytes read so far.
 */
export async function readSnapshot(
  pieces: AsyncIterable<Buffer>,
  limit = snapshotReadLimit(),
  onBytes?: (bytes: number) => void,
): Promise<Snapshot> {
  const scanner = snapshotScanner(limit)
  let bytes = 0
  for await (const piece of pieces) {
    scanner.push(piece)
    onBytes?.((bytes += piece.length))
  }
  return scannedSnapshot(scanner)
}
