/**
 * `watch --record <file>` and `watch --replay <file>`. A recording is JSON lines: a header, then one
 * line per refresh with the raw records that refresh read (and the chat details opened meanwhile) —
 * what `RecordingSource` kept. Replayed, each line answers the dashboard's reads through
 * `RecordedSource`: the same readDashboard, the same screen. The player moves through the refreshes
 * at the recorded pace times `speed`, pauses, steps, and jumps to a time.
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs'
import {
  KeyLayout,
  PACKAGE_VERSION,
  maskUrl,
  type ChatDetail,
  type DashboardSnapshot,
  type Io,
  type Snapshot,
  type StateRecords,
} from '../lib.js'
import { CliError, refused } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { checkReadableFile } from '../target.js'
import type { DashboardSource } from './source.js'
import type { Interventions } from './interventions.js'
import type { ReplayControls } from './dashboard-app.js'

export const RECORDING_FORMAT = 'botmesh-coord-recording'

export interface RecordingHeader {
  format: typeof RECORDING_FORMAT
  formatVersion: 1
  tool: string
  target: { url: string; prefix: string; layout: 'standalone' | 'cluster' }
  includeState: boolean
}

export interface RecordedRefresh {
  /** Redis's clock of the refresh (ms). */
  t: number
  seq: number
  records: StateRecords
}

/** A recording being written: created with mode 0600 (an existing file is refused), one line per refresh. */
export class RecordingWriter {
  private readonly fd: number
  private seq = 0

  constructor(
    readonly file: string,
    header: Omit<RecordingHeader, 'format' | 'formatVersion' | 'tool'>,
  ) {
    try {
      this.fd = openSync(file, 'wx', 0o600)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      throw new CliError(
        `--record ${file}: ${code === 'EEXIST' ? 'the file exists (a recording is never overwritten): pick another name' : `cannot create it: ${String(code ?? err)}`}`,
        EXIT.usage,
      )
    }
    const h: RecordingHeader = {
      format: RECORDING_FORMAT,
      formatVersion: 1,
      tool: `botmesh-coord ${PACKAGE_VERSION}`,
      ...header,
      target: { ...header.target, url: maskUrl(header.target.url) },
    }
    writeSync(this.fd, `${JSON.stringify(h)}\n`)
  }

  write(records: StateRecords): void {
    if (!records.nowMs) return
    writeSync(this.fd, `${JSON.stringify({ t: records.nowMs, seq: ++this.seq, records } satisfies RecordedRefresh)}\n`)
  }

  close(): void {
    closeSync(this.fd)
  }
}

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

/** Where the replay stands, and how it moves: what the keys change and the header shows. */
export class Player {
  index = 0
  playing = true
  speed = 1
  /** Local ms when the position was last moved by the clock (or by a key). */
  private anchor: number

  constructor(
    readonly refreshes: Refreshes,
    private readonly now: () => number = Date.now,
  ) {
    this.anchor = now()
  }

  get at(): RecordedRefresh {
    const r = this.refreshes.at(this.index)
    // A line that does not parse is passed over: the player stands on the refresh shown.
    this.index = this.refreshes.shown
    return r
  }

  /** Redis time of the refresh shown, without reading it. */
  private get atT(): number {
    return this.refreshes.t(this.index)
  }

  /** Move with the clock while playing: to the last refresh recorded by now (recorded pace × speed). */
  tick(): void {
    const t = this.now()
    if (!this.playing) {
      this.anchor = t
      return
    }
    const target = this.atT + (t - this.anchor) * this.speed
    let i = this.index
    while (i + 1 < this.refreshes.length && this.refreshes.t(i + 1) <= target) i++
    if (i !== this.index) {
      this.index = i
      this.anchor = t - (target - this.atT) / this.speed
    }
    if (this.index === this.refreshes.length - 1) this.playing = false
  }

  toggle(): void {
    this.playing = !this.playing
    if (this.playing && this.index === this.refreshes.length - 1) this.index = 0
    this.anchor = this.now()
  }

  step(by: number): void {
    this.playing = false
    this.index = Math.max(0, Math.min(this.refreshes.length - 1, this.index + by))
    this.anchor = this.now()
  }

  faster(factor: number): void {
    this.speed = Math.max(0.25, Math.min(64, this.speed * factor))
  }

  /** The last refresh at or before `t` (Redis ms), or the first. */
  jumpTo(t: number): void {
    let i = 0
    while (i + 1 < this.refreshes.length && this.refreshes.t(i + 1) <= t) i++
    this.index = i
    this.anchor = this.now()
  }

  jumpBy(ms: number): void {
    this.jumpTo(this.atT + ms)
  }

  /** Jump to a time of day (`HH:MM` or `HH:MM:SS`, UTC) on the day of the refresh shown; false when not a time. */
  jumpToClock(text: string): boolean {
    const m = /^\s*(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?\s*$/.exec(text)
    if (!m || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59) return false
    const day = new Date(this.atT)
    day.setUTCHours(Number(m[1]), Number(m[2]), Number(m[3] ?? 0), Number((m[4] ?? '0').padEnd(3, '0')))
    this.jumpTo(day.getTime())
    return true
  }

  /** One line for the header. */
  describe(file: string): string {
    const clock = new Date(this.atT).toISOString().slice(11, 19)
    return `REPLAY ${file}  ${clock} UTC  refresh ${this.index + 1}/${this.refreshes.length}  ${this.playing ? '▶' : '❚❚'} ×${this.speed}`
  }
}

const NOT_LIVE = (what: string) =>
  Promise.reject(refused(`a recording cannot be changed: ${what} needs a live Redis (watch without --replay)`))

/** The dashboard's source over a recording: each read answers from the refresh the player stands on. */
export function replaySource(
  io: Io,
  file: string,
  recording: { header: Pick<RecordingHeader, 'target'>; refreshes: Refreshes },
  o: { topChats?: number; now?: () => number } = {},
): DashboardSource & { player: Player; controls: ReplayControls } {
  const { header, refreshes } = recording
  const keys = new KeyLayout(header.target.prefix, header.target.layout)
  const player = new Player(refreshes, o.now)
  const readerAt = () => new io.StateReader(new io.RecordedSource(player.at.records), keys)
  const interventions: Interventions = {
    yieldProvider: () => NOT_LIVE('yield'),
    releaseChat: () => NOT_LIVE('release'),
    skipTicket: () => NOT_LIVE('skip'),
    removeHandover: () => NOT_LIVE('removing a marker'),
    extendCheckpoint: () => NOT_LIVE('extending a checkpoint'),
  }
  return {
    url: `${file} (recorded from ${header.target.url})`,
    prefix: header.target.prefix,
    layout: header.target.layout,
    player,
    controls: {
      describe: () => player.describe(file),
      toggle: () => player.toggle(),
      step: (by) => player.step(by),
      faster: (f) => player.faster(f),
      jumpBy: (ms) => player.jumpBy(ms),
      jumpToClock: (t) => player.jumpToClock(t),
    },
    read: (): Promise<DashboardSnapshot> => {
      player.tick()
      return io.readDashboard(readerAt(), { topChats: o.topChats })
    },
    chat: (key: string): Promise<ChatDetail> => readerAt().chat(key),
    commandsTotal: () => 0,
    status: () => 'replay',
    interventions,
    close: async () => {},
  }
}
