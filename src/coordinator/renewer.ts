/**
 * The renewal cycle: every leaseMs / 3 one heartbeat and one renewal of every held lease (one round
 * trip per Redis node), then the server's identity. A lease is extended only when the renewal was
 * made by the server we knew; a new server (restart, failover) fails everything closed, and the
 * releases of the last leaseMs are sent again (the new server may have lost them). The identity is
 * also asked as soon as the client reconnects or a Cluster's masters change, so a lease the new
 * server does not know is dropped about one round trip after the switch, not at the next renewal.
 */
import { monotonicNow, sleep } from '../clock.js'
import type { BeatRecord, BeatReply, LeaseKind, RenewReply } from '../wire/types.js'
import { leaseDeadline, type CoordinatorContext } from './context.js'
import { FAILOVER_DETECTION_OFF } from './permissions.js'
import { RECENT_RELEASES_CAP, type HeldLease, type LeaseTable } from './lease-table.js'

export interface RenewerHooks {
  /** The heartbeat record to write now. */
  record(): BeatRecord
  /** An operator evicted this incarnation (`replica evict`): its beats are refused from now on. */
  onEvicted(): void
}

/** What an identity check found: the same server, a new one, or nothing (INFO did not answer). */
export type ServerCheck = 'same' | 'changed' | 'unknown'

/**
 * Which server changed, in words: identities are `host:port=run_id@slots` per master (`;` between
 * them), or one run_id. "master 127.0.0.1:7002 has a new run_id" / "127.0.0.1:7005 is a new master".
 */
export function describeServerChange(before: string, after: string): string {
  const parse = (id: string) =>
    new Map(
      id.split(';').map((p) => {
        const [node, rest] = p.includes('=') ? (p.split('=') as [string, string]) : ['', p]
        const [run, slots = ''] = rest.split('@') as [string, string?]
        return [node, { run, slots }]
      }),
    )
  const a = parse(before)
  const b = parse(after)
  const changed: string[] = []
  for (const [node, now] of b) {
    const was = a.get(node)
    if (!was) changed.push(node ? `${node} is a new master` : 'a new server answers')
    else if (was.run !== now.run) changed.push(node ? `master ${node} has a new run_id` : 'the server has a new run_id')
    else if (was.slots !== now.slots) changed.push(`master ${node} serves other slots`)
  }
  for (const node of a.keys()) if (!b.has(node)) changed.push(node ? `${node} is no longer a master` : 'the server changed')
  return `Redis changed (${changed.join(', ') || 'a new run_id'})`
}

/** Leases renewed per script call: one call holds Redis a few ms at most, whatever a replica holds. */
export const RENEW_CHUNK = 500
/** Chunks sent per round trip (their replies and the identity check after them come back together). */
export const RENEW_WINDOW = 8

