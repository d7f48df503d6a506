import type { Command } from 'commander'
import type { Context } from '../context.js'
import { leadRows, lockRows, type LeadRow, type LockRow } from '../lib.js'
import { cell, type KindView } from '../output/format.js'
import { agoMs, dur, leftMs, renewedText } from '../output/time.js'
import { progress } from '../output/progress.js'
import { byNumber, byNumberDesc, byText, limitOption, listingCommand, nowAndReplicas, scanInfo } from './common.js'
import { leaderCell } from './providers.js'

interface LocksOptions {
  limit?: number
  held?: boolean
}

type LockOrLead = LockRow | LeadRow
const isLock = (r: LockOrLead): r is LockRow => r.kind === 'lock'

/** Fenced locks, and the leads that are not providers (scheduler:* and other tryLead names). */
export async function collectLocks(ctx: Context, o: LocksOptions) {
  const d = ctx.io.LISTING_DECODERS
  const [{ nowMs, replicas }, { lock: locks, lead: leads }] = await Promise.all([
    nowAndReplicas(ctx),
    ctx.reader.listMany({ lock: d.lock, lead: d.lead }, { limit: o.limit, onProgress: progress(ctx, 'locks') }),
  ])
  let lockList = lockRows(locks.items, replicas.items, nowMs)
  let leadList = leadRows(leads.items, replicas.items, nowMs, ['scheduler', 'lead'])
  if (o.held) {
    lockList = lockList.filter((l) => l.held)
    leadList = leadList.filter((l) => l.replicaId !== null && (l.expiresInMs ?? 0) > 0)
  }
  return { nowMs, locks: lockList, leads: leadList, ...scanInfo(replicas, locks, leads) }
}

function locksView(ctx: Context): KindView<LockOrLead> {
  const { c } = ctx
  return {
    list: 'locks',
    name: (r) => `${isLock(r) ? 'lock' : 'lead'}/${r.key}`,
    empty: `no locks or scheduler leads under prefix ${ctx.keys.prefix}`,
    document: (rows) => ({ locks: rows.filter(isLock), leads: rows.filter((r) => !isLock(r)) }),
    columns: [
      { header: 'KIND', value: (r) => r.kind },
      { header: 'KEY', value: (r) => c.bold(cell(r.key)) },
      {
        header: 'HOLDER',
        value: (r) =>
          isLock(r)
            ? r.held
              ? cell(r.replicaId ?? r.owner)
              : c.dim('(free)')
            : r.replicaId === null
              ? c.dim('(free)')
              : leaderCell(ctx, r),
      },
      {
        header: 'OWNER',
        value: (r) =>
          isLock(r)
            ? r.held
              ? c.dim(cell(r.owner ?? ''))
              : r.releasedAgoMs === null
                ? '-'
                : c.dim(`released ${agoMs(r.releasedAgoMs)}`)
            : c.dim(cell(r.incarnation?.slice(0, 8) ?? '')),
      },
      { header: 'FENCE', value: (r) => r.fence ?? '-' },
      { header: 'EXPIRES IN', value: (r) => (isLock(r) && !r.held ? '-' : leftMs(r.expiresInMs)) },
      { header: 'HELD FOR', value: (r) => (isLock(r) ? (r.held ? dur(r.heldForMs) : '-') : dur(r.leadingForMs)) },
      // A lock records no renewal; a lead's holder renews every leaseMs / 3.
      { header: 'RENEWED', value: (r) => (isLock(r) ? '-' : renewedText(c, r.state, r.lastRenewalAgoMs, r.renewMs)) },
    ],
  }
}

export function locksLs(): Command {
  return listingCommand<LockOrLead, LocksOptions>({
    name: 'ls',
    description: 'fenced locks (owner, fence, time left) and scheduler / single-job leads (tryLead names)',
    examples: ['botmesh-coord --prefix shop locks ls', 'botmesh-coord --prefix shop locks ls --held -o json'],
    view: locksView,
    sorts: {
      kind: (a, b) => Number(!isLock(a)) - Number(!isLock(b)) || byText<LockOrLead>((r) => r.key)(a, b),
      key: byText((r) => r.key),
      holder: byText((r) => r.replicaId),
      fence: byNumber((r) => r.fence),
      expires: byNumber((r) => r.expiresInMs),
      held: byNumberDesc((r) => (isLock(r) ? r.heldForMs : r.leadingForMs)),
    },
    replicasOf: (r) => [r.replicaId],
    options: (cmd) => cmd.option('--held', 'only locks and leads held now').addOption(limitOption()),
    collect: async (ctx, o) => {
      const d = await collectLocks(ctx, o)
      return { nowMs: d.nowMs, rows: [...d.locks, ...d.leads], truncated: d.truncated, corrupt: d.corrupt, extra: { scanned: d.scanned } }
    },
  })
}
