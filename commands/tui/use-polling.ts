/**
 * Poll an async source every `intervalMs`: one read at a time (a slow Redis never piles reads up),
 * paused on request, interval cleared in the effect's cleanup. A failed read keeps the last good
 * value and is retried at the next tick, so a Redis that went away shows as a banner, not a freeze.
 */
import { useCallback, useEffect, useRef, useState } from 'react'

export interface PollState<T> {
  /** The last value read successfully (kept while reads fail). */
  data: T | null
  /** The error of the last read, cleared by the next successful one. */
  error: Error | null
  /** Consecutive failed reads. */
  failures: number
  /** Local ms (Date.now()) of the last successful read, and of the first failure of this outage. */
  lastOkAt: number | null
  failingSince: number | null
  /** A read is in flight, since this local ms. */
  inFlightSince: number | null
}

export interface PollControls {
  /** Read now (after an intervention), even when paused. */
  refresh: () => void
}

export function usePolling<T>(
  read: () => Promise<T>,
  options: { intervalMs: number; paused?: boolean; now?: () => number },
): PollState<T> & PollControls {
  const nowRef = useRef(options.now ?? Date.now)
  nowRef.current = options.now ?? Date.now
  const now = () => nowRef.current()
  const [state, setState] = useState<PollState<T>>({
    data: null,
    error: null,
    failures: 0,
    lastOkAt: null,
    failingSince: null,
    inFlightSince: null,
  })
  const readRef = useRef(read)
  readRef.current = read
  const inFlight = useRef(false)
  const mounted = useRef(true)

  const tick = useCallback(() => {
    if (inFlight.current) return
    inFlight.current = true
    const startedAt = now()
    setState((s) => ({ ...s, inFlightSince: startedAt }))
    let p: Promise<T>
    try {
      p = readRef.current()
    } catch (err) {
      p = Promise.reject(err)
    }
    p.then(
      (data) => {
        inFlight.current = false
        if (mounted.current) setState({ data, error: null, failures: 0, lastOkAt: now(), failingSince: null, inFlightSince: null })
      },
      (err: unknown) => {
        inFlight.current = false
        if (!mounted.current) return
        const error = err instanceof Error ? err : new Error(String(err))
        setState((s) => ({ ...s, error, failures: s.failures + 1, failingSince: s.failingSince ?? now(), inFlightSince: null }))
      },
    )
  }, [])

  useEffect(() => {
    mounted.current = true
    return () => {
      mounted.current = false
    }
  }, [])

  useEffect(() => {
    if (options.paused) return
    tick()
    const timer = setInterval(tick, Math.max(50, options.intervalMs))
    return () => clearInterval(timer)
  }, [options.paused, options.intervalMs, tick])

  return { ...state, refresh: tick }
}
