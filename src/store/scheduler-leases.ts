/**
 * `store.leases()`: a lease backend for a scheduler (the botmesh guide's `scheduler.lease`), on the
 * same fenced leads as `coordinator.tryLead()` — one Lua script per call, lease time from Redis's
 * clock, a fence that grows on every acquisition. A scheduler renews the lease itself (every ttl / 3
 * is a good pace) and passes the fence on with whatever its job writes.
 *
 * Its leases are held under the store's coordinator (`store.coordinator()`): its replicaId and
 * incarnation, so operators see a live replica with a heartbeat as the holder, and a dead replica's
 * lease is known dead by its missing heartbeat like its turns and leads. An acquire starts that
 * coordinator when it has not started yet (as `tryLead` does).
 */
import type { Coordinator } from '../coordinator/coordinator.js'
import type { KeyLayout } from '../keys.js'
import { validateId } from '../keys.js'
import type { ScriptRunner } from '../scripts/runner.js'
import { LEAD_ACQUIRE, LEAD_RELEASE, LEASE_RENEW } from '../scripts/registry.js'
import type { LeadReply } from '../wire/types.js'
import { parseDuration, type Duration } from '../duration.js'
import { ConfigurationError } from '../errors/configuration-error.js'

/** A scheduler's lease: its name and the fence it was granted with. */
export interface SchedulerLease {
  name: string
  fence: number
}

/** What `store.leases()` gives, on Redis and on the memory hub. */
export interface SchedulerLeaseBackend {
  /** The holder's identity: the store's coordinator's. */
  readonly replicaId: string
  readonly incarnation: string
  /** Take the lease for ttlMs if nobody holds it: `{ name, fence }`, or null while it is held (by anyone). */
  acquire(name: string, ttlMs: Duration): Promise<SchedulerLease | null>
  /** Extend the lease held with `fence` to ttlMs from now; false once it is not (expired, taken, revoked, its coordinator stopped). */
  renew(name: string, fence: number, ttlMs: Duration): Promise<boolean>
  /** Give the lease held with `fence` back (standing replicas are woken); false when it was not held with it. */
  release(name: string, fence: number): Promise<boolean>
}

/** The identity logic of both backends; the calls on the shared state are each store's. */
export abstract class LeaseBackendBase implements SchedulerLeaseBackend {
  /** The incarnation each grant was made under (name → fence → incarnation; a grant given back or lost stays: harmless). */
  private readonly grants = new Map<string, { fence: number; incarnation: string }>()

  /** The coordinator an acquire started (the store stops it when it closes). */
  #started: Coordinator | null = null

  /** @internal `owner`: the store's coordinator (`store.coordinator()`). */
  constructor(private readonly owner: () => Coordinator) {}

  get replicaId(): string {
    return this.owner().replicaId
  }

  get incarnation(): string {
    return this.owner().incarnation
  }

  protected abstract leadAcquire(name: string, replicaId: string, incarnation: string, ttlMs: number): Promise<LeadReply>
  protected abstract leadRenew(name: string, incarnation: string, fence: number, ttlMs: number): Promise<boolean>
  protected abstract leadRelease(name: string, incarnation: string, fence: number): Promise<boolean>

  async acquire(name: string, ttlMs: Duration): Promise<SchedulerLease | null> {
    validateId(name, 'lease name')
    const ms = ttl(ttlMs)
    const c = this.owner()
    if (!c.running) {
      // The holder is a live replica: its heartbeat runs before it holds anything.
      this.#started = c
      await c.start()
    }
    const r = await this.leadAcquire(name, c.replicaId, c.incarnation, ms)
    // Ours in Redis, at a fence nobody here was told about: a grant whose reply was lost (the
    // connection dropped and the client sent the acquire again, or the call timed out after Redis ran
    // it) — taken up; the script renewed it to ttlMs from now. One this backend or the coordinator's
    // own tryLead/campaign knows is held already.
    const fresh = r.status === 'granted' || (r.status === 'mine' && c.leaseAdoptable(name, r.fence))
    if (!fresh) return null
    c.noteSchedulerLease(name, r.fence)
    this.grants.set(name, { fence: r.fence, incarnation: c.incarnation })
    return { name, fence: r.fence }
  }

  /** @internal `store.close()`: stop the coordinator an acquire started (it gives back what it holds). */
  async stopStarted(): Promise<void> {
    const c = this.#started
    this.#started = null
    await c?.stop()
  }

  async renew(name: string, fence: number, ttlMs: Duration): Promise<boolean> {
    validateId(name, 'lease name')
    const ms = ttl(ttlMs)
    // Held under a coordinator that stopped (or another one): that replica is gone, and so is its lease.
    const c = this.owner()
    if (!c.running || this.heldUnder(name, fence) !== c.incarnation) return false
    return this.leadRenew(name, c.incarnation, fence, ms)
  }

  async release(name: string, fence: number): Promise<boolean> {
    validateId(name, 'lease name')
    return this.leadRelease(name, this.heldUnder(name, fence), fence)
  }

  /** The incarnation the grant of `name` at `fence` was made under (else the coordinator's: it finds nothing of its own). */
  private heldUnder(name: string, fence: number): string {
    const g = this.grants.get(name)
    return g && g.fence === fence ? g.incarnation : this.owner().incarnation
  }
}

/** `RedisStore.leases()`: on Redis's leads. */
export class SchedulerLeases extends LeaseBackendBase {
  /** @internal Made by `store.leases()`. */
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly keys: KeyLayout,
    private readonly idleTtlMs: number,
    owner: () => Coordinator,
  ) {
    super(owner)
  }

  protected leadAcquire(name: string, replicaId: string, incarnation: string, ttlMs: number): Promise<LeadReply> {
    return this.scripts.call(
      LEAD_ACQUIRE,
      { lead: this.keys.lead(name) },
      { replicaId, incarnation, leaseMs: ttlMs, idleTtlMs: this.idleTtlMs, stand: false },
    )
  }

  protected async leadRenew(name: string, incarnation: string, fence: number, ttlMs: number): Promise<boolean> {
    const r = await this.scripts.call(
      LEASE_RENEW,
      { lease: this.keys.lead(name) },
      { incarnation, fence, leaseMs: ttlMs, idleTtlMs: this.idleTtlMs },
    )
    return r.ok
  }

  protected leadRelease(name: string, incarnation: string, fence: number): Promise<boolean> {
    return this.scripts.call(
      LEAD_RELEASE,
      { lead: this.keys.lead(name) },
      { incarnation, fence, leaseMs: 0, idleTtlMs: this.idleTtlMs, wakeChannelPrefix: this.keys.wakeChannelPrefix },
    )
  }
}

function ttl(v: Duration): number {
  const ms = parseDuration(v, 'ttlMs')
  if (ms < 1) throw new ConfigurationError('ttlMs must be at least 1 ms')
  return ms
}
