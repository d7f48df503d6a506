/**
 * Reading a recording (`watch --replay`): its header checked, its refreshes indexed as the file
 * streams by and each one read when it is shown, what was skipped, and a snapshot seen as a
 * recording of one refresh. Split from recording.ts: the read side of the format.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { maskUrl, type Snapshot } from '../lib.js'
import { CliError } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { checkReadableFile } from '../target.js'
import { RECORDING_FORMAT, type RecordedRefresh, type RecordingHeader } from './recording-format.js'

/**
 * The refreshes of a recording, as the player walks them: how many there are, each one's Redis time
 * without reading it, and one refresh at a time, read when it is shown. A recording on disk is never
 * held whole: its lines are indexed as the file is streamed (offset, length, time), and a refresh is
 * read from the file and parsed when asked for (the last one is kept).
 */
export interface Refreshes {
  readonly length: number
  /** Redis time of refresh `i` (ms). */
  t(i: number): number
  /** Refresh `i` — or, when its line does not parse, the nearest one after it (before it, at the end) that does. */
  at(i: number): RecordedRefresh
  /** The index of the refresh `at` returned last. */
  readonly shown: number
  /** Lines that are not a refresh (cut off, corrupt): each reported once, skipped. */
  readonly skipped: SkippedLine[]
}

export interface SkippedLine {
  /** 1-based line number in the file. */
  line: number
  why: string
}

/** Refreshes held in memory (a snapshot shown as a recording of one refresh). */
export function refreshesOf(list: RecordedRefresh[]): Refreshes {
  const r = {
    length: list.length,
    shown: 0,
    t: (i: number) => list[i]!.t,
    at: (i: number) => list[(r.shown = Math.max(0, Math.min(i, list.length - 1)))]!,
    skipped: [],
  }
  return r
}

