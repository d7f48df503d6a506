import { Command, InvalidArgumentError } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import { EXIT } from '../output/exit-codes.js'
import { jsonOut } from '../output/json.js'
import { table } from '../output/table.js'
import { agoMs } from '../output/time.js'
import { durationOption, examples } from './common.js'

export interface EventRow {
  /** Stream entry id; its first part is Redis's clock (ms) when the entry was added. */
  id: string
  /** Redis ms of the entry (from its id). */
  atMs: number
  type: string
  replicaId: string | null
  incarnation: string | null
  /** The event as the replica (or the CLI's audit trail) wrote it. */
  event: Record<string, unknown>
}

interface EventsOptions {
  count: number
  follow?: boolean
  type?: string[]
  replica?: string
  interval?: string
}

function toRow(e: { id: string; event: Record<string, unknown> }): EventRow {
  return {
    id: e.id,
    atMs: Number(e.id.split('-')[0]),
    type: typeof e.event.type === 'string' ? e.event.type : 'unknown',
    replicaId: typeof e.event.replicaId === 'string' ? e.event.replicaId : null,
    incarnation: typeof e.event.incarnation === 'string' ? e.event.incarnation : null,
    event: e.event,
  }
}

const HIDDEN = new Set(['type', 'replicaId', 'incarnation', 'at'])

/** The details of an event on one line: `name=provider:wa fence=17… reason=yield`. */
export function eventDetail(e: Record<string, unknown>): string {
  return Object.entries(e)
    .filter(([k, v]) => !HIDDEN.has(k) && v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ')
}

function matches(o: EventsOptions, r: EventRow): boolean {
  const types = o.type?.flatMap((t) => t.split(',')).filter(Boolean)
  return (!types?.length || types.includes(r.type)) && (o.replica === undefined || r.replicaId === o.replica)
}

function rowsText(ctx: Context, rows: EventRow[], nowMs: number, header: boolean): string {
  const { c } = ctx
  const colour = (t: string) =>
    t === 'lease-lost'
      ? c.red(t)
      : t === 'leader'
        ? c.green(t)
        : t === 'follower' || t === 'replica-stop'
          ? c.yellow(t)
          : t.startsWith('admin')
            ? c.magenta(t)
            : t
  const t = table(
    ['WHEN', 'TYPE', 'REPLICA', 'INCARNATION', 'DETAIL'].map((h) => c.dim(h)),
    rows.map((r) => [agoMs(nowMs - r.atMs), colour(r.type), r.replicaId ?? '-', r.incarnation?.slice(0, 8) ?? '-', eventDetail(r.event)]),
  )
  return header ? t : t.split('\n').slice(1).join('\n')
}

export function eventsCommand(): Command {
  return new Command('events')
    .description(
      'recent coordination events (replica start/stop, leader changes, yields, lease losses, handovers) and the audit trail of interventions',
    )
    .option(
      '-n, --count <n>',
      'how many recent events',
      (v) => {
        const n = Number(v)
        if (!Number.isInteger(n) || n <= 0 || n > 10_000) throw new InvalidArgumentError('a whole number from 1 to 10000 is expected')
        return n
      },
      50,
    )
    .option('-f, --follow', 'keep printing new events as they come (Ctrl-C to stop); with --json, one JSON object per line')
    .option('--type <type...>', 'only these event types (lease-lost, leader, follower, handover, replica-start, …)')
    .option('--replica <replicaId>', 'only events of this replica')
    .option('--interval <duration>', 'how often --follow polls the stream', '1s')
    .addHelpText(
      'after',
      examples(
        'botmesh-coord --prefix shop events -n 20',
        'botmesh-coord --prefix shop events -f --type lease-lost,follower',
        "botmesh-coord --prefix shop events --json | jq '.events[].type'",
      ),
    )
    .action(
      run(async (ctx, o: EventsOptions) => {
        const intervalMs = durationOption(o.interval, '--interval') ?? 1000
        const [nowMs, entries] = await Promise.all([ctx.reader.now(), ctx.reader.events({ count: o.count })])
        const all = entries.map(toRow)
        const rows = all.filter((r) => matches(o, r))
        if (!o.follow) {
          if (ctx.json) ctx.out(jsonOut('events', { nowMs, events: rows }))
          else if (rows.length === 0) ctx.out(ctx.c.dim(`no events under prefix ${ctx.keys.prefix}`))
          else ctx.out(rowsText(ctx, rows, nowMs, true))
          return EXIT.ok
        }
        // Follow: poll the stream after the last id seen (XRANGE: works for a read-only ACL user).
        let last = all.at(-1)?.id ?? `${nowMs}-0`
        let headerShown = false
        const print = (batch: EventRow[], now: number) => {
          if (!batch.length) return
          if (ctx.json) for (const r of batch) ctx.out(JSON.stringify(r))
          else {
            ctx.out(rowsText(ctx, batch, now, !headerShown))
            headerShown = true
          }
        }
        print(rows, nowMs)
        let stopped = false
        const stop = () => (stopped = true)
        process.once('SIGINT', stop)
        process.once('SIGTERM', stop)
        while (!stopped) {
          await new Promise((r) => setTimeout(r, intervalMs))
          if (stopped) break
          const [now, more] = await Promise.all([ctx.reader.now(), ctx.reader.events({ after: last, count: 1000 })])
          if (more.length) last = more.at(-1)!.id
          print(
            more.map(toRow).filter((r) => matches(o, r)),
            now,
          )
        }
        return EXIT.ok
      }),
    )
}
