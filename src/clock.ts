/**
 * The local monotonic clock (ms). Lease deadlines are measured on it, never on the wall clock, so a
 * wall-clock jump changes nothing; it keeps running while the process is frozen (SIGSTOP, GC pause),
 * which is what lets a frozen replica see on waking that its leases are gone.
 *
 * It reads the global `performance` at each call (the same object as node:perf_hooks'), like the
 * coordinator's global timers, so a test can drive both with fake timers.
 */
export function monotonicNow(): number {
  return globalThis.performance.now()
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const t = setTimeout(done, Math.max(0, ms))
    function done() {
      clearTimeout(t)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}
