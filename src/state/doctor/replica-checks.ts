/** The checks of the replicas: who is alive, their clocks, their queued tickets. */
import { formatDuration as dur } from '../../duration.js'
import type { ReplicaSnapshot } from '../decode.js'
import { replicaHealth } from '../health.js'
import type { DoctorCheck, DoctorState, DoctorFinding } from './types.js'

/** A replica's clock this far from Redis's is worth a look (beat - cw also holds one-way latency). */
export const SKEW_WARN_MS = 1000

/** Without the heartbeats, who is alive is not known: the checks that judge holders would judge every one dead. */
export function heartbeatsUnknown(s: DoctorState, id: string): DoctorFinding[] | null {
  return s.heartbeatsUnread.length
    ? [{ id, status: 'skip', detail: 'cannot know: the heartbeats were not read', fix: 'see the replicas check' }]
    : null
}

/** The replicas whose heartbeat has not expired. */
export const liveReplicas = (s: DoctorState): ReplicaSnapshot[] => s.replicas.filter((r) => r.expiresAtMs > s.nowMs)

/** A holder as liveness tells them apart: its replica id and incarnation. */
export const beatOf = (h: { replicaId: string | null; incarnation: string | null }): string => `${h.replicaId}\n${h.incarnation}`

/** Of the heartbeat records read, those that beat (not expired) but are not among the index's (DoctorState.unindexed). */
export function unindexedReplicas(records: ReplicaSnapshot[], indexed: ReplicaSnapshot[], nowMs: number): ReplicaSnapshot[] {
  const listed = new Set(indexed.map(beatOf))
  return records.filter((r) => r.expiresAtMs > nowMs && !listed.has(beatOf(r)))
}

function liveReplicaFinding(live: ReplicaSnapshot[]): DoctorFinding {
  if (live.length === 0)
    return { id: 'replicas', status: 'warn', detail: 'no live replica under this prefix', fix: 'check --prefix, or whether the bot runs' }
  const leaseMs = new Set(live.map((r) => r.info.leaseMs))
  const versions = new Set(live.map((r) => r.info.version))
  if (leaseMs.size > 1) {
    return {
      id: 'replicas',
      status: 'warn',
      detail: `replicas run with different leaseMs (${[...leaseMs].map((m) => dur(m)).join(', ')}): failover times and ticket deadlines differ per replica`,
      fix: 'give every replica the same leaseMs',
    }
  }
  return {
    id: 'replicas',
    status: 'ok',
    detail: `${live.length} live replica(s), leaseMs ${dur([...leaseMs][0]!)}, version${versions.size > 1 ? 's' : ''} ${[...versions].join(', ')}`,
  }
}

/** Replicas whose heartbeat expired within the last GONE_KEEP_MS: frozen, cut off or killed. */
function goneNote(gone: ReplicaSnapshot[], nowMs: number): string {
  const one = (r: ReplicaSnapshot) => {
    const held = r.leases.held.length
      ? `, held ${r.leases.held.map((h) => `${h.kind} ${h.key}`).join(', ')}${r.leases.more ? ` and ${r.leases.more} more` : ''}`
      : ''
    return `${r.replicaId} (no heartbeat for ${dur(nowMs - r.beatAtMs)}${held})`
  }
  return `${gone.length} replica(s) gone without an orderly stop: ${gone.slice(0, 3).map(one).join(', ')}${gone.length > 3 ? ', …' : ''}`
}

/** Live records the replica index does not list: who the views judge without heartbeat though they beat. */
function unindexedNote(unindexed: ReplicaSnapshot[], index: string): string {
  const names = unindexed.slice(0, 3).map((r) => `${r.replicaId} (${r.incarnation.slice(0, 8)})`)
  return `${unindexed.length} replica(s) beat but the replica index ${index} does not list them: ${names.join(', ')}${unindexed.length > 3 ? ', …' : ''}; every view, the lease checks below too, reads their leases as held without heartbeat until a beat lists them again`
}