export class Renewer {
  private renewing = false
  /**
   * A tick came while a cycle was still under way (a slow round trip): the next cycle runs as soon as
   * that one ends. Skipped, it would leave every lease's last confirmed renewal a whole interval
   * older, past the late margin that makes a lease unconfirmed (LeaseTable.isHeld).
   */
  private again = false
  private warnedDuplicate = false
  /** The server identity (run_ids) seen at start and at each renewal. */
  private serverId: string | null = null
  /** Server changes seen so far (restart, failover): a waiter whose ticket vanished re-queues when it moved. */
  generation = 0
  /** An identity check under way (reconnects join it). */
  private checking: Promise<ServerCheck> | null = null

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
    if (id === null) this.core.emit('coordination:warning', FAILOVER_DETECTION_OFF)
    this.checkBeat(beat)
  }

  /**
   * Heartbeat + renewal of every held lease, every leaseMs / 3: RENEW_CHUNK leases per script call (per
   * lease on a Cluster), RENEW_WINDOW chunks per round trip, one window after another, each trusted by
   * its own identity check and applied as it comes back. A replica holding 100,000 turns neither
   * makes Redis run them as one command in front of everyone else's nor waits for all of them before
   * any lease is extended: a slow or failed window leaves its own leases to the watchdog, not every
   * lease at once.
   */
  async cycle(): Promise<void> {
    if (this.core.state !== 'running') return
    if (this.renewing) {
      this.again = true
      return
    }
    this.renewing = true
    const { backend, replicaId, incarnation, leaseMs } = this.core
    try {
      const sentAt = monotonicNow()
      const leases = this.leases.all()
      const beat = backend.beat(replicaId, incarnation, leaseMs, this.hooks.record()).catch((e: unknown) => e as Error)
      const window = RENEW_CHUNK * RENEW_WINDOW
      for (let i = 0; i === 0 || i < leases.length; i += window) {
        if (this.core.state !== 'running') break
        await this.renewWindow(leases.slice(i, i + window))
      }
      const b = await beat
      if (!(b instanceof Error)) {
        this.core.emit('coordination:renewed', { roundTripMs: monotonicNow() - sentAt, leases: leases.length })
        this.checkBeat(b)
      }
      if (this.leases.pending) await this.leases.retryReleases()
    } catch {
      // the watchdog drops what cannot be renewed in time
    } finally {
      this.renewing = false
      if (this.again) {
        this.again = false
        void this.cycle()
      }
    }
  }

  /** One round trip: its chunks of renewals, then which server answered; each lease applied from the send time. */
  private async renewWindow(leases: HeldLease[]): Promise<void> {
    const { backend, incarnation, leaseMs } = this.core
    const sentAt = monotonicNow()
    const chunks: HeldLease[][] = []
    for (let i = 0; i < leases.length; i += RENEW_CHUNK) chunks.push(leases.slice(i, i + RENEW_CHUNK))
    const replies = chunks.map((chunk) =>
      backend.renew(
        chunk.map((l) => ({ kind: l.kind, key: l.key, fence: l.fence })),
        incarnation,
        leaseMs,
      ),
    )
    // Which server answered: a fresh ask sent AFTER the renewals on the same connection (one per
    // node), so Redis answers it after running them, and a renewal that reached a restarted or
    // failed-over server (the client re-sends commands after a reconnect, in order) is never trusted
    // unless the server is still the one we knew. Unknown (INFO failed) means: extend nothing.
    const trusted = (await this.checkServer(leaseMs, true)) !== 'unknown'
    const answered = await Promise.all(replies)
    chunks.forEach((chunk, c) =>
      chunk.forEach((lease, i) => {
        const r = answered[c]![i]
        if (!trusted && r && !(r instanceof Error) && r.ok) return // cannot tell which server renewed it
        this.applyRenewal(lease, r, sentAt)
      }),
    )
  }

  /**
   * Ask which server holds the state now (`fresh`: a new ask, else join one under way). A change —
   * a restart, a failover — fails every lease closed (reason 'reset'; fences keep growing past it)
   * and sends the releases of the last leaseMs again: the new server may have lost them, and each
   * is conditioned on our incarnation and request, so a second delivery changes nothing.
   */
  checkServer(leaseMs?: number, fresh = false): Promise<ServerCheck> {
    if (this.checking && !fresh) return this.checking
    const check = (async (): Promise<ServerCheck> => {
      const id = await this.core.backend.serverIdentity(leaseMs).catch(() => undefined)
      if (id === undefined) return 'unknown'
      if (id === null || this.serverId === null || id === this.serverId) {
        if (id !== null) this.serverId = id
        return 'same'
      }
      const before = this.serverId
      this.serverId = id
      this.generation++
      // On a Cluster, only what the masters that changed serve: a lease whose slot is served by the
      // same master, with the same run_id, before and after, was on a server that lost nothing.
      const ownerIn = this.core.backend.ownerIn?.bind(this.core.backend)
      const reached = (lease: { kind: LeaseKind; key: string }) => {
        const was = ownerIn?.(before, lease) ?? null
        return was === null || was !== ownerIn?.(id, lease)
      }
      const held = this.leases.all()
      const dropped = held.filter(reached)
      for (const lease of dropped) this.leases.markLost(lease, 'reset')
      // Given back now, not at the next cycle: the leases just dropped, and the releases of the last leaseMs.
      const resend = this.leases.resendRecentReleases(reached)
      const kept = held.length - dropped.length
      this.core.emit('coordination:warning', {
        code: 'server-changed',
        message: `${describeServerChange(before, id)}: restarted or failed over, it may have lost the last writes; ${dropped.length} lease(s) dropped${kept ? ` (${kept} on masters that did not change kept)` : ''}, ${resend.count} recent release(s) sent again${resend.overCap ? ` (${resend.overCap} older one(s) past the cap of ${RECENT_RELEASES_CAP} not kept)` : ''}`,
      })
      this.core.logEvent({ type: 'server-changed', leasesDropped: dropped.length, leasesKept: kept, releasesResent: resend.count })
      await Promise.all([resend.done, this.leases.retryReleases()])
      return 'changed'
    })()
    this.checking = check
    void check.finally(() => {
      if (this.checking === check) this.checking = null
    })
    return check
  }

  /** Is an identity check under way (a reconnect, a topology change)? */
  get checkUnderWay(): boolean {
    return this.checking !== null
  }

  /** Resolves once the identity check under way (if any) has ended. */
  async checked(): Promise<void> {
    await this.checking?.catch(() => undefined)
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
      lease.confirmedAt = Math.max(lease.confirmedAt, sentAt)
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
