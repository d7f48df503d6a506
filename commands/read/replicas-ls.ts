import { Command } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import { formatDuration, type ReplicaSnapshot } from '../lib.js'
import { jsonOut } from '../output/json.js'
import { table } from '../output/table.js'
import { ago } from '../output/time.js'
import { progress } from '../output/progress.js'

export interface ReplicaRow {
  replicaId: string
  incarnation: string
  heartbeatAgeMs: number
  expiresInMs: number
  host: string
  pid: number
  version: string
  startedAt: number
  leaseMs: number
  leasesHeld: number
  turnsHeld: number
  leadsHeld: number
  turnsGranted: number
  waitingNow: number
  waitP99Ms: number | null
  leasesLost: number
  clockSkewMs: number | null
}

/** Collect: live replicas, decoded by the library, times against Redis's clock. */
export async function collectReplicas(
  ctx: Context,
): Promise<{ nowMs: number; replicas: ReplicaRow[]; corrupt: Array<{ rawKey: string; error: string }> }> {
  const nowMs = await ctx.reader.now()
  const listing = await ctx.reader.replicas({ onProgress: progress(ctx, 'replicas') })
  const replicas = listing.items.map((r: ReplicaSnapshot) => ({
    replicaId: r.replicaId,
    incarnation: r.incarnation,
    heartbeatAgeMs: nowMs - r.beatAtMs,
    expiresInMs: r.expiresAtMs - nowMs,
    host: r.info.host,
    pid: r.info.pid,
    version: r.info.version,
    startedAt: r.info.startedAt,
    leaseMs: r.info.leaseMs,
    leasesHeld: r.stats.turnsHeld + r.stats.leadsHeld,
    turnsHeld: r.stats.turnsHeld,
    leadsHeld: r.stats.leadsHeld,
    turnsGranted: r.stats.turnsGranted,
    waitingNow: r.stats.waitingNow,
    waitP99Ms: r.stats.waitP99Ms,
    leasesLost: r.stats.leasesLost,
    clockSkewMs: r.clockSkewMs,
  }))
  replicas.sort((a, b) => a.replicaId.localeCompare(b.replicaId))
  return { nowMs, replicas, corrupt: listing.corrupt }
}

export function printReplicas(ctx: Context, data: Awaited<ReturnType<typeof collectReplicas>>): void {
  const { c } = ctx
  if (data.replicas.length === 0) {
    ctx.out(c.dim(`no live replicas under prefix ${ctx.keys.prefix}`))
  } else {
    ctx.out(
      table(
        ['REPLICA', 'INCARNATION', 'HEARTBEAT', 'LEASES', 'TURNS', 'WAITING', 'WAIT P99', 'LOST', 'HOST', 'PID', 'VERSION'].map((h) =>
          c.dim(h),
        ),
        data.replicas.map((r) => [
          c.bold(r.replicaId),
          r.incarnation.slice(0, 8),
          r.heartbeatAgeMs > r.leaseMs / 2
            ? c.yellow(ago(data.nowMs - r.heartbeatAgeMs, data.nowMs))
            : ago(data.nowMs - r.heartbeatAgeMs, data.nowMs),
          r.leasesHeld,
          r.turnsGranted,
          r.waitingNow,
          r.waitP99Ms === null ? '-' : formatDuration(r.waitP99Ms),
          r.leasesLost ? c.red(String(r.leasesLost)) : '0',
          r.host,
          r.pid,
          r.version,
        ]),
      ),
    )
  }
  for (const k of data.corrupt) ctx.err(c.red(`corrupt: ${k.rawKey}: ${k.error}`))
}

export function replicasLs(): Command {
  return new Command('ls')
    .alias('list')
    .description('every live replica: id, incarnation, heartbeat age, leases held, counters, host/pid/version')
    .addHelpText('after', '\nExample:\n  botmesh-coord --prefix shop replicas ls --json')
    .action(
      run(async (ctx) => {
        const data = await collectReplicas(ctx)
        if (ctx.json) ctx.out(jsonOut('replicas', { nowMs: data.nowMs, replicas: data.replicas, corrupt: data.corrupt }))
        else printReplicas(ctx, data)
      }),
    )
}
