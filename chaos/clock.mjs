import { performance } from 'node:perf_hooks'

// One clock for every process of a run on this machine: the time origin (wall clock at process start)
// plus the monotonic clock since. Never Date.now(): the workers' Date.now is jumped on purpose.
const origin = performance.timeOrigin
export const now = () => origin + performance.now()
export const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)))
