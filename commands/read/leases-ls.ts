import { InvalidArgumentError, Option, type Command } from 'commander'
import type { Context } from '../context.js'
import { LEASE_KINDS, LEASE_ORDER, filterLeases, leaseRowMaker, type LeaseFilter, type LeaseKindLabel, type LeaseRow } from '../lib.js'
import { durationOption } from '../duration.js'
import { cell, type KindView } from '../output/format.js'
import { dur, leftMs, renewedText } from '../output/time.js'
import { progress } from '../output/progress.js'
import { limitOption, listingCommand, nowAndReplicas, type ListingFlags } from './common.js'
import { drain, rowStream, type RowStream } from './listing-stream.js'

interface LeasesOptions {
  kind?: LeaseKindLabel[]
  /** ms */
  expiring?: number
  stale?: boolean
}

/**
 * Every lease of every kind asked for (chat turns, leads, locks) in one pass, holders' liveness,
 * Redis's clock, as the scan reads them. The live replicas and the clock are read first, so that
 * each batch of the scan becomes rows as it arrives (while Redis reads the next ones).
 */
export async function streamLeases(ctx: Context, o: LeasesOptions & Partial<ListingFlags>): Promise<RowStream<LeaseRow>> {
  const filter: LeaseFilter = { kinds: o.kind, expiringWithinMs: o.expiring, stale: o.stale }
  const want = (k: LeaseKindLabel[]) => !filter.kinds?.length || k.some((x) => filter.kinds!.includes(x))
  const d = ctx.io.LISTING_DECODERS
  const { nowMs, replicas } = await nowAndReplicas(ctx)
  const row = leaseRowMaker(replicas.items, nowMs)
  const decoders = {
    ...(want(['chat']) ? { chat: (...a: Parameters<typeof d.chat>) => row.chat(d.chat(...a)) } : {}),
    ...(want(['provider', 'scheduler', 'lead']) ? { lead: (...a: Parameters<typeof d.lead>) => row.lead(d.lead(...a)) } : {}),
    ...(want(['lock']) ? { lock: (...a: Parameters<typeof d.lock>) => row.lock(d.lock(...a)) } : {}),
  }
  const listed = ctx.reader.listStream(decoders, { limit: o.limit, onProgress: progress(ctx, 'leases') })
  const rows = (items: Array<{ value: LeaseRow | null }>) =>
    filterLeases(
      items.flatMap((i) => (i.value ? [i.value] : [])),
      filter,
    )
  return rowStream(nowMs, listed, rows, [replicas])
}

function leasesView(ctx: Context): KindView<LeaseRow> {
  const { c } = ctx
  return {
    list: 'leases',
    name: (r) => `${r.kind}/${r.key}`,
    empty: `no leases match under prefix ${ctx.keys.prefix}`,
    columns: [
      { header: 'KIND', value: (r) => r.kind },
      { header: 'KEY', value: (r) => c.bold(cell(r.key)) },
      { header: 'HOLDER', value: (r) => (r.replicaId !== null ? cell(r.replicaId) : c.dim(cell(r.owner))) },
      { header: 'INCARNATION', value: (r) => cell(r.incarnation?.slice(0, 8)) },
      { header: 'FENCE', value: (r) => r.fence ?? '-' },
      {
        header: 'EXPIRES IN',
        value: (r) =>
          r.expiresInMs <= 0
            ? c.red(leftMs(r.expiresInMs))
            : r.expiresInMs < 2000
              ? c.yellow(leftMs(r.expiresInMs))
              : leftMs(r.expiresInMs),
      },
      { header: 'RENEWED', value: (r) => renewedText(c, r.state, r.lastRenewalAgoMs, r.renewMs) },
      { header: 'HELD FOR', value: (r) => dur(r.heldForMs) },
      { header: 'ALIVE', value: (r) => (r.holderAlive === null ? c.dim('?') : r.holderAlive ? c.green('yes') : c.red('NO')) },
      { header: 'OWNER', value: (r) => cell(r.owner), wide: true },
    ],
  }
}

function parseKinds(v: string, prev: LeaseKindLabel[] | undefined): LeaseKindLabel[] {
  const out = v
    .split(',')
    .map((k) => k.trim().replace(/s$/, ''))
    .filter(Boolean)
  for (const k of out) {
    if (!LEASE_KINDS.includes(k as LeaseKindLabel)) throw new InvalidArgumentError(`Allowed choices are ${LEASE_KINDS.join(', ')}.`)
  }
  return [...(prev ?? []), ...(out as LeaseKindLabel[])]
}

export function leasesLs(): Command {
  return listingCommand<LeaseRow, LeasesOptions>({
    name: 'ls',
    description: 'every lease: chat turns, provider leads, scheduler/other leads, locks — holder, fence, time left (Redis clock)',
    examples: [
      'botmesh-coord --prefix shop leases ls',
      'botmesh-coord --prefix shop leases ls --kind provider,lock --sort expires',
      'botmesh-coord --prefix shop leases ls --replica pod-a --expiring 5s -o json',
      'botmesh-coord --prefix shop leases ls --stale -w',
    ],
    view: leasesView,
    sorts: LEASE_ORDER,
    replicasOf: (r) => [r.replicaId],
    options: (cmd) =>
      cmd
        .addOption(
          new Option('--kind <kind...>', 'only these kinds (repeat or comma-separate)').choices([...LEASE_KINDS]).argParser(parseKinds),
        )
        .addOption(
          durationOption('--expiring <duration>', 'only leases that expire within this time (e.g. 5s, 1m30s; expired ones included)'),
        )
        .option('--stale', "only leases whose holder's heartbeat is gone (dead or restarted) while Redis still honours them")
        .addOption(limitOption()),
    collect: async (ctx, o) => drain(await streamLeases(ctx, o)),
    stream: streamLeases,
  })
}
