/**
 * `watch --record <file>` and `watch --replay <file>`. A recording is JSON lines: a header, then one
 * line per refresh with the raw records that refresh read (and the chat details opened meanwhile) —
 * what `RecordingSource` kept. Replayed, each line answers the dashboard's reads through
 * `RecordedSource`: the same readDashboard, the same screen. The player moves through the refreshes
 * at the recorded pace times `speed`, pauses, steps, and jumps to a time.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs'
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

/** Read a recording: one line (exit 2) when it cannot be read or is not one. */
export function readRecording(file: string): { header: RecordingHeader; refreshes: RecordedRefresh[] } {
  checkReadableFile(file, '--replay')
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean)
  const bad = (why: string) => new CliError(`--replay ${file}: ${why}`, EXIT.usage)
  let header: RecordingHeader
  try {
    header = JSON.parse(lines[0] ?? '') as RecordingHeader
  } catch {
    throw bad('not a recording (its first line is not JSON)')
  }
  if (header?.format !== RECORDING_FORMAT) throw bad('not a botmesh-coord recording (watch --record)')
  // Masked again: a recording written by another tool (or edited) may carry a password in its URL.
  if (header.target && typeof header.target === 'object') header.target = { ...header.target, url: maskUrl(String(header.target.url)) }
  const refreshes: RecordedRefresh[] = []
  for (const l of lines.slice(1)) {
    try {
      refreshes.push(JSON.parse(l) as RecordedRefresh)
    } catch {
      break // a recording cut off mid-line (the watch was killed): what came before plays
    }
  }
  if (refreshes.length === 0) throw bad('the recording holds no refresh')
  return { header, refreshes }
}

/** A snapshot (`snapshot -o`) as a recording of one refresh: `watch --from` shows it. */
export function snapshotAsRecording(s: Snapshot): { header: Pick<RecordingHeader, 'target'>; refreshes: RecordedRefresh[] } {
  return { header: { target: s.target }, refreshes: [{ t: s.records.nowMs, seq: 1, records: s.records }] }
}

/** Where the replay stands, and how it moves: what the keys change and the header shows. */
export class Player {
  index = 0
  playing = true
  speed = 1
  /** Local ms when the position was last moved by the clock (or by a key). */
  private anchor: number

  constructor(
    readonly refreshes: RecordedRefresh[],
    private readonly now: () => number = Date.now,
  ) {
    this.anchor = now()
  }

  get at(): RecordedRefresh {
    return this.refreshes[this.index]!
  }

  /** Move with the clock while playing: to the last refresh recorded by now (recorded pace × speed). */
  tick(): void {
    const t = this.now()
    if (!this.playing) {
      this.anchor = t
      return
    }
    const target = this.at.t + (t - this.anchor) * this.speed
    let i = this.index
    while (i + 1 < this.refreshes.length && this.refreshes[i + 1]!.t <= target) i++
    if (i !== this.index) {
      this.index = i
      this.anchor = t - (target - this.at.t) / this.speed
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
    while (i + 1 < this.refreshes.length && this.refreshes[i + 1]!.t <= t) i++
    this.index = i
    this.anchor = this.now()
  }

  jumpBy(ms: number): void {
    this.jumpTo(this.at.t + ms)
  }

  /** Jump to a time of day (`HH:MM` or `HH:MM:SS`, UTC) on the day of the refresh shown; false when not a time. */
  jumpToClock(text: string): boolean {
    const m = /^\s*(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?\s*$/.exec(text)
    if (!m || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59) return false
    const day = new Date(this.at.t)
    day.setUTCHours(Number(m[1]), Number(m[2]), Number(m[3] ?? 0), Number((m[4] ?? '0').padEnd(3, '0')))
    this.jumpTo(day.getTime())
    return true
  }

  /** One line for the header. */
  describe(file: string): string {
    const clock = new Date(this.at.t).toISOString().slice(11, 19)
    return `REPLAY ${file}  ${clock} UTC  refresh ${this.index + 1}/${this.refreshes.length}  ${this.playing ? '▶' : '❚❚'} ×${this.speed}`
  }
}

const NOT_LIVE = (what: string) =>
  Promise.reject(refused(`a recording cannot be changed: ${what} needs a live Redis (watch without --replay)`))

/** The dashboard's source over a recording: each read answers from the refresh the player stands on. */
export function replaySource(
  io: Io,
  file: string,
  recording: { header: Pick<RecordingHeader, 'target'>; refreshes: RecordedRefresh[] },
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