function replicaFinding(s: DoctorState, live: ReplicaSnapshot[], gone: ReplicaSnapshot[]): DoctorFinding {
  const base = liveReplicaFinding(live)
  // Gone and unlisted replicas are warnings of their own, added to what the live ones say (none, mixed leaseMs, ok).
  const notes: string[] = []
  const fixes: string[] = base.fix ? [base.fix] : []
  if (gone.length) {
    notes.push(`${goneNote(gone, s.nowMs)}: frozen, cut off or killed (their leases expire or are taken over)`)
    fixes.push(
      'botmesh-coord replicas ls; look at those pods (a frozen one beats again when it wakes; a killed one is restarted by its supervisor)',
    )
  }
  if (s.unindexed.length) {
    notes.push(unindexedNote(s.unindexed, s.replicaIndexKey))
    fixes.push(
      `each beat lists its replica again (within its renewal interval); if they stay unlisted, find what deletes ${s.replicaIndexKey} (an eviction policy, a script, a hand-run DEL)`,
    )
  }
  if (!notes.length) return base
  return {
    id: 'replicas',
    status: base.status === 'fail' ? 'fail' : 'warn',
    detail: `${base.detail}; ${notes.join('; ')}`,
    fix: fixes.join('; '),
  }
}

const replicas: DoctorCheck = {
  id: 'replicas',
  title: 'live replicas, alike, none gone without a stop',
  run(s) {
    const unread = s.heartbeatsUnread[0]
    if (unread)
      return [
        {
          id: 'replicas',
          status: 'fail',
          detail: `cannot know the live replicas: master ${unread.node} (slots ${unread.slots}), which holds every heartbeat under prefix ${s.prefix}, did not answer`,
          fix: 'see the cluster check',
        },
      ]
    const gone = s.replicas.filter((r) => replicaHealth(r, s.nowMs).state === 'gone')
    return [replicaFinding(s, liveReplicas(s), gone)]
  },
}

const clockSkew: DoctorCheck = {
  id: 'clock-skew',
  title: "replicas' clocks near Redis's",
  run(s) {
    const unknown = heartbeatsUnknown(s, 'clock-skew')
    if (unknown) return unknown
    const live = liveReplicas(s)
    const skewed = live.filter((r) => r.clockSkewMs !== null && Math.abs(r.clockSkewMs) > SKEW_WARN_MS)
    if (!skewed.length)
      return [
        {
          id: 'clock-skew',
          status: 'ok',
          detail: live.length ? `every replica's clock within ${dur(SKEW_WARN_MS)} of Redis's` : 'no live replica to compare',
        },
      ]
    return [
      {
        id: 'clock-skew',
        status: 'warn',
        detail: `clocks off Redis's by more than ${dur(SKEW_WARN_MS)}: ${skewed.map((r) => `${r.replicaId} ${r.clockSkewMs! > 0 ? 'behind' : 'ahead'} ${dur(Math.abs(r.clockSkewMs!))}`).join(', ')}. Leases use Redis's clock, but logs, events and timestamps from that host will not line up`,
        fix: 'run NTP (chrony/systemd-timesyncd) on those hosts; a large value can also be heartbeat latency',
      },
    ]
  },
}

const staleTickets: DoctorCheck = {
  id: 'stale-tickets',
  title: 'no queued ticket of a dead replica',
  run(s) {
    const unknown = heartbeatsUnknown(s, 'stale-tickets')
    if (unknown) return unknown
    const { stale, longQueues, headRead, notRead } = s.chats
    // A listing reads the head of each queue: in a longer one, the tickets behind it are not judged.
    const tail = longQueues
      ? ` (only the first ${headRead} tickets of each queue are read: ${longQueues} longer queue(s) have ${notRead} more, not judged; chat inspect <key> --tickets <n> shows them)`
      : ''
    if (!stale.count) return [{ id: 'stale-tickets', status: 'ok', detail: `no stale tickets${tail}` }]
    return [
      {
        id: 'stale-tickets',
        status: 'warn',
        detail: `${stale.count} queued ticket(s) of replicas that died, restarted or stopped polling: ${stale.items
          .map((t) => `${t.key}#${t.ticket} (${t.replicaId}, ${t.state})`)
          .join(', ')}${stale.count > 3 ? ', …' : ''}; they are skipped when they reach the head${tail}`,
        fix: 'botmesh-coord chat ls --waiting; botmesh-coord chat inspect <key> --explain',
      },
    ]
  },
}

export const REPLICA_CHECKS: DoctorCheck[] = [replicas, clockSkew, staleTickets]
