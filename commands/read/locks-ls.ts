import { Command } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import { LISTING_DECODERS, leadRows, lockRows } from '../lib.js'
import { jsonOut } from '../output/json.js'
import { table } from '../output/table.js'
import { agoMs, dur, leftMs } from '../output/time.js'
import { progress } from '../output/progress.js'
import { examples, limitOption, nowAndReplicas, printCorrupt, scanInfo } from './common.js'

/** Fenced locks, and the leads that are not providers (scheduler:* and other tryLead names). */
export async function collectLocks(ctx: Context, o: { limit?: number; held?: boolean }) {
  const [{ nowMs, replicas }, { lock: locks, lead: leads }] = await Promise.all([
    nowAndReplicas(ctx),
    ctx.reader.listMany(
      { lock: LISTING_DECODERS.lock, lead: LISTING_DECODERS.lead },
      { limit: o.limit, onProgress: progress(ctx, 'locks') },
    ),
  ])
  let lockList = lockRows(locks.items, replicas.items, nowMs)
  let leadList = leadRows(leads.items, replicas.items, nowMs, ['scheduler', 'lead'])
  if (o.held) {
    lockList = lockList.filter((l) => l.held)
    leadList = leadList.filter((l) => l.replicaId !== null && (l.expiresInMs ?? 0) > 0)
  }
  return { nowMs, locks: lockList, leads: leadList, ...scanInfo(replicas, locks, leads) }
}

export function locksLs(): Command {
  return new Command('ls')
    .alias('list')
    .description('fenced locks (owner, fence, time left) and scheduler / single-job leads (tryLead names)')
    .option('--held', 'only locks and leads held now')
    .addOption(limitOption())
    .addHelpText('after', examples('botmesh-coord --prefix shop locks ls', 'botmesh-coord --prefix shop locks ls --held --json'))
    .action(
      run(async (ctx, o: { limit?: number; held?: boolean }) => {
        const data = await collectLocks(ctx, o)
        const { c } = ctx
        if (ctx.json) return void ctx.out(jsonOut('locks', data))
        const rows = [
          ...data.locks.map((l) => [
            'lock',
            c.bold(l.key),
            l.held ? (l.replicaId ?? l.owner ?? '-') : c.dim('(free)'),
            l.held ? c.dim(l.owner ?? '') : l.releasedAgoMs === null ? '-' : c.dim(`released ${agoMs(l.releasedAgoMs)}`),
            l.fence ?? '-',
            l.held ? leftMs(l.expiresInMs) : '-',
            l.held ? dur(l.heldForMs) : '-',
          ]),
          ...data.leads.map((l) => [
            l.kind,
            c.bold(l.key),
            l.replicaId === null ? c.dim('(free)') : l.holderAlive ? l.replicaId : c.red(`${l.replicaId} (dead)`),
            c.dim(l.incarnation?.slice(0, 8) ?? ''),
            l.fence ?? '-',
            leftMs(l.expiresInMs),
            dur(l.leadingForMs),
          ]),
        ]
        if (rows.length === 0) ctx.out(c.dim(`no locks or scheduler leads under prefix ${ctx.keys.prefix}`))
        else
          ctx.out(
            table(
              ['KIND', 'KEY', 'HOLDER', 'OWNER', 'FENCE', 'EXPIRES IN', 'HELD FOR'].map((h) => c.dim(h)),
              rows,
            ),
          )
        printCorrupt(ctx, data.corrupt)
      }),
    )
}
