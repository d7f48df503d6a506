/**
 * The renewal cycle: every leaseMs / 3 one heartbeat and one renewal of every held lease (one round
 * trip per Redis node), then the server's identity. A lease is extended only when the renewal was
 * made by the server we knew; a new server (restart, failover) fails everything closed.
 */
import { monotonicNow, sleep } from '../clock.js'
import type { BeatRecord, BeatReply, RenewReply } from '../wire/types.js'
import { leaseDeadline, type CoordinatorContext } from './context.js'
import type { HeldLease, LeaseTable } from './lease-table.js'

export interface RenewerHooks {
  /** The heartbeat record to write now. */
  record(): BeatRecord
  /** An operator evicted this incarnation (`replica evict`): its beats are refused from now on. */
  onEvicted(): void
}

export class Renewer {
  private renewing = false
  private warnedDuplicate = false
  /** The server identity (run_ids) seen at start and at each renewal. */
  private serverId: string | null = null

  constructor(
    private readonly core: CoordinatorContext,
    private readonly leases: LeaseTable,
    private readonly hooks: RenewerHooks,
  ) {}

  /** The first beat, and the server identity every later renewal is compared with. */
  async begin(): Promise<void> {
    const { backend, replicaId, incarnation, leaseMs } = this.core
    const [beat, id] = await Promise.all([backend.beat(replicaId, incarnation, leaseMs, this.hooks.record()), backend.serverIdentity()])
    this.serverId = id
    this.checkBeat(beat)
  }

  /** Heartbeat + renewal of every held lease, every leaseMs / 3, in one round trip per Redis node. */
  async cycle(): Promise<void> {
    if (this.renewing || this.core.state !== 'running') return
    this.renewing = true
    const { backend, replicaId, incarnation, leaseMs } = this.core
    try {
      const sentAt = monotonicNow()
      const leases = this.leases.all()
      const [beat, replies] = await Promise.all([
        backend.beat(replicaId, incarnation, leaseMs, this.hooks.record()).catch((e: unknown) => e as Error),
        leases.length
          ? backend.renew(
              leases.map((l) => ({ kind: l.kind, key: l.key, fence: l.fence })),
              incarnation,
              leaseMs,
            )
          : Promise.resolve([] as Array<RenewReply | Error>),
      ])
      if (!(beat instanceof Error)) this.core.emit('coordination:renewed', { roundTripMs: monotonicNow() - sentAt, leases: leases.length })
      // Which server answered: asked AFTER the renewals, so a renewal that reached a restarted or
      // failed-over server (the client re-sends commands after a reconnect) is never trusted
      // unless the server is still the one we knew. Unknown (INFO failed) means: extend nothing.
      const id = await backend.serverIdentity(leaseMs).catch(() => undefined)
      if (id !== undefined && id !== null && this.serverId !== null && id !== this.serverId) {
        // Restarted or failed over: whatever the new server says about our leases, it may have lost
        // writes (a grant, a release). Fail closed: drop every lease; fences keep growing past it.
        this.serverId = id
        for (const lease of this.leases.all()) this.leases.markLost(lease, 'reset')
        this.core.emit('coordination:warning', {
          code: 'server-changed',
          message: 'Redis restarted or failed over: every lease was dropped',
        })
        this.core.logEvent({ type: 'server-changed' })
      } else if (id) {
        this.serverId = id
      }
      if (!(beat instanceof Error)) this.checkBeat(beat)
      const trusted = id !== undefined
      leases.forEach((lease, i) => {
        const r = replies[i]
        if (!trusted && r && !(r instanceof Error) && r.ok) return // cannot tell which server renewed it
        this.applyRenewal(lease, r, sentAt)
      })
      if (this.leases.pending) await this.leases.retryReleases()
    } catch {
      // the watchdog drops what cannot be renewed in time
    } finally {
      this.renewing = false
    }
  }

  /** Renew now (tests, and callers that just woke up and want a fresh deadline). */
  async now(): Promise<void> {
    while (this.renewing) await sleep(1)
    await this.cycle()
  }

  /** Renew one lease now (a push said something changed: a yield request, an operator's revocation). */
  async checkLeaseNow(lease: HeldLease): Promise<void> {
    if (lease.lost || lease.released || this.core.state !== 'running') return
    const { backend, incarnation, leaseMs } = this.core
    const sentAt = monotonicNow()
    const [r] = await backend
      .renew([{ kind: lease.kind, key: lease.key, fence: lease.fence }], incarnation, leaseMs)
      .catch(() => [undefined])
    this.applyRenewal(lease, r, sentAt)
  }

  private applyRenewal(lease: HeldLease, r: RenewReply | Error | undefined, sentAt: number): void {
    if (!r || r instanceof Error || lease.lost || lease.released) return
    if (r.ok) {
      lease.deadline = Math.max(lease.deadline, leaseDeadline(this.core, sentAt))
      if (r.yieldRequest) lease.onYieldRequest?.(r.yieldRequest)
    } else {
      this.leases.markLost(lease, r.reason === 'expired' ? 'expired' : 'revoked')
    }
  }

  private checkBeat(beat: BeatReply): void {
    if (beat.evicted) {
      this.hooks.onEvicted()
      return
    }
    if (beat.otherIncarnation && !this.warnedDuplicate) {
      this.warnedDuplicate = true
      this.core.emit('coordination:warning', {
        code: 'duplicate-replica-id',
        message: `another live process (incarnation ${beat.otherIncarnation}) uses replicaId ${JSON.stringify(this.core.replicaId)}`,
      })
    }
  }
}