/** Bytes read from the file at a time while it is indexed. */
const CHUNK = 1 << 20
/** A refresh larger than this is skipped (reported), not read: a dashboard refresh is a bounded read of a few KiB. */
export const MAX_REFRESH_BYTES = 32 << 20
/** How a refresh line starts, as RecordingWriter writes it: its time is read from there without parsing the line. */
const REFRESH_HEAD = /^\{"t":(\d{1,16}),"seq":\d+,/

/** A recording on disk, indexed line by line as it is streamed; each refresh read when it is shown. */
class FileRefreshes implements Refreshes {
  private readonly offsets: number[] = []
  private readonly lengths: number[] = []
  private readonly lines: number[] = []
  private readonly times: number[] = []
  readonly skipped: SkippedLine[] = []
  shown = 0
  /** Indexed lines that did not parse when read (reported once): passed over from then on. */
  private readonly bad = new Set<number>()
  private kept: { i: number; r: RecordedRefresh } | null = null

  constructor(
    private readonly fd: number,
    /** Where the first refresh line starts, and its line number. */
    from: number,
    firstLine: number,
  ) {
    const size = fstatSync(fd).size
    const buf = Buffer.alloc(CHUNK)
    let lineStart = from
    let line = firstLine
    let pos = from
    // A line's first bytes, kept across chunks until its time is read.
    let head = ''
    while (pos < size) {
      const n = readSync(fd, buf, 0, Math.min(CHUNK, size - pos), pos)
      if (n <= 0) break
      let at = 0
      while (at < n) {
        const nl = buf.indexOf(10, at)
        const end = nl === -1 || nl >= n ? n : nl
        if (head.length < 64) head += buf.toString('latin1', at, Math.min(end, at + 64 - head.length))
        if (end === n) break
        this.add(line, lineStart, pos + end - lineStart, head)
        head = ''
        line++
        lineStart = pos + end + 1
        at = end + 1
      }
      pos += n
    }
    // Written whole, every line ends with a newline: a last one without it was cut off (the watch was killed).
    if (lineStart < size) this.skipped.push({ line, why: 'cut off (the recording ends mid-line)' })
  }

  private add(line: number, offset: number, length: number, head: string): void {
    if (length === 0) return
    const m = REFRESH_HEAD.exec(head)
    if (!m) return void this.skipped.push({ line, why: 'not a refresh of a recording' })
    if (length > MAX_REFRESH_BYTES)
      return void this.skipped.push({ line, why: `${length} bytes, more than a refresh holds (${MAX_REFRESH_BYTES} at most): not read` })
    this.offsets.push(offset)
    this.lengths.push(length)
    this.lines.push(line)
    this.times.push(Number(m[1]))
  }

  get length(): number {
    return this.offsets.length
  }

  t(i: number): number {
    return this.times[i]!
  }

  /** Refresh `i`, read from the file now; a line that does not parse is reported once and passed over. */
  at(i: number): RecordedRefresh {
    const from = Math.max(0, Math.min(i, this.length - 1))
    for (let j = from; j < this.length; j++) {
      const r = this.read(j)
      if (r) return r
    }
    for (let j = from - 1; j >= 0; j--) {
      const r = this.read(j)
      if (r) return r
    }
    throw new CliError('the recording holds no refresh that can be read', EXIT.usage)
  }

  private read(j: number): RecordedRefresh | null {
    if (this.bad.has(j)) return null
    if (this.kept?.i !== j) {
      const buf = Buffer.alloc(this.lengths[j]!)
      readSync(this.fd, buf, 0, buf.length, this.offsets[j]!)
      try {
        const r = JSON.parse(buf.toString('utf8')) as RecordedRefresh
        if (typeof r?.t !== 'number' || typeof r.records !== 'object' || r.records === null) throw new Error('no records')
        this.kept = { i: j, r }
      } catch {
        this.bad.add(j)
        this.skipped.push({ line: this.lines[j]!, why: 'corrupt (not JSON, or no records)' })
        return null
      }
    }
    this.shown = j
    return this.kept.r
  }
}

/**
 * Open a recording: its header, and its refreshes indexed as the file streams by (never read whole).
 * One line (exit 2) when it cannot be read or is not one; a refresh line that is cut off or corrupt
 * is skipped and reported (`skipped`), and the rest plays.
 */
export function readRecording(file: string): { header: RecordingHeader; refreshes: Refreshes } {
  checkReadableFile(file, '--replay')
  const bad = (why: string) => new CliError(`--replay ${file}: ${why}`, EXIT.usage)
  const fd = openSync(file, 'r')
  // The header: the first line (a few hundred bytes), read until its newline.
  const parts: Buffer[] = []
  let pos = 0
  let nl = -1
  while (nl === -1 && pos < 1 << 20) {
    const b = Buffer.alloc(4096)
    const n = readSync(fd, b, 0, b.length, pos)
    if (n <= 0) break
    const part = b.subarray(0, n)
    nl = part.indexOf(10)
    parts.push(nl === -1 ? part : part.subarray(0, nl))
    pos += nl === -1 ? n : nl + 1
  }
  let header: RecordingHeader
  try {
    header = JSON.parse(Buffer.concat(parts).toString('utf8')) as RecordingHeader
  } catch {
    closeSync(fd)
    throw bad('not a recording (its first line is not JSON)')
  }
  if (header?.format !== RECORDING_FORMAT) {
    closeSync(fd)
    throw bad('not a botmesh-coord recording (watch --record)')
  }
  // Masked again: a recording written by another tool (or edited) may carry a password in its URL.
  if (header.target && typeof header.target === 'object') header.target = { ...header.target, url: maskUrl(String(header.target.url)) }
  const refreshes = new FileRefreshes(fd, pos, 2)
  if (refreshes.length === 0) throw bad('the recording holds no refresh')
  return { header, refreshes }
}

/** What a replay skipped, one line each (stderr): a refresh line cut off or corrupt is one record, the rest plays. */
export function skippedLines(file: string, r: Refreshes): string[] {
  return r.skipped.map((s) => `--replay ${file}: line ${s.line} skipped: ${s.why}`)
}

/** A snapshot (`snapshot -o`) as a recording of one refresh: `watch --from` shows it. */
export function snapshotAsRecording(s: Snapshot): { header: Pick<RecordingHeader, 'target'>; refreshes: Refreshes } {
  return { header: { target: s.target }, refreshes: refreshesOf([{ t: s.records.nowMs, seq: 1, records: s.records }]) }
}
