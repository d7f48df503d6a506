/**
 * What every listing (`… ls`) shares: the output formats, `--sort` (one of the listing's own sort
 * keys), `--replica` (for listings whose rows have a replica), `--limit` (a bounded look at a huge
 * keyspace), `-w/--watch` (print again when the rows change), and the scan notes — a `--limit` that
 * cut the scan short, and the corrupt keys, which are reported while the rest is listed.
 */
import { Command, InvalidArgumentError, Option } from 'commander'
import type { Context } from '../context.js'
import type { Corrupt, KeyKind, Listing, UnreachableMaster } from '../lib.js'
import { MIN_INTERVAL_MS, durationOption, interruptSignal, sleep } from '../duration.js'
import { EXIT } from '../output/exit-codes.js'
import { usage } from '../output/errors.js'
import { jsonOut, printList, type KindView } from '../output/format.js'
import { safeCopy } from '../output/safe-text.js'
import { stdoutClosedSignal } from '../output/streams.js'
import { run } from '../run.js'
import { CliError } from '../output/errors.js'
import { NAME_KINDS, nameArg } from '../output/names.js'
import { SORTED_ROWS_MAX, openRows, printStreamed, type RowStream } from './listing-stream.js'

/** Corrupt keys found by listings: reported on stderr, the listing goes on. */
export function printCorrupt(ctx: Context, corrupt: Corrupt[]): void {
  for (const k of safeCopy(corrupt)) ctx.err(ctx.c.red(`corrupt: ${k.rawKey}: ${k.error}`))
}

/** One line for the Cluster masters a listing could not read (down, or failing over). */
export function unreachableLine(missing: UnreachableMaster[]): string {
  const which = missing.map((m) => `${m.node} (slots ${m.slots}: ${m.error})`).join(', ')
  return `partial: ${missing.length === 1 ? 'master' : 'masters'} ${which} did not answer: the keys there are not listed`
}

/** After a listing's table: masters not read, a --limit that cut the scan short, and the corrupt keys. */
export function printScanNotes(ctx: Context, data: { truncated?: boolean; corrupt: Corrupt[]; unreachable?: UnreachableMaster[] }): void {
  if (data.unreachable?.length) ctx.err(ctx.c.yellow(unreachableLine(data.unreachable)))
  if (data.truncated) ctx.err(ctx.c.yellow(`stopped after --limit keys: the listing is partial`))
  printCorrupt(ctx, data.corrupt)
}

/** Scan bookkeeping for the JSON document: how many keys were seen, corrupt ones, truncation. */
export function scanInfo(...listings: Array<Listing<unknown>>): { scanned: number; truncated: boolean; corrupt: Corrupt[] } {
  return {
    scanned: listings.reduce((n, l) => n + l.scanned, 0),
    truncated: listings.some((l) => l.truncated),
    corrupt: listings.flatMap((l) => l.corrupt),
  }
}

/** Redis's now and the live replicas (liveness of every holder, from the replica index), read together. */
export async function nowAndReplicas(ctx: Context) {
  const [nowMs, replicas] = await Promise.all([
    ctx.reader.now(),
    ctx.reader.liveReplicas().catch(async (err: unknown) => {
      // On a Cluster whose master of the heartbeats is down: which replicas live cannot be known.
      const missing = await ctx.reader.unreachable('replica')
      throw missing.length ? unknowable(ctx, 'replica', missing) : err
    }),
  ])
  return { nowMs, replicas }
}

/** The rows of a one-slot listing cannot be known: its master does not answer. */
function unknowable(ctx: Context, kind: KeyKind, missing: UnreachableMaster[]): CliError {
  const m = missing[0]!
  const records = kind === 'replica' ? 'heartbeat' : `${kind} record`
  return new CliError(
    `cannot know the ${kind}s: master ${m.node} (slots ${m.slots}), which holds every ${records} under prefix ${ctx.keys.prefix}, did not answer (${m.error}); a failover may be under way: try again once its replica is promoted`,
    EXIT.unreachable,
  )
}

/**
 * When a read found nothing, is it because the prefix holds no botmesh-coord keys at all (a wrong or
 * missing --prefix)? Then one line for stderr that says so and names the prefixes that do hold state
 * (a bounded SCAN: ../../src/state/reader.ts prefixSurvey); null when the prefix is in use, or when
 * reading a snapshot. The exit code stays the command's own.
 */
