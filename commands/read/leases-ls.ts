import { Command, Option } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import {
  CHAT_HOLDER_FIELDS,
  LISTING_DECODERS,
  LEASE_KINDS,
  LEASE_SORTS,
  filterLeases,
  leaseRows,
  sortLeases,
  type LeaseFilter,
  type LeaseKindLabel,
  type LeaseRow,
  type LeaseSort,
} from '../lib.js'
import { jsonOut } from '../output/json.js'
import { table } from '../output/table.js'
import { agoMs, dur, leftMs } from '../output/time.js'
import { progress } from '../output/progress.js'
import { usage } from '../output/errors.js'
import { durationOption, examples, limitOption, nowAndReplicas, printScanNotes, scanInfo } from './common.js'

interface LeasesOptions {
  kind?: string[]
  replica?: string
  expiring?: string
  stale?: boolean
  sort?: LeaseSort
  limit?: number
}

function parseKinds(kinds: string[] | undefined): LeaseKindLabel[] | undefined {
  if (!kinds?.length) return undefined
  const out = kinds
    .flatMap((k) => k.split(','))
    .map((k) => k.trim().replace(/s$/, ''))
    .filter(Boolean)
  for (const k of out)
    if (!LEASE_KINDS.includes(k as LeaseKindLabel)) throw usage(`--kind must be one of ${LEASE_KINDS.join(', ')}, not ${k}`)
  return out as LeaseKindLabel[]
}

/** Collect: every lease of every kind (chat turns, leads, locks), holders' liveness, Redis's clock. */
export async function collectLeases(ctx: Context, o: LeasesOptions) {
  const filter: LeaseFilter = {
    kinds: parseKinds(o.kind),
    replicaId: o.replica,
    expiringWithinMs: durationOption(o.expiring, '--expiring'),
    stale: o.stale,
  }
  const want = (k: LeaseKindLabel[]) => !filter.kinds || k.some((x) => filter.kinds!.includes(x))
  const empty = { items: [], corrupt: [], scanned: 0, truncated: false }
  // One pass over the keyspace for every kind asked for.
  const decoders = {
    ...(want(['chat']) ? { chat: LISTING_DECODERS.chat } : {}),
    ...(want(['provider', 'scheduler', 'lead']) ? { lead: LISTING_DECODERS.lead } : {}),
    ...(want(['lock']) ? { lock: LISTING_DECODERS.lock } : {}),
  }
  const [{ nowMs, replicas }, found] = await Promise.all([
    nowAndReplicas(ctx),
    ctx.reader.listMany(decoders, { limit: o.limit, fields: { chat: CHAT_HOLDER_FIELDS }, onProgress: progress(ctx, 'leases') }),
  ])
  const chats = found.chat ?? empty
  const leads = found.lead ?? empty
  const locks = found.lock ?? empty
  const all = leaseRows({ chats: chats.items, leads: leads.items, locks: locks.items, replicas: replicas.items }, nowMs)
  const leases = sortLeases(filterLeases(all, filter), o.sort ?? 'kind')
  return { nowMs, leases, ...scanInfo(replicas, chats, leads, locks) }
}

export function printLeases(ctx: Context, data: Awaited<ReturnType<typeof collectLeases>>): void {
  const { c } = ctx
  if (data.leases.length === 0) ctx.out(c.dim(`no leases match under prefix ${ctx.keys.prefix}`))
  else
    ctx.out(
      table(
        ['KIND', 'KEY', 'HOLDER', 'INCARNATION', 'FENCE', 'EXPIRES IN', 'RENEWED', 'HELD FOR', 'ALIVE'].map((h) => c.dim(h)),
        data.leases.map((r: LeaseRow) => [
          r.kind,
          c.bold(r.key),
          r.replicaId ?? c.dim(r.owner ?? '-'),
          r.incarnation?.slice(0, 8) ?? '-',
          r.fence ?? '-',
          r.expiresInMs <= 0
            ? c.red(leftMs(r.expiresInMs))
            : r.expiresInMs < 2000
              ? c.yellow(leftMs(r.expiresInMs))
              : leftMs(r.expiresInMs),
          agoMs(r.lastRenewalAgoMs),
          dur(r.heldForMs),
          r.holderAlive === null ? c.dim('?') : r.holderAlive ? c.green('yes') : c.red('NO'),
        ]),
      ),
    )
  printScanNotes(ctx, data)
}

export function leasesLs(): Command {
  return new Command('ls')
    .alias('list')
    .description('every lease: chat turns, provider leads, scheduler/other leads, locks — holder, fence, time left (Redis clock)')
    .addOption(new Option('--kind <kind...>', `only these kinds: ${LEASE_KINDS.join(', ')} (repeat or comma-separate)`))
    .option('--replica <replicaId>', 'only leases held by this replica')
    .option('--expiring <duration>', 'only leases that expire within this time (e.g. 5s, 500ms; expired ones included)')
    .option('--stale', "only leases whose holder's heartbeat is gone (dead or restarted) while Redis still honours them")
    .addOption(new Option('--sort <field>', 'sort by').choices([...LEASE_SORTS]).default('kind'))
    .addOption(limitOption())
    .addHelpText(
      'after',
      examples(
        'botmesh-coord --prefix shop leases ls',
        'botmesh-coord --prefix shop leases ls --kind provider,lock --sort expires',
        'botmesh-coord --prefix shop leases ls --replica pod-a --expiring 5s --json',
        'botmesh-coord --prefix shop leases ls --stale',
      ),
    )
    .action(
      run(async (ctx, o: LeasesOptions) => {
        const data = await collectLeases(ctx, o)
        if (ctx.json) ctx.out(jsonOut('leases', data))
        else printLeases(ctx, data)
      }),
    )
}
