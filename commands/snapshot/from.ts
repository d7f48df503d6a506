/**
 * `--from <snapshot>`: a read command answers from a snapshot file instead of Redis. The file gives
 * the prefix and the layout; the reader asks the snapshot's records (RecordedSource) the questions it
 * asks Redis, so every read command and the dashboard answer through their usual code, with "now"
 * the snapshot's Redis time. A header line on stderr says which file and when it was taken. Commands
 * that change state refuse (exit 7).
 */
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs'
import { basename } from 'node:path'
import { createGunzip } from 'node:zlib'
import type { Command } from 'commander'
import { formatDuration, keyText, loadIo, maskUrl, type Io, type RedisKey, type Snapshot, type StateSource } from '../lib.js'
import type { RecordedSource } from '../lib.js'
import { refused, usage, CliError } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { checkReadableFile, globalOptions } from '../target.js'
import { rawWrite, visible } from '../output/safe-text.js'

/** The one line a command that changes state prints when given --from. */
export const fromRefusal = (what: string) =>
  refused(`--from answers read commands from a snapshot file; ${what} needs a live Redis (drop --from)`)

/** The snapshot file named by --from, if any. */
export function fromFile(cmd: Command): string | undefined {
  const f = (globalOptions(cmd) as { from?: string }).from
  return f === undefined || f === '' ? undefined : f
}

/** The file's bytes as they are read, decompressed when it is gzip; a damaged gzip stream fails with one line. */
async function* fileBytes(path: string): AsyncGenerator<Buffer> {
  const head = Buffer.alloc(2)
  const fd = openSync(path, 'r')
  try {
    readSync(fd, head, 0, 2, 0)
  } finally {
    closeSync(fd)
  }
  const file = createReadStream(path, { highWaterMark: 1024 * 1024 })
  if (head[0] !== 0x1f || head[1] !== 0x8b) {
    try {
      yield* file as AsyncIterable<Buffer>
    } finally {
      file.destroy()
    }
    return
  }
  const gunzip = createGunzip({ chunkSize: 1024 * 1024 })
  file.on('error', (err) => gunzip.destroy(err))
  file.pipe(gunzip)
  try {
    for await (const piece of gunzip as AsyncIterable<Buffer>) yield piece
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('Z_')) throw new Error('not a snapshot: the gzip data is damaged')
    throw err
  } finally {
    file.destroy()
    gunzip.destroy()
  }
}

/**
 * Progress of reading a file, on stderr, only on a terminal (and not when `quiet`: JSON output) and
 * only once the read has run for a second: "reading snapshot.json.gz… 120 MiB". Cleared by done().
 */
function readProgress(file: string, quiet: boolean): { update(bytes: number): void; done(): void } {
  const started = Date.now()
  const tty = process.stderr.isTTY && !quiet
  let shown = false
  return {
    update(bytes) {
      if (!tty || Date.now() - started < 1000) return
      shown = true
      rawWrite('stderr', `\rreading ${visible(file)}… ${Math.round(bytes / 1024 / 1024).toLocaleString('en-US')} MiB\u001b[K`)
    },
    done() {
      if (shown) rawWrite('stderr', '\r\u001b[K')
      shown = false
    },
  }
}

/**
 * Read and check a snapshot file as it streams in: one line (exit 2) when it cannot be read, is
 * larger than this process reads (snapshotReadLimit), or is not a snapshot. `progress`: show how
 * far the read is on a terminal (not for JSON output).
 */
export async function loadSnapshot(path: string, what = '--from', progress = false): Promise<{ io: Io; snapshot: Snapshot }> {
  checkReadableFile(path, what)
  const io = await loadIo()
  const shown = readProgress(basename(path), !progress)
  try {
    const limit = io.snapshotReadLimit()
    // A file larger than that is refused before it is read (a gzip is stopped where it inflates past it).
    if (statSync(path).size > limit) throw new Error(io.snapshotTooLarge(limit))
    const snapshot = await io.readSnapshot(fileBytes(path), limit, shown.update)
    // Masked again: a file written by another tool (or edited) may carry a password in its URL.
    return { io, snapshot: { ...snapshot, target: { ...snapshot.target, url: maskUrl(String(snapshot.target.url)) } } }
  } catch (err) {
    if (err instanceof CliError) throw err
    throw new CliError(`${what}: ${path}: ${err instanceof Error ? err.message : String(err)}`, EXIT.usage)
  } finally {
    shown.done()
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
  const rec = (source as RecordedSource).record(keyText(rawKey))
  return rec?.omitted ? Object.keys(rec.omitted) : null
}
