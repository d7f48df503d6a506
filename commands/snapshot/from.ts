/**
 * `--from <snapshot>`: a read command answers from a snapshot file instead of Redis. The file gives
 * the prefix and the layout; the reader asks the snapshot's records (RecordedSource) the questions it
 * asks Redis, so every read command and the dashboard answer through their usual code, with "now"
 * the snapshot's Redis time. A header line on stderr says which file and when it was taken. Commands
 * that change state refuse (exit 7).
 */
import { readFileSync, statSync } from 'node:fs'
import type { Command } from 'commander'
import { formatDuration, keyText, loadIo, maskUrl, type Io, type RedisKey, type Snapshot, type StateSource } from '../lib.js'
import type { RecordedSource } from '../lib.js'
import { refused, usage, CliError } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { checkReadableFile, globalOptions } from '../target.js'

/** The one line a command that changes state prints when given --from. */
export const fromRefusal = (what: string) =>
  refused(`--from answers read commands from a snapshot file; ${what} needs a live Redis (drop --from)`)

/** The snapshot file named by --from, if any. */
export function fromFile(cmd: Command): string | undefined {
  const f = (globalOptions(cmd) as { from?: string }).from
  return f === undefined || f === '' ? undefined : f
}

/** Read and check a snapshot file: one line (exit 2) when it cannot be read or is not a snapshot. */
export async function loadSnapshot(path: string, what = '--from'): Promise<{ io: Io; snapshot: Snapshot }> {
  checkReadableFile(path, what)
  const io = await loadIo()
  try {
    // A file larger than a snapshot may be is refused before it is read.
    if (statSync(path).size > io.SNAPSHOT_MAX_BYTES) throw new Error(io.SNAPSHOT_TOO_LARGE)
    const snapshot = io.decodeSnapshot(readFileSync(path))
    // Masked again: a file written by another tool (or edited) may carry a password in its URL.
    return { io, snapshot: { ...snapshot, target: { ...snapshot.target, url: maskUrl(String(snapshot.target.url)) } } }
  } catch (err) {
    if (err instanceof CliError) throw err
    throw new CliError(`${what}: ${path}: ${err instanceof Error ? err.message : String(err)}`, EXIT.usage)
  }
}

/** The header of a replayed answer: which file, when it was taken, from where, and whether it is whole. */
export function snapshotHeader(path: string, s: Snapshot): string {
  const c = s.capture
  const when = new Date(c.startedAtMs).toISOString()
  const span = formatDuration(Math.max(0, c.finishedAtMs - c.startedAtMs))
  return `snapshot ${path}: taken ${when} (Redis time, read over ${span}) from ${s.target.url}, prefix ${s.target.prefix}, ${s.target.layout}${
    c.partial ? `; PARTIAL: ${c.partial}` : ''
  }`
}

/** A --prefix or --layout given explicitly must match the snapshot's (a different bot's snapshot is a usage error). */
export function checkAgainst(cmd: Command, s: Snapshot): void {
  const o = globalOptions(cmd)
  const given = (k: string) => ['cli', 'env'].includes(cmd.getOptionValueSourceWithGlobals(k) ?? '')
  if (given('prefix') && o.prefix !== s.target.prefix)
    throw usage(`--prefix ${o.prefix}: the snapshot holds prefix ${s.target.prefix} (drop --prefix, or pick the other snapshot)`)
  if (given('layout') && o.layout !== 'auto' && o.layout !== s.target.layout)
    throw usage(`--layout ${o.layout}: the snapshot was taken with the ${s.target.layout} layout`)
}

/**
 * The fields a snapshot left out of one record (conversation state, saved answers, marker data; taken
 * without --include-state), or null: for saying so where the value would be shown.
 */
export function leftOut(source: StateSource, rawKey: RedisKey): string[] | null {
  if (source.origin !== 'recorded') return null
  const rec = (source as RecordedSource).records.hashes[keyText(rawKey)]
  return rec?.omitted ? Object.keys(rec.omitted) : null
}
