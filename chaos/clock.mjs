// One clock for every process of a run on this machine: CLOCK_MONOTONIC (process.hrtime), in ms. The
// checkers compare events of different processes on it, so it must not depend on anything a process
// samples for itself: performance.timeOrigin + performance.now() does (the wall clock read once at
// process start — late by milliseconds when the start was pre-empted on a loaded machine, and shifted
// by any step of the wall clock), and it made a replica started under load look several ms ahead of
// the others: overlaps that never happened. Never Date.now() either: the workers' Date.now is jumped
// on purpose.
export const now = () => Number(process.hrtime.bigint()) / 1e6
export const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)))
