/**
 * Leads for one coordinator: `tryLead` attempts and `campaign` elections. A granted lead is a held
 * lease like a turn (renewed with the others, lost locally before Redis expiry); the elections run
 * on the port below (election.ts).
 */
import { monotonicNow } from '../clock.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import type { LeadReply } from '../wire/types.js'
import { leaseDeadline, type CoordinatorContext } from './context.js'
import { Election, LeadHandle, type LeadPort } from './election.js'
import type { HeldLease, LeaseTable } from './lease-table.js'
import type { Renewer } from './renewer.js'
import type { CampaignOptions, FollowerReason } from './types.js'

export class Leadership implements LeadPort {
  private readonly elections = new Map<string, Election>()

  constructor(
    private readonly core: CoordinatorContext,
    private readonly leases: LeaseTable,
    private readonly renewer: Renewer,
  ) {}

  get leaseMs(): number {
    return this.core.leaseMs
  }
  get minPollMs(): number {
    return this.core.minPollMs
  }
  get maxPollMs(): number {
    return this.core.maxPollMs
  }

  assertNotCampaigning(name: string): void {
    if (this.elections.has(name)) throw new ConfigurationError(`already campaigning for ${JSON.stringify(name)}`)
  }

  /** A new election for `name` (one per name): it begins once `start()` (the coordinator's) resolves. */
  campaign(name: string, options: CampaignOptions, start: () => Promise<void>): Election {
    this.assertNotCampaigning(name)
    const election = new Election(this, name, options)
    this.elections.set(name, election)
    void start()
      .then(() => election.begin())
      .catch((err: unknown) => this.core.reportError(err))
    return election
  }

  async withdrawCandidacy(name: string): Promise<void> {
    this.elections.delete(name)
    if (this.core.state === 'crashed') return
    await this.core.backend.leadRelease(name, this.core.incarnation, null, this.core.leaseMs)
  }

  /** One attempt at a lead; a grant becomes a held lease. */
  async attemptLead(name: string, stand: boolean, announce: boolean): Promise<{ lead: LeadHandle | null; reply: LeadReply | null }> {
    const core = this.core
    if (core.state !== 'running') throw new CoordinationUnavailableError('stopped', `coordinator is ${core.state}`)
    const sentAt = monotonicNow()
    const reply = await core.backend.leadAcquire(name, core.replicaId, core.incarnation, core.leaseMs, stand)
    if (reply.status === 'mine') {
      // Already ours in Redis. Held here (a second attempt), or held before and given back or dropped
      // (that release may still arrive and end it): not taken up. Otherwise it is a grant whose reply
      // was lost and the command sent again: taken up — the script renewed it, so its Redis expiry is
      // after this call's send time plus leaseMs, like a fresh grant's.
      if (this.leases.on('lead', name).length) return { lead: null, reply }
      // Held by this process's scheduler lease backend (store.leases()) under our incarnation: its own.
      if (this.leases.fences.schedulerLead(name) === reply.fence) return { lead: null, reply }
      if (this.leases.fences.leadOnceHeld(name, reply.fence)) {
        // Make sure it goes (conditioned on this fence), rather than leave it unserved for a lease.
        await core.backend.leadRelease(name, core.incarnation, reply.fence, core.leaseMs).catch(() => {})
        return { lead: null, reply }
      }
    } else if (reply.status !== 'granted') return { lead: null, reply }
    const deadline = leaseDeadline(core, sentAt)
    if (monotonicNow() >= deadline || core.state !== 'running') {
      // Frozen between asking and hearing back (or stopped meanwhile): give it back, stand again.
      await core.backend.leadRelease(name, core.incarnation, reply.fence, core.leaseMs).catch(() => {})
      return { lead: null, reply: null }
    }
    const lease = this.leases.track('lead', name, reply.fence, 0, sentAt, deadline)
    const lead = new LeadHandle(this.leases, lease, reply.previousHolder)
    if (announce) this.announceTried(lead)
    return { lead, reply }
  }

  /**
   * A tryLead's lead: `coordination:leader` now, and one `coordination:follower` when it ends, so
   * the events pair as a campaign's do — 'lost' (expired, revoked, reset, evicted), 'stopped' (the
   * coordinator's stop() gave it back) or 'released' (lead.release()). A crash tells nothing.
   */
  private announceTried(lead: LeadHandle): void {
    this.announceLeader(lead)
    lead.lease.onEnd = (lost) => this.announceFollower(lead.name, lost ? 'lost' : this.core.state === 'stopping' ? 'stopped' : 'released')
  }

  /** `coordination:leader`: a tryLead at its grant, a campaign once onLeader resolved. */
  announceLeader(lead: LeadHandle): void {
    const previousHolder = lead.previousHolder
    this.core.emit('coordination:leader', { name: lead.name, fence: lead.fence, previousHolder })
    this.core.logEvent({ type: 'leader', name: lead.name, fence: lead.fence, previous: previousHolder?.replicaId ?? null })
  }

  checkLeaseNow(lease: HeldLease): Promise<void> {
    return this.renewer.checkLeaseNow(lease)
  }

  announceFollower(name: string, reason: FollowerReason): void {
    this.core.emit('coordination:follower', { name, reason })
    // A tryLead's release is in the stream already (lead-released); a standby is not notable.
    if (reason !== 'standby' && reason !== 'released') this.core.logEvent({ type: 'follower', name, reason })
  }

  /**
   * lead-transport-1, best effort: what operators read (`provider status`: transport down 35s, yields at
   * 1m). A failed write is not retried: the election's own timer decides the yield, not this record.
   */
  reportTransport(lead: LeadHandle, down: boolean, yieldAfterMs: number): void {
    if (this.core.state !== 'running') return
    this.core.backend.leadTransport(lead.name, this.core.incarnation, lead.fence, down, yieldAfterMs).catch(() => {})
  }

  reportError(err: unknown): void {
    this.core.reportError(err)
  }

  /** A push for a lead: a yield request to its leader, or a release that wakes its standbys. */
  onWake(name: string): void {
    this.elections.get(name)?.wake()
    if (this.elections.has(name)) return
    for (const lease of this.leases.on('lead', name)) void this.renewer.checkLeaseNow(lease)
  }

  /** The leads this replica stands for, for the heartbeat record. */
  names(): string[] {
    return [...this.elections.keys()]
  }

  /** Stop every election (they step down and stop standing) before the other leases go. */
  async stopAll(): Promise<void> {
    await Promise.allSettled([...this.elections.values()].map((e) => e.stop()))
  }

  /** The process "died": elections stop without callbacks or writes. */
  killAll(): void {
    for (const e of this.elections.values()) e.kill()
    this.elections.clear()
  }
}
