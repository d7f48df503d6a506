/** The checks of the leases: renewed on time, not past their expiry, held by a replica that beats, transports up. */
import { formatDuration as dur } from '../../duration.js'
import { pinnedRevoke, replicaHealth, shellWord, transportDownText } from '../health.js'
import { leadRows, type LeaseRow } from '../views.js'
import { beatOf, heartbeatsUnknown, liveReplicas } from './replica-checks.js'
import type { DoctorCheck } from './types.js'

const lateRenewals: DoctorCheck = {
  id: 'late-renewals',
  title: 'heartbeats and leases renewed on time',
  run(s) {
    const unknown = heartbeatsUnknown(s, 'late-renewals')
    if (unknown) return unknown
    const lateBeats = liveReplicas(s)
      .map((r) => replicaHealth(r, s.nowMs))
      .filter((h) => h.state === 'late')
    const late = s.leases.late
    const count = lateBeats.length + late.count
    if (!count) return [{ id: 'late-renewals', status: 'ok', detail: 'every heartbeat and lease renewed on time' }]
    const first = [...lateBeats.map((h) => h.reason), ...late.items.map((l) => `${l.kind} ${l.key}: ${l.reason}`)].slice(0, 3)
    return [
      {
        id: 'late-renewals',
        status: 'warn',
        detail: `${count} heartbeat(s) or lease(s) not renewed on time: ${first.join('; ')}${count > 3 ? '; …' : ''}`,
        fix: 'look at those replicas (event loop, GC pauses, network to Redis); botmesh-coord leases ls --sort renewal',
      },
    ]
  },
}

/** An expired lease is not held, whatever its record still names: nothing to release, but its holder stopped renewing. */
const expiredLeases: DoctorCheck = {
  id: 'expired-leases',
  title: 'no lease past its expiry',
  run(s) {
    const unknown = heartbeatsUnknown(s, 'expired-leases')
    if (unknown) return unknown
    const expired = s.leases.expired
    if (!expired.count) return [{ id: 'expired-leases', status: 'ok', detail: 'no lease past its expiry' }]
    return [
      {
        id: 'expired-leases',
        status: 'warn',
        detail: `${expired.count} lease(s) past their expiry, not held: ${expired.items
          .map((l) => `${l.kind} ${l.key} (${l.reason.replace(/^not held: /, '')})`)
          .join('; ')}${expired.count > 3 ? '; …' : ''}`,
        fix: "their holder stopped renewing (frozen or gone: botmesh-coord replicas ls --all); a chat's next waiter or message takes its turn, a lead's next candidate takes it",
      },
    ]
  },
}

const zombieLeases: DoctorCheck = {
  id: 'zombie-leases',
  title: 'every lease holder beats',
  run(s) {
    const unknown = heartbeatsUnknown(s, 'zombie-leases')
    if (unknown) return unknown
    const { count, items } = s.leases.zombies
    if (!count) return [{ id: 'zombie-leases', status: 'ok', detail: 'every lease holder beats' }]
    // A holder whose record beats but the replica index does not list (see the replicas check) is not dead.
    const unlisted = new Set(s.unindexed.map(beatOf))
    const beats = (z: LeaseRow) => z.replicaId !== null && unlisted.has(beatOf(z)) // a lock's row names no replica
    const first = items[0]!
    const evict =
      first.replicaId && first.incarnation && !beats(first)
        ? `; or evict the replica: botmesh-coord replica evict ${shellWord(first.replicaId)} --if-incarnation ${first.incarnation}`
        : ''
    const listed = (z: LeaseRow) =>
      `${z.kind} ${z.key} (${z.replicaId}, ${dur(z.expiresInMs)} left${beats(z) ? ', its record beats: not in the replica index' : ''})`
    return [
      {
        id: 'zombie-leases',
        status: 'warn',
        detail: `${count} lease(s) held by a replica without heartbeat, not yet expired: ${items.map(listed).join(', ')}`,
        fix: `they expire by themselves; to act now, pinned to what doctor saw: ${items.map((z) => pinnedRevoke(z.kind, z.key, z.fence)).join('; ')}${evict}`,
      },
    ]
  },
}

/**
 * A leader that renews but recorded its transport closed: nothing is sent on that provider until it
 * comes back or the leader yields (providerDownMs after it went down).
 */
const transports: DoctorCheck = {
  id: 'transports',
  title: "leaders' transports up",
  run(s) {
    const downs = leadRows(s.leads, s.replicas, s.nowMs).filter((l) => l.transportDown !== null)
    if (!downs.length) return [{ id: 'transports', status: 'ok', detail: 'every leader reports its transport up' }]
    const first = downs.slice(0, 3)
    return [
      {
        id: 'transports',
        status: 'warn',
        detail: `${downs.length} leader(s) report their transport down: ${first
          .map(
            (l) =>
              `${l.key} (${l.replicaId}: ${transportDownText(l.transportDown!)}, ${l.transportDown!.yieldsInMs > 0 ? `yields in ${dur(l.transportDown!.yieldsInMs)}` : 'yielding now'})`,
          )
          .join(', ')}${downs.length > 3 ? ', …' : ''}; nothing is sent or received on them meanwhile`,
        fix: `look at that replica's transport (session, network to the provider); to hand it over now: ${first
          .map((l) => `botmesh-coord provider yield ${shellWord(l.key)}${l.fence !== null ? ` --if-fence ${l.fence}` : ''} --wait`)
          .join('; ')}`,
      },
    ]
  },
}

export const LEASE_CHECKS: DoctorCheck[] = [lateRenewals, expiredLeases, zombieLeases, transports]
