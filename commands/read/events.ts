import { Command, InvalidArgumentError, Option } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import { EVENT_TYPES } from '../lib.js'
import { MIN_INTERVAL_MS, durationOption, interruptSignal, pointInTime, sleep } from '../duration.js'
import { EXIT } from '../output/exit-codes.js'
import { usage } from '../output/errors.js'
import { cell, printList, type KindView, type Printer } from '../output/format.js'
import { eventLine, eventRowOf, whenText, type EventRow, type Tone } from '../output/events.js'
import { stdoutClosedSignal } from '../output/streams.js'
import { emptyPrefixLine, examples } from './common.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

export type { EventRow }

interface EventsOptions {
  count: number
  follow?: boolean
  type?: string[]
  replica?: string
  /** ms */
  interval: number
  since?: string
  until?: string
  timestamps?: boolean
}

/** Entries read per call while paging back through the stream for filtered events. */
const PAGE = 500
/** The stream is capped near 10,000 entries: paging back never reads more than this. */
const MAX_SCANNED = 10_000

function matches(o: EventsOptions, r: EventRow): boolean {
  return (!o.type?.length || o.type.includes(r.type)) && (o.replica === undefined || r.replicaId === o.replica)
}

function toneColour(ctx: Context, tone: Tone, text: string): string {
  const { c } = ctx
  return tone === 'bad'
    ? c.red(text)
    : tone === 'good'
      ? c.green(text)
      : tone === 'warn'
        ? c.yellow(text)
        : tone === 'operator'
          ? c.magenta(text)
          : text
}

function eventsView(ctx: Context, nowMs: () => number, timestamps: boolean): KindView<EventRow> {
  return {
    list: 'events',
    name: (r) => `event/${r.id}`,
    empty: `no events under prefix ${ctx.keys.prefix}`,
    columns: [
      ...(timestamps ? [{ header: 'TIME', value: (r: EventRow) => new Date(r.atMs).toISOString() }] : []),
      { header: 'WHEN', value: (r: EventRow) => whenText(r.atMs, nowMs()), wide: timestamps },
      { header: 'TYPE', value: (r: EventRow) => toneColour(ctx, eventLine(r.id, r.event).tone, cell(r.type)) },
      { header: 'REPLICA', value: (r: EventRow) => cell(r.replicaId) },
      { header: 'INCARNATION', value: (r: EventRow) => cell(r.incarnation?.slice(0, 8)), wide: true },
      { header: 'DETAIL', value: (r: EventRow) => cell(eventLine(r.id, r.event).text) },
      { header: 'ID', value: (r: EventRow) => r.id, wide: true },
    ],
  }
}

/** The most recent `count` matching events in [since, until], paging back through the stream (bounded). */
async function recent(ctx: Context, o: EventsOptions, sinceMs: number | undefined, untilMs: number | undefined): Promise<EventRow[]> {
  const filtered = Boolean(o.type?.length || o.replica !== undefined)
  const out: EventRow[] = []
  let before: string | undefined
  let scanned = 0
  for (;;) {
    const want = filtered ? PAGE : o.count
    const page = (await ctx.reader.events({ count: want, sinceMs, untilMs, before })).map(eventRowOf)
    scanned += page.length
    out.unshift(...page.filter((r) => matches(o, r)))
    if (out.length >= o.count || page.length < want || scanned >= MAX_SCANNED || !filtered) break
    before = page[0]!.id
  }
  return out.slice(-o.count)
}

