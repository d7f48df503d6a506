/**
 * A listing too big to read whole before printing (a million chats): its rows are printed as the
 * scan reads them, and a sort asked for is made in bounded memory.
 *
 * A listing reads its first rows into memory. When the scan ends within SORTED_ROWS_MAX rows (and,
 * past SLOW_SCAN_KEYS keys scanned, within FIRST_ROWS_MS), it is printed as it always was: sorted, in
 * one piece. Otherwise:
 * - by default, the rows are printed in the order the scan reads them, from now on, with one line
 *   on stderr that says so: the first rows come in about a second at any size, `| head` stops the scan,
 *   and memory holds one batch;
 * - with `--sort` given, every row is read first and sorted in runs on disk (../output/external-sort.ts),
 *   with one line up front that says how many keys that reads and about how long it takes.
 */
import type { Context } from '../context.js'
import type { Corrupt, Listing } from '../lib.js'
import { ListWriter } from '../output/list-writer.js'
import { sortedBatches } from '../output/external-sort.js'
import type { KindView } from '../output/format.js'
import { stopProgress } from '../output/progress.js'
import { stdoutDrained } from '../output/streams.js'

/** A listing's rows as the scan reads them (a spec's `stream`). */
export interface RowStream<R> {
  nowMs: number
  batches: AsyncIterable<R[]>
  /** Keys the scan has seen so far. */
  scanned(): number
  /** Once the batches have ended: the scan notes and the rest of the JSON document. */
  notes(): { truncated: boolean; corrupt: Corrupt[]; extra?: Record<string, unknown> }
}

/** A reader's streamed listing (StateReader.listStream) as the rows of a listing: `rows` makes a batch's rows. */
export function rowStream<I, R>(
  nowMs: number,
  listed: {
    batches: AsyncIterable<{ items: I[]; corrupt: Array<Corrupt & { kind: string }> }>
    summary(): { scanned: number; truncated: boolean }
  },
  rows: (items: I[]) => R[],
  /** Listings read before the walk (the live replicas): their keys and corrupt records count too. */
  before: Array<Listing<unknown>> = [],
): RowStream<R> {
  const corrupt: Corrupt[] = before.flatMap((l) => l.corrupt)
  async function* batches(): AsyncGenerator<R[]> {
    for await (const b of listed.batches) {
      for (const { rawKey, error } of b.corrupt) corrupt.push({ rawKey, error })
      yield rows(b.items)
    }
  }
  const earlier = before.reduce((n, l) => n + l.scanned, 0)
  return {
    nowMs,
    batches: batches(),
    scanned: () => listed.summary().scanned,
    notes: () => {
      const { scanned, truncated } = listed.summary()
      return { truncated: truncated || before.some((l) => l.truncated), corrupt, extra: { scanned: earlier + scanned } }
    },
  }
}

/** Every row of a stream, in memory (a listing's `collect`, `-w`, the commands that need them all). */
export async function drain<R>(stream: RowStream<R>): Promise<{ nowMs: number; rows: R[] } & ReturnType<RowStream<R>['notes']>> {
  const rows: R[] = []
  for await (const batch of stream.batches) for (const r of batch) rows.push(r)
  return { nowMs: stream.nowMs, rows, ...stream.notes() }
}

/** A listing of more rows than this streams. */
export const SORTED_ROWS_MAX = 2_000
/** A scan that has seen this many keys and runs this long streams the rows it has (first row within a second). */
const SLOW_SCAN_KEYS = 20_000
const FIRST_ROWS_MS = 500

/** What the first rows told: the listing was small (all its rows, sorted later as ever), or it streams. */
export type Opened<R> =
  | { small: true; rows: R[]; notes: ReturnType<RowStream<R>['notes']> }
  | { small: false; first: R[]; rest: AsyncIterator<R[]>; stream: RowStream<R>; startedAt: number }

/** Read a listing's first rows: all of them when it is small. `keep`: the row filters (--replica). */
export async function openRows<R>(stream: RowStream<R>, keep: (r: R) => boolean): Promise<Opened<R>> {
  const startedAt = performance.now()
  const rest = stream.batches[Symbol.asyncIterator]()
  const first: R[] = []
  for (;;) {
    const next = await rest.next()
    if (next.done) return { small: true, rows: first, notes: stream.notes() }
    for (const r of next.value) if (keep(r)) first.push(r)
    const slow = stream.scanned() >= SLOW_SCAN_KEYS && performance.now() - startedAt >= FIRST_ROWS_MS
    if (first.length > SORTED_ROWS_MAX || slow) return { small: false, first, rest, stream, startedAt }
  }
}

interface StreamPrint<R> {
  view: KindView<R>
  keep: (r: R) => boolean
  /** `--sort` as given on the command line (null: the default, which a streamed listing does not apply). */
  sortBy: { key: string; cmp: (a: R, b: R) => number } | null
}

/**
 * Print a listing that did not fit (openRows said so): as read, or sorted on disk. Returns the scan
 * notes for the caller's exit code and stderr lines; the JSON document's tail gets them here.
 */
export async function printStreamed<R>(
  ctx: Context,
  opened: Extract<Opened<R>, { small: false }>,
  how: StreamPrint<R>,
  tail: () => Promise<Record<string, unknown>>,
): Promise<ReturnType<RowStream<R>['notes']>> {
  const { stream, first, rest } = opened
  async function* all(): AsyncGenerator<R[]> {
    yield first
    for (;;) {
      const next = await rest.next()
      if (next.done) return
      yield next.value.filter(how.keep)
    }
  }
  stopProgress()
  const rows = how.sortBy ? sortedBatches(all(), how.sortBy.cmp) : all()
  if (how.sortBy) ctx.err(ctx.c.dim(await sortLine(ctx, opened, how.sortBy.key)))
  else
    ctx.err(
      ctx.c.dim(
        `more than ${first.length.toLocaleString('en-US')} rows: printed as the scan reads them, not sorted (--sort KEY sorts them all, and prints once every row is read)`,
      ),
    )
  const writer = new ListWriter(ctx, how.view, { nowMs: stream.nowMs })
  for await (const batch of rows) {
    writer.write(batch)
    await stdoutDrained() // no further ahead of a slow reader than stdout's buffer
  }
  const notes = stream.notes()
  writer.end({ ...notes.extra, truncated: notes.truncated, corrupt: notes.corrupt, ...(await tail()) })
  return notes
}

/** Said before a sort of more rows than memory keeps: how many keys that reads, and about how long. */
async function sortLine<R>(ctx: Context, opened: Extract<Opened<R>, { small: false }>, key: string): Promise<string> {
  const seen = opened.stream.scanned()
  const rate = seen / Math.max(0.001, (performance.now() - opened.startedAt) / 1000)
  const total = await ctx.reader.keysInServer().catch(() => null)
  const left = total !== null ? Math.max(0, total - seen) : null
  const eta = left !== null ? `, about ${Math.ceil(left / rate)} s more at ${Math.round(rate).toLocaleString('en-US')} keys/s` : ''
  return `sorting by ${key}: every row is read before the first is printed (${seen.toLocaleString('en-US')} keys scanned${
    total !== null ? ` of about ${total.toLocaleString('en-US')} in Redis` : ''
  }${eta}); without --sort rows are printed as they are read`
}
