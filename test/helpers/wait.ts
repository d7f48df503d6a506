/**
 * Waiting in tests: on observable state, never on time.
 *
 * `until` polls a condition (the ticket is in Redis, the event arrived, the process printed its line)
 * and is bounded: on timeout it throws, naming what it waited for, how long, and the last value or
 * error the condition gave. `sleep` is only for tests whose subject is time itself (a TTL runs out, a
 * lease lapses, a pause of 0.5 × leaseMs loses nothing) — each use says so in a comment.
 *
 * Both read the global clock and timers, so under vitest fake timers (the memory contract, see
 * ./fake-clock.ts) they run on the fake clock: a bound of 5 s is 5 fake seconds, and no real time.
 */
import { vi } from 'vitest'

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>

/**
 * Resolve with `cond`'s value once it is truthy; reject after `ms` with a message naming `what` and
 * the last value or error seen. `cond` may be a predicate (falsy: not yet) or an assertion (throws:
 * not yet) — `until(() => expect(frame()).toContain('x'))` reports the failed expectation itself.
 * It looks again every `pollMs` (raise it when a look is costly, e.g. a subprocess).
 */
export async function until<T>(cond: () => T | Promise<T>, ms = 5000, what = 'condition', pollMs = 10): Promise<Truthy<T>> {
  const start = performance.now()
  let last: unknown = 'never evaluated'
  for (;;) {
    try {
      const r = await cond()
      if (r) return r as Truthy<T>
      last = r
    } catch (err) {
      last = err
    }
    const waited = performance.now() - start
    if (waited > ms) {
      const seen = last instanceof Error ? last.message : String(last)
      throw new Error(`timed out after ${Math.round(waited)} ms waiting for ${what} (last: ${seen})`)
    }
    await sleep(pollMs)
  }
}

/**
 * Block the event loop for `ms`, as a GC pause or sync work does: no timer, no reply, no callback
 * runs meanwhile, yet the monotonic clock moves on.
 *
 * Under fake timers the clock is moved forward synchronously instead (a busy loop on a fake clock
 * would never end): the timers that fall due run, but no promise continuation does — no reply of
 * the shared state is processed — so an async renewal started meanwhile completes only after.
 */
export function blockEventLoop(ms: number): void {
  if (vi.isFakeTimers()) {
    vi.advanceTimersByTime(ms)
    return
  }
  const end = performance.now() + ms
  while (performance.now() < end) {
    // busy: nothing else runs
  }
}
