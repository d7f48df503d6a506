/**
 * `store.leases()`: a lease backend for a scheduler (the botmesh guide's `scheduler.lease`), on the
 * same fenced leads as `coordinator.tryLead()` — one Lua script per call, lease time from Redis's
 * clock, a fence that grows on every acquisition. A scheduler renews the lease itself (every ttl / 3
 * is a good pace) and passes the fence on with whatever its job writes.
 */
import { randomBytes } from 'node:crypto'
import type { KeyLayout } from '../keys.js'
import { validateId } from '../keys.js'
import type { ScriptRunner } from '../scripts/runner.js'
import { LEAD_ACQUIRE, LEAD_RELEASE, LEASE_RENEW } from '../scripts/registry.js'
import { parseDuration, type Duration } from '../duration.js'
import { ConfigurationError } from '../errors/configuration-error.js'

/** A scheduler's lease: its name and the fence it was granted with. */
export interface SchedulerLease {
  name: string
  fence: number
}

export class SchedulerLeases {
  /** Who holds what this backend acquires, as operators see it (`leases ls`). */
  readonly replicaId: string
  /** This backend's own nonce: only it can renew or release what it acquired. */
  readonly incarnation = randomBytes(8).toString('hex')
  /** The fence of each grant this backend answered with (a lease given back or lost stays listed: harmless). */
  private readonly granted = new Map<string, number>()

  /** @internal Made by `store.leases()`. */
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly keys: KeyLayout,
    private readonly idleTtlMs: number,
    replicaId: string,
  ) {
    this.replicaId = validateId(replicaId, 'replicaId')
  }

  /** Take the lease for ttlMs if nobody holds it: `{ name, fence }`, or null while it is held (by anyone). */
  async acquire(name: string, ttlMs: Duration): Promise<SchedulerLease | null> {
    const r = await this.scripts.call(
      LEAD_ACQUIRE,
      { lead: this.keys.lead(validateId(name, 'lease name')) },
      { replicaId: this.replicaId, incarnation: this.incarnation, leaseMs: ttl(ttlMs), idleTtlMs: this.idleTtlMs, stand: false },
    )
    if (r.status === 'granted') {
      this.granted.set(name, r.fence)
      return { name, fence: r.fence }
    }
    // Ours in Redis, at a fence this backend was never told about: a grant whose reply was lost (the
    // connection dropped and the client sent the acquire again, or the call timed out after Redis ran
    // it) — taken up; the script renewed it to ttlMs from now. One it was told about is held already.
    if (r.status === 'mine' && this.granted.get(name) !== r.fence) {
      this.granted.set(name, r.fence)
      return { name, fence: r.fence }
    }
    return null
  }

  /** Extend the lease held with `fence` to ttlMs from now; false once it is not (expired, taken, revoked). */
  async renew(name: string, fence: number, ttlMs: Duration): Promise<boolean> {
    const r = await this.scripts.call(
      LEASE_RENEW,
      { lease: this.keys.lead(validateId(name, 'lease name')) },
      { incarnation: this.incarnation, fence, leaseMs: ttl(ttlMs), idleTtlMs: this.idleTtlMs },
    )
    return r.ok
  }

  /** Give the lease held with `fence` back (standing replicas are woken); false when it was not held with it. */
  async release(name: string, fence: number): Promise<boolean> {
    return this.scripts.call(
      LEAD_RELEASE,
      { lead: this.keys.lead(validateId(name, 'lease name')) },
      { incarnation: this.incarnation, fence, leaseMs: 0, idleTtlMs: this.idleTtlMs, wakeChannelPrefix: this.keys.wakeChannelPrefix },
    )
  }
}

function ttl(v: Duration): number {
  const ms = parseDuration(v, 'ttlMs')
  if (ms < 1) throw new ConfigurationError('ttlMs must be at least 1 ms')
  return ms
}