export function eventsCommand(): Command {
  return new Command('events')
    .description(
      'recent coordination events (replica start/stop, leader changes, yields, lease losses, handovers) and the audit trail of interventions',
    )
    .option(
      '-n, --count <n>',
      'how many recent events (after filtering)',
      (v) => {
        const n = Number(v)
        if (!Number.isInteger(n) || n <= 0 || n > 10_000) throw new InvalidArgumentError('a whole number from 1 to 10000 is expected')
        return n
      },
      50,
    )
    .option('-f, --follow', 'keep printing new events as they come (Ctrl-C to stop); with -o json, one JSON object per line')
    .addOption(
      new Option('--type <type...>', 'only these event types (repeat or comma-separate)')
        .choices([...EVENT_TYPES])
        .argParser((v: string, prev: string[] | undefined) => {
          const types = v
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean)
          for (const t of types) {
            if (!(EVENT_TYPES as readonly string[]).includes(t))
              throw new InvalidArgumentError(`Allowed choices are ${EVENT_TYPES.join(', ')}.`)
          }
          return [...(prev ?? []), ...types]
        }),
    )
    .option('--replica <replicaId>', 'only events of this replica', nameArg(NAME_KINDS.replica, 'a replica'))
    .option('--since <time>', 'only events from then on: a duration back (10m, 1h30m) or a time (10:42, 2026-11-29T10:42:00Z)')
    .option('--until <time>', 'only events up to then (same forms as --since)')
    .option('--timestamps', 'show the time of each event (Redis clock, UTC) beside how long ago')
    .addOption(
      durationOption('--interval <duration>', 'how often --follow polls the stream', { min: MIN_INTERVAL_MS, default: '1s', timer: true }),
    )
    .addHelpText(
      'after',
      examples(
        'botmesh-coord --prefix shop events -n 20',
        'botmesh-coord --prefix shop events --type intervention --since 2h --timestamps',
        'botmesh-coord --prefix shop events -f --type lease-lost,follower',
        "botmesh-coord --prefix shop events -o jsonl | jq -r '.type'",
      ),
    )
    .action(
      run(async (ctx, o: EventsOptions) => {
        let nowMs = await ctx.reader.now()
        const sinceMs = o.since === undefined ? undefined : pointInTime(o.since, '--since', nowMs)
        const untilMs = o.until === undefined ? undefined : pointInTime(o.until, '--until', nowMs)
        const view = eventsView(ctx, () => nowMs, Boolean(o.timestamps))
        const rows = await recent(ctx, o, sinceMs, untilMs)
        if (!rows.length && sinceMs === undefined && untilMs === undefined) {
          const note = await emptyPrefixLine(ctx)
          if (note) ctx.err(ctx.c.yellow(note))
        }
        if (!o.follow) {
          printList(ctx, view, rows, { nowMs })
          return EXIT.ok
        }
        if (untilMs !== undefined) throw usage('--until cannot be combined with --follow (it follows new events)')
        if (ctx.from) throw usage('--follow follows a live Redis; a snapshot holds no new events (drop --from or --follow)')
        // Follow: poll the stream after the last id seen (XRANGE: works for a read-only ACL user).
        // Following, -o json is one JSON object per line (jsonl), and the header is printed once.
        const p: Printer = {
          format: ctx.format === 'json' ? 'jsonl' : ctx.format,
          headers: ctx.headers,
          c: ctx.c,
          out: ctx.out,
          err: ctx.err,
        }
        let last = rows.at(-1)?.id ?? `${nowMs}-0`
        const print = (batch: EventRow[]) => {
          if (!batch.length) return
          printList(p, view, batch)
          p.headers = false
        }
        if (rows.length) print(rows)
        else if (ctx.format === 'table' || ctx.format === 'wide')
          ctx.err(ctx.c.dim(`no events yet under prefix ${ctx.keys.prefix}; following (Ctrl-C to stop)`))
        const stop = [interruptSignal(), stdoutClosedSignal()]
        while (!stop.some((s) => s.aborted)) {
          await sleep(o.interval, ...stop)
          if (stop.some((s) => s.aborted)) break
          const [now, more] = await Promise.all([ctx.reader.now(), ctx.reader.events({ after: last, count: 1000 })])
          nowMs = now
          if (more.length) last = more.at(-1)!.id
          print(more.map(eventRowOf).filter((r) => matches(o, r)))
        }
        return EXIT.ok
      }),
    )
}
