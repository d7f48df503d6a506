/**
 * The replay's player: where it stands in a recording and how it moves (play at the recorded pace
 * times a speed, pause, step, jump to a time). Split from recording.ts: no I/O of its own, it asks
 * Refreshes.
 */
import type { RecordedRefresh } from './recording-format.js'
import type { Refreshes } from './recording-reader.js'

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
