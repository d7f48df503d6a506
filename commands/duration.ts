/**
 * Durations on the command line: one parser (the library's parseDuration: compound values such as
 * `1m30s`, units ms/s/m/h/d in any case — every unit the tool prints) and one rule for every option
 * and argument that takes a time: **a unit is required** (`5` is refused with a hint: 5ms? 5s?).
 * Intervals of polling loops have a floor (MIN_INTERVAL_MS), and sleeps end at once on Ctrl-C.
 */
import { InvalidArgumentError, Option } from 'commander'
import { ConfigurationError, MAX_TIMER_MS, parseDuration, timerTooLong } from './lib.js'
import { usage } from './output/errors.js'

/** The shortest refresh or poll interval (`watch --interval`, `events -f --interval`, `-w`). */
export const MIN_INTERVAL_MS = 100

export interface DurationRule {
  /** Refused below this (ms). */
  min?: number
  /** Refused above this (ms). */
  max?: number
  /** A timer waits it (a timeout, an interval, a lease): refused above MAX_TIMER_MS, which a timer cannot wait. */
  timer?: boolean
}

/** Parse one duration given on the command line; a CliError (exit 2) naming `what` otherwise. */
export function cliDuration(value: string, what: string, rule: DurationRule = {}): number {
  let ms: number
  try {
    ms = parseDuration(value, what, { bare: 'refuse' })
  } catch (err) {
    if (err instanceof ConfigurationError) throw usage(err.message)
    throw err
  }
  if (rule.min !== undefined && ms < rule.min) throw usage(`${what} must be at least ${rule.min}ms, not ${value}`)
  if (rule.max !== undefined && ms > rule.max) throw usage(`${what} must be at most ${rule.max}ms, not ${value}`)
  if (rule.timer && ms > MAX_TIMER_MS) throw usage(timerTooLong(what, value))
  return ms
}

/** A commander option that takes a duration: parsed to ms when the command line is read (usage error otherwise). */
export function durationOption(flags: string, description: string, rule: DurationRule & { default?: string } = {}): Option {
  const o: Option = new Option(flags, description).argParser((v: string) => {
    try {
      return cliDuration(v, o.long ?? flags, rule)
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message.replace(/^--[\w-]+:?\s*/, ''))
    }
  })
  if (rule.default !== undefined) o.default(cliDuration(rule.default, o.long ?? flags, rule), rule.default)
  return o
}

/** Aborted on the first Ctrl-C or SIGTERM (and removed once aborted): what follow loops wait on. */
export function interruptSignal(): AbortSignal {
  const ctl = new AbortController()
  const stop = () => {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
    ctl.abort()
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  return ctl.signal
}

/** Sleep `ms`, or less when any signal aborts first. */
export function sleep(ms: number, ...signals: Array<AbortSignal | undefined>): Promise<void> {
  return new Promise((resolve) => {
    const live = signals.filter((s): s is AbortSignal => Boolean(s))
    if (live.some((s) => s.aborted)) return resolve()
    const done = () => {
      clearTimeout(t)
      for (const s of live) s.removeEventListener('abort', done)
      resolve()
    }
    const t = setTimeout(done, ms)
    for (const s of live) s.addEventListener('abort', done, { once: true })
  })
}

/**
 * A point in time given on the command line (`--since`, `--until`): a duration back from Redis's
 * now (`10m`, `1h30m`), a time of day on this machine's clock (`10:42`, `10:42:05`: today, or
 * yesterday if that is still to come), or a date and time (`2026-11-29T10:42:00Z`, `2026-11-29 10:42`).
 * Returns Redis-clock ms.
 */
export function pointInTime(value: string, what: string, redisNowMs: number, localNowMs = Date.now()): number {
  const v = value.trim()
  if (/^\d{1,2}:\d{2}(:\d{2})?$/.test(v)) {
    const [h, m, sec = 0] = v.split(':').map(Number) as [number, number, number?]
    if (h > 23 || m > 59 || sec > 59) throw usage(`${what}: ${value} is not a time of day`)
    const d = new Date(localNowMs)
    d.setHours(h, m, sec, 0)
    let at = d.getTime()
    if (at > localNowMs) at -= 86_400_000
    return redisNowMs - (localNowMs - at)
  }
  if (/^\d{4}-\d{2}-\d{2}/.test(v)) {
    const at = Date.parse(v.replace(' ', 'T'))
    if (!Number.isFinite(at)) throw usage(`${what}: cannot read ${JSON.stringify(value)} as a date and time (try 2026-11-29T10:42:00Z)`)
    return at
  }
  try {
    return redisNowMs - cliDuration(v, what)
  } catch {
    throw usage(`${what}: ${JSON.stringify(value)} is neither a duration (10m, 1h30m) nor a time (10:42, 2026-11-29T10:42:00Z)`)
  }
}
