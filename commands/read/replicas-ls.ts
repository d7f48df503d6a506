import type { Command } from 'commander'
import type { Context } from '../context.js'
import { decodeReplica, formatDuration, replicaReferences, replicaRows, type RedisKey, type ReplicaRow } from '../lib.js'
import { cell, type KindView } from '../output/format.js'
import { renewedText } from '../output/time.js'
import { progress } from '../output/progress.js'
import { byNumber, byNumberDesc, byText, limitOption, listingCommand, scanInfo, type ListingFlags } from './common.js'

interface ReplicasOptions {
  all?: boolean
}

/**
 * Collect: the heartbeat records (decoded by the library, times against Redis's clock); with --all
 * in the same pass also the eviction tombstones and every incarnation the chats and leads still name.
 */
export async function collectReplicas(ctx: Context, o: ReplicasOptions & Partial<ListingFlags>) {
  const nowMs = await ctx.reader.now()
  if (!o.all) {
    const listing = await ctx.reader.replicas({ limit: o.limit, onProgress: progress(ctx, 'replicas') })
    return { nowMs, rows: replicaRows(listing.items, nowMs), ...scanInfo(listing) }
  }
  const tombstones: Array<{ replicaId: string; incarnation: string }> = []
  const found = await ctx.reader.listMany(
    {
      replica: (id: string, raw: RedisKey, h: Record<string, string>) => {
        if (h.beat !== undefined) return decodeReplica(id, raw, h)
        if (h.ev) tombstones.push({ replicaId: h.id ?? id, incarnation: h.ev })
        return null
      },
      chat: ctx.io.LISTING_DECODERS.chat,
      lead: ctx.io.LISTING_DECODERS.lead,
    },
    { limit: o.limit, onProgress: progress(ctx, 'replicas, chats and leads') },
  )
  const references = replicaReferences(found.chat.items, found.lead.items)
  return {
    nowMs,
    rows: replicaRows(found.replica.items, nowMs, { tombstones, references }),
    ...scanInfo(found.replica, found.chat, found.lead),
  }
}

function replicasView(ctx: Context): KindView<ReplicaRow> {
  const { c } = ctx
  return {
    list: 'replicas',
    name: (r) => `replica/${r.replicaId}`,
    empty: `no live replicas under prefix ${ctx.keys.prefix}`,
    columns: [
      { header: 'REPLICA', value: (r) => c.bold(cell(r.replicaId)) },
      { header: 'INCARNATION', value: (r) => cell(r.incarnation.slice(0, 8)) },
      {
        header: 'STATE',
        value: (r) => (r.state === 'ok' ? c.green('ok') : r.state === 'late' || r.state === 'gone' ? c.yellow(r.state) : c.red(r.state)),
      },
      { header: 'HEARTBEAT', value: (r) => renewedText(c, r.state, r.heartbeatAgeMs, r.renewMs) },
      { header: 'LEASES', value: (r) => r.leasesHeld },
      { header: 'TURNS', value: (r) => r.turnsGranted ?? '-' },
      { header: 'WAITING', value: (r) => r.waitingNow ?? '-' },
      { header: 'OLDEST', value: (r) => (r.oldestWaitMs === null ? '-' : formatDuration(r.oldestWaitMs)) },
      { header: 'WAIT P99', value: (r) => (r.waitP99Ms === null ? '-' : formatDuration(r.waitP99Ms)) },
      { header: 'LOST', value: (r) => (r.leasesLost ? c.red(String(r.leasesLost)) : (r.leasesLost ?? '-')) },
      { header: 'HOST', value: (r) => cell(r.host) },
      { header: 'PID', value: (r) => r.pid ?? '-' },
      { header: 'VERSION', value: (r) => cell(r.version) },
      { header: 'SHED', value: (r) => (r.turnsShed ? c.red(String(r.turnsShed)) : (r.turnsShed ?? '-')), wide: true },
      { header: 'LEASE', value: (r) => (r.leaseMs === null ? '-' : formatDuration(r.leaseMs)), wide: true },
      { header: 'CLOCK SKEW', value: (r) => (r.clockSkewMs === null ? '-' : formatDuration(r.clockSkewMs)), wide: true },
    ],
  }
}

export function replicasLs(): Command {
  return listingCommand<ReplicaRow, ReplicasOptions>({
    name: 'ls',
    description:
      'every replica with a heartbeat record: id, incarnation, state (ok, late, gone: no heartbeat lately, kept 5 min), heartbeat age, leases held, counters (turns granted, messages waiting and the oldest wait, as of its last beat; -o wide: messages shed as overloaded), host/pid/version; --all adds evicted and restarted ones',
    examples: [
      'botmesh-coord --prefix shop replicas ls',
      'botmesh-coord --prefix shop replicas ls --all --sort heartbeat',
      'botmesh-coord --prefix shop replicas ls --sort oldest -o wide',
      'botmesh-coord --prefix shop replicas ls -o json',
    ],
    view: replicasView,
    sorts: {
      replica: byText((r) => r.replicaId),
      state: byText((r) => r.state),
      heartbeat: byNumberDesc((r) => r.heartbeatAgeMs),
      leases: byNumberDesc((r) => r.leasesHeld),
      turns: byNumberDesc((r) => r.turnsGranted),
      waiting: byNumberDesc((r) => r.waitingNow),
      oldest: byNumberDesc((r) => r.oldestWaitMs),
      shed: byNumberDesc((r) => r.turnsShed),
      lost: byNumberDesc((r) => r.leasesLost),
      started: byNumber((r) => r.startedAt),
    },
    replicasOf: (r) => [r.replicaId],
    oneSlotKind: (o) => (o.all ? null : 'replica'),
    options: (cmd) =>
      cmd
        .option(
          '--all',
          'also evicted replicas, and incarnations without a heartbeat record that still hold leases or tickets (gone, stale)',
        )
        .addOption(limitOption()),
    collect: async (ctx, o) => {
      const d = await collectReplicas(ctx, o)
      return { nowMs: d.nowMs, rows: d.rows, truncated: d.truncated, corrupt: d.corrupt, extra: { scanned: d.scanned } }
    },
  })
}