export async function emptyPrefixLine(ctx: Context): Promise<string | null> {
  if (ctx.from) return null
  const survey = await ctx.reader.prefixSurvey().catch(() => null)
  if (!survey || survey.used) return null
  const p = ctx.keys.prefix
  const where = survey.others.length
    ? `prefixes with botmesh-coord state here: ${survey.others.join(', ')}${survey.complete ? '' : ' (and maybe more: the scan was bounded)'}; pass one with --prefix or BOTMESH_PREFIX`
    : `no prefix here holds botmesh-coord state${survey.complete ? '' : ' among the keys looked at (the scan was bounded)'}: check --url`
  return `note: prefix ${p} holds no botmesh-coord keys at all (is --prefix right?); ${where}`
}

export const limitOption = () =>
  new Option('--limit <keys>', 'stop scanning after this many keys per kind (a bounded look at a huge keyspace)').argParser((v) => {
    const n = Number(v)
    if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('a positive integer is expected')
    return n
  })

export function examples(...lines: string[]): string {
  return `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  ${l}`).join('\n')}`
}

// ------------------------------------------------------------------ sorting

type Cmp<R> = (a: R, b: R) => number
const text = (a: string | null | undefined, b: string | null | undefined) => (a ?? '').localeCompare(b ?? '')
const num = (a: number | null | undefined, b: number | null | undefined) => (a ?? -Infinity) - (b ?? -Infinity)

/** Ascending by a text field (nulls first). */
export const byText =
  <R>(f: (r: R) => string | null | undefined): Cmp<R> =>
  (a, b) =>
    text(f(a), f(b))
/** Ascending by a number field (nulls first). */
export const byNumber =
  <R>(f: (r: R) => number | null | undefined): Cmp<R> =>
  (a, b) =>
    num(f(a), f(b))
/** Descending by a number field (nulls last): the longest wait, the oldest renewal first. */
export const byNumberDesc =
  <R>(f: (r: R) => number | null | undefined): Cmp<R> =>
  (a, b) =>
    num(f(b), f(a))

// ------------------------------------------------------------------ listings

export interface ListingData<R> {
  nowMs: number
  rows: R[]
  /** The rest of the JSON document (scan notes, other arrays). */
  extra?: Record<string, unknown>
  /** Scan notes printed after a table (and kept in the JSON document). */
  truncated?: boolean
  corrupt: Corrupt[]
  /** Cluster masters not read (filled by listingCommand). */
  unreachable?: UnreachableMaster[]
}

export interface ListingSpec<R, O> {
  name: string
  description: string
  examples: string[]
  /** How rows print. */
  view(ctx: Context): KindView<R>
  /** `--sort <key>`: the listing's own sort keys; the first is the default. */
  sorts: Record<string, Cmp<R>>
  defaultSort?: string
  /** Rows that have a replica: `--replica <id>` keeps those whose replicas include it. */
  replicasOf?(row: R): Array<string | null>
  /** More options of this listing. */
  options?(cmd: Command): Command
  /** Read the state (one bounded pass) and build the rows. */
  collect(ctx: Context, o: O & ListingFlags): Promise<ListingData<R>>
  /**
   * The rows as the scan reads them, for a listing that can be as big as the keyspace (chats, leases):
   * a small one is still printed sorted in one piece; a big one streams (./listing-stream.ts).
   */
  stream?(ctx: Context, o: O & ListingFlags): Promise<RowStream<R>>
  /**
   * The one kind of key the rows come from, when all of them share a slot on a Cluster (replicas:
   * their heartbeats): a master down elsewhere does not make the listing partial, and that slot's
   * master down means the rows cannot be known (an error, never an empty listing).
   */
  oneSlotKind?(o: O): KeyKind | null
}

export interface ListingFlags {
  sort: string
  replica?: string
  watch?: boolean
  /** ms */
  interval: number
  limit?: number
}

/** Drop what changes with every read of the clock, to tell whether the rows themselves changed. */
function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable)
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !/(Ms|At)$/.test(k))
        .map(([k, x]) => [k, stable(x)]),
    )
  }
  return v
}

/** A `… ls` command: formats, --sort, --replica, --limit, -w/--watch, scan notes — the same for every listing. */
export function listingCommand<R, O>(spec: ListingSpec<R, O>): Command {
  const sortKeys = Object.keys(spec.sorts)
  const cmd = new Command(spec.name)
    .description(spec.description)
    .addOption(
      new Option(
        '--sort <key>',
        spec.stream
          ? `sort by (past ${SORTED_ROWS_MAX.toLocaleString('en-US')} rows only when given: every row is read, sorted on disk, then printed)`
          : 'sort by',
      )
        .choices(sortKeys)
        .default(spec.defaultSort ?? sortKeys[0]),
    )
  if (spec.replicasOf) cmd.option('--replica <replicaId>', 'only rows of this replica', nameArg(NAME_KINDS.replica, 'a replica'))
  spec.options?.(cmd)
  cmd
    .option('-w, --watch', 'keep watching: print the listing again whenever it changes (Ctrl-C to stop)')
    .addOption(
      durationOption('--interval <duration>', 'with --watch: how often to look (at least 4 times the time one read takes)', {
        min: MIN_INTERVAL_MS,
        default: '2s',
        timer: true,
      }),
    )
    .addHelpText('after', examples(...spec.examples))
  if (spec.name === 'ls') cmd.alias('list')
  return cmd.action(
    run(async (ctx, o: O & ListingFlags) => {
      const view = spec.view(ctx)
      const cmp = spec.sorts[o.sort] ?? spec.sorts[sortKeys[0]!]!
      let surveyed = false
      const keep = (r: R) => o.replica === undefined || !spec.replicasOf || spec.replicasOf(r).includes(o.replica)
      const read = async (collected?: ListingData<R>) => {
        const data = collected ?? (await spec.collect(ctx, o))
        const kind = spec.oneSlotKind?.(o) ?? undefined
        const unreachable = await ctx.reader.unreachable(kind)
        if (kind && unreachable.length) throw unknowable(ctx, kind, unreachable)
        let rows = data.rows
        // Asked once (a -w watch does not scan for prefixes at every look).
        const prefixNote = rows.length === 0 && !unreachable.length && !surveyed ? await emptyPrefixLine(ctx) : null
        if (rows.length === 0 && !unreachable.length) surveyed = true
        rows = rows.filter(keep)
        return { ...data, unreachable, prefixNote, rows: [...rows].sort(cmp) }
      }
      let noted = false
      const show = (data: ListingData<R> & { prefixNote?: string | null }, p = ctx) => {
        // Once, on stderr, whatever the format: stdout stays the listing (empty) and the exit code is kept.
        if (data.prefixNote && !noted) ctx.err(ctx.c.yellow(data.prefixNote))
        noted ||= Boolean(data.prefixNote)
        const envelope = {
          nowMs: data.nowMs,
          ...data.extra,
          truncated: data.truncated ?? false,
          corrupt: data.corrupt,
          unreachable: data.unreachable ?? [],
        }
        printList(p, view, data.rows, envelope)
        if (ctx.format !== 'json') printScanNotes(ctx, data)
      }
      if (o.watch && ctx.from) throw usage('-w/--watch follows a live Redis; a snapshot does not change (drop --from or -w)')
      if (!o.watch) {
        let collected: ListingData<R> | undefined
        if (spec.stream) {
          const stream = await spec.stream(ctx, o)
          const opened = await openRows(stream, keep)
          if (opened.small) collected = { nowMs: stream.nowMs, rows: opened.rows, ...opened.notes }
          else {
            const given = cmd.getOptionValueSource('sort') !== 'default'
            let unreachable: UnreachableMaster[] = []
            const notes = await printStreamed(ctx, opened, { view, keep, sortBy: given ? { key: o.sort, cmp } : null }, async () => {
              unreachable = await ctx.reader.unreachable()
              return { unreachable }
            })
            if (ctx.format !== 'json') printScanNotes(ctx, { ...notes, unreachable })
            return unreachable.length ? EXIT.unreachable : EXIT.ok
          }
        }
        const data = await read(collected)
        show(data)
        // A partial listing is printed, and its exit code says it is partial.
        return data.unreachable?.length ? EXIT.unreachable : EXIT.ok
      }
      // -w: print again when the rows change; each read waits at least 4 times as long as the
      // last one took, so watching a huge keyspace costs Redis at most a fifth of one connection.
      const stop = [interruptSignal(), stdoutClosedSignal()]
      let last: string | null = null
      let first = true
      while (!stop.some((s) => s.aborted)) {
        const started = performance.now()
        const data = await read()
        const took = performance.now() - started
        const now = JSON.stringify(stable({ rows: data.rows, corrupt: data.corrupt, unreachable: data.unreachable }))
        if (now !== last) {
          last = now
          if (ctx.format === 'json') {
            const rows = view.document ? view.document(data.rows) : { [view.list]: data.rows }
            ctx.out(JSON.stringify(JSON.parse(jsonOut(view.list, { nowMs: data.nowMs, ...rows, unreachable: data.unreachable ?? [] }))))
          } else {
            if (!first && (ctx.format === 'table' || ctx.format === 'wide')) ctx.out('')
            show(data)
          }
          first = false
        }
        await sleep(Math.max(o.interval, 4 * took), ...stop)
      }
      return EXIT.ok
    }),
  )
}
