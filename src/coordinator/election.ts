import { monotonicNow } from '../clock.js'
import { timerDuration } from '../duration.js'
import { isConnectionError } from '../errors/from-redis.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { ProviderNotLeaderError } from '../errors/provider-not-leader-error.js'
import type { LeadReply } from '../wire/types.js'
import type { HeldLease } from './lease-table.js'
import { LeaseHandle } from './lease-handle.js'
import { CAMPAIGN_DEFAULTS, renewIntervalMs } from '../defaults.js'
import type { CampaignOptions, FollowerReason, Lead } from './types.js'

/** What an election needs from its coordinator (internal). */
export interface LeadPort {
  readonly leaseMs: number
  readonly minPollMs: number
  readonly maxPollMs: number
  /** One attempt; `announce`: emit `coordination:leader` on a grant (a campaign announces after onLeader). */
  attemptLead(name: string, stand: boolean, announce: boolean): Promise<{ lead: LeadHandle | null; reply: LeadReply | null }>
  withdrawCandidacy(name: string): Promise<void>
  checkLeaseNow(lease: HeldLease): Promise<void>
  announceLeader(lead: LeadHandle): void
  announceFollower(name: string, reason: FollowerReason): void
  reportTransport(lead: LeadHandle, down: boolean, yieldAfterMs: number): void // lead-transport-1: down (yields then) / up
  reportError(err: unknown): void
}

export class LeadHandle extends LeaseHandle implements Lead {
  readonly kind = 'lead' as const
  get name(): string {
    return this.lease.key
  }
}

/**
 * A campaign for one lead: stands, leads, and stands again. Standbys sleep until the lease would expire (or the leader's
 * release wakes them by pub/sub): a dead leader is replaced about leaseMs after its last renewal, a released one at once.
 */
export class Election {
  readonly name: string
  readonly #port: LeadPort
  readonly #opts: CampaignOptions
  readonly #providerDownMs: number
  readonly #sitOutMs: number
  #current: LeadHandle | null = null
  #stopped = false
  #stepDownReason: FollowerReason | null = null
  #resolveStepDown: ((r: FollowerReason) => void) | null = null
  #wakeSleep: (() => void) | null = null
  #sitOutUntil = 0
  #down = false
  #downTimer: NodeJS.Timeout | null = null
  #announcedStandby = false
  #loopDone: Promise<void> = Promise.resolve()
  #idle: Array<() => void> = []
  #dead = false
  /** Where the loop is: before its first attempt, attempting, serving a lead, or standing by. */
  #phase: 'pending' | 'attempting' | 'serving' | 'standby' = 'pending'
  /** resign() came while a lead may be on its way: a grant is given back unserved (no callbacks, no events). */
  #resignPending = false
  /** Set once onLeader has resolved for the current lead. */
  #serving = false
  #ready = deferred()

  /** @internal Made by coordinator.campaign(). */
  constructor(port: LeadPort, name: string, opts: CampaignOptions) {
    this.#port = port
    this.name = name
    this.#opts = opts
    this.#providerDownMs = timerDuration(opts.providerDownMs ?? CAMPAIGN_DEFAULTS.providerDownMs, 'providerDownMs')
    this.#sitOutMs = timerDuration(opts.sitOutMs ?? CAMPAIGN_DEFAULTS.sitOutMs, 'sitOutMs')
  }

  /** True while this replica leads, by the local deadline. */
  get isLeader(): boolean {
    return this.#current !== null && this.#current.held
  }

  /**
   * Resolves once this replica leads and `onLeader` has resolved (the transport is connected). While it stands by it stays
   * pending; each lead after a loss gives a new one. Rejects when the election stops without leading.
   */
  get ready(): Promise<void> {
    return this.#ready.promise
  }

  /**
   * For what only the leader may do (`send()` on an exclusive transport): throws ProviderNotLeaderError
   * on a standby (or before `onLeader` resolved), and LeaseLostError once the lead's local deadline passed.
   */
  assertLeader(): void {
    if (this.#current) this.#current.assertHeld()
    if (!this.#current || !this.#serving) throw new ProviderNotLeaderError(this.name)
  }

  /** The fence of the current lead, or null when not leading. */
  get fence(): number | null {
    return this.isLeader ? this.#current!.fence : null
  }

  /** The current lead, or null. */
  get lead(): Lead | null {
    return this.isLeader ? this.#current : null
  }

  /** @internal */
  begin(): void {
    this.#loopDone = this.#loop()
  }

  async #loop(): Promise<void> {
    let backoff = this.#port.minPollMs
    while (!this.#stopped) {
      const sitOut = this.#sitOutUntil - monotonicNow()
      if (sitOut > 0) {
        await this.#sleep(sitOut, false)
        continue
      }
      let attempt: { lead: LeadHandle | null; reply: LeadReply | null }
      this.#phase = 'attempting'
      try {
        attempt = await this.#port.attemptLead(this.name, true, false)
      } catch (err) {
        this.#resigned()
        if (err instanceof CoordinationUnavailableError && err.reason === 'stopped') break // evicted or stopped
        if (!(err instanceof CoordinationUnavailableError) && !isConnectionError(err)) this.#port.reportError(err)
        this.#phase = 'standby'
        await this.#sleep(Math.min(backoff, renewIntervalMs(this.#port.leaseMs)), true)
        backoff = Math.min(backoff * 2, Math.max(this.#port.maxPollMs, 1000))
        continue
      }
      backoff = this.#port.minPollMs
      if (attempt.lead) {
        if (this.#stopped || this.#resignPending) {
          // Stopped, or resigned before this lead was served: give it back unserved — onLeader has not
          // run and nothing was announced, so no onFollower or event follows either.
          await attempt.lead.release()
          if (this.#stopped) break
          this.#sitOutUntil = monotonicNow() + this.#sitOutMs
          this.#resigned()
          continue
        }
        this.#phase = 'serving'
        await this.#serve(attempt.lead)
        continue
      }
      this.#resigned()
      this.#phase = 'standby'
      if (!this.#announcedStandby) {
        this.#announcedStandby = true
        await this.#follower('standby')
      }
      const r = attempt.reply
      let next: number
      if (r?.status === 'held') next = r.msLeft + 5
      else if (r?.status === 'reserved') next = this.#port.maxPollMs
      else next = this.#port.minPollMs
      // Stand again (as a lease is renewed) before the candidacy lapses: operators see this replica as a standby.
      await this.#sleep(Math.min(next, renewIntervalMs(this.#port.leaseMs)), true)
    }
    this.#resigned()
    this.#notifyIdle()
    this.#ready.reject(new ProviderNotLeaderError(this.name))
    await this.#port.withdrawCandidacy(this.name).catch(() => {})
  }

  /** A pending resign() is answered: the attempt it waited for has its outcome. */
  #resigned(): void {
    if (!this.#resignPending) return
    this.#resignPending = false
    this.#notifyIdle()
  }

  async #serve(lead: LeadHandle): Promise<void> {
    this.#current = lead
    this.#stepDownReason = null
    this.#announcedStandby = false
    lead.lease.onYieldRequest = () => this.#stepDown('yield')
    const ended = new Promise<FollowerReason>((resolve) => {
      this.#resolveStepDown = resolve
      const onAbort = () => resolve(this.#stepDownReason ?? 'lost')
      if (lead.signal.aborted) onAbort()
      else lead.signal.addEventListener('abort', onAbort, { once: true })
    })
    if (!(await this.#call(() => this.#opts.onLeader?.(lead)))) return this.#leaderFailed(lead)
    // The transport is connected now: announce it (coordination:leader), and make `ready` resolve.
    if (!this.#dead) this.#port.announceLeader(lead)
    this.#serving = true
    this.#ready.resolve()
    if (this.#down) this.#armDownTimer()
    const reason = await ended
    this.#serving = false
    this.#ready = deferred()
    this.#resolveStepDown = null
    this.#clearDownTimer()
    this.#down = false
    if (reason !== 'lost') {
      // Tell the application first (it disconnects the transport), then let a standby in.
      await this.#follower(reason)
      await lead.release()
      if (reason !== 'stopped') this.#sitOutUntil = monotonicNow() + this.#sitOutMs
    } else {
      await this.#follower('lost')
      // Revoked by an operator (`provider yield --force`): sit out too, or it would take the lead back.
      if (lead.lease.lost?.reason === 'revoked') this.#sitOutUntil = monotonicNow() + this.#sitOutMs
    }
    this.#current = null
    this.#phase = 'standby'
    this.#notifyIdle()
  }

  /**
   * onLeader rejected (no transport): this replica never led — no coordination:leader, `ready` stays pending, assertLeader()
   * throws. It steps down as a yield does (onFollower('leader-failed') undoes what onLeader did, the release lets a standby
   * in), sits out sitOutMs and stands again.
   */
  async #leaderFailed(lead: LeadHandle): Promise<void> {
    this.#current = null
    this.#resolveStepDown = null
    await this.#follower('leader-failed')
    await lead.release()
    if (!this.#stopped) this.#sitOutUntil = monotonicNow() + this.#sitOutMs
    this.#phase = 'standby'
    this.#notifyIdle()
  }

  #stepDown(reason: FollowerReason): void {
    if (!this.#current || this.#stepDownReason) return
    this.#stepDownReason = reason
    this.#resolveStepDown?.(reason)
  }

  async #follower(reason: FollowerReason): Promise<void> {
    if (this.#dead) return
    this.#port.announceFollower(this.name, reason)
    await this.#call(() => this.#opts.onFollower?.({ name: this.name, reason }))
  }

  /** Run an application callback; false when it threw or rejected (reported as a warning). */
  async #call(fn: () => void | Promise<void>): Promise<boolean> {
    if (this.#dead) return true
    try {
      await fn()
      return true
    } catch (err) {
      this.#port.reportError(err)
      return false
    }
  }

  #sleep(ms: number, wakeable: boolean): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t)
        if (this.#wakeSleep === done) this.#wakeSleep = null
        resolve()
      }
      const t = setTimeout(done, Math.max(0, ms))
      if (wakeable || this.#stopped) this.#wakeSleep = done
      else this.#wakeSleep = () => (this.#stopped ? done() : undefined)
    })
  }

  /** @internal A push for this lead: a yield request (when leading) or a release (when standing). */
  wake(): void {
    if (this.#current) {
      void this.#port.checkLeaseNow(this.#current.lease)
      return
    }
    this.#wakeSleep?.()
  }

  #armDownTimer(): void {
    this.#clearDownTimer()
    if (this.#current && !this.#dead) this.#port.reportTransport(this.#current, true, this.#providerDownMs)
    this.#downTimer = setTimeout(() => {
      if (this.#down) this.#stepDown('provider-down')
    }, this.#providerDownMs)
    this.#downTimer.unref?.()
  }

  #clearDownTimer(): void {
    if (this.#downTimer) clearTimeout(this.#downTimer)
    this.#downTimer = null
  }

  /** The leader's transport is closed: if it stays so for providerDownMs, this replica yields. */
  reportDown(): void {
    if (this.#down) return
    this.#down = true
    if (this.#current) this.#armDownTimer()
  }

  /** The transport is open again. */
  reportUp(): void {
    if (this.#down && this.#current && !this.#dead) this.#port.reportTransport(this.#current, false, this.#providerDownMs)
    this.#down = false
    this.#clearDownTimer()
  }

  #notifyIdle(): void {
    for (const f of this.#idle.splice(0)) f()
  }

  #whenNotLeading(): Promise<void> {
    if (!this.#current) return Promise.resolve()
    return new Promise((resolve) => this.#idle.push(resolve))
  }

  /**
   * Step down now (onFollower 'resign', release, sit out sitOutMs), then stand again. Called while a lead may be on its way
   * (right after campaign(), an attempt in flight), that lead is given back unserved: no onLeader, no onFollower, no event.
   */
  async resign(): Promise<void> {
    if (this.#stopped) return
    if (this.#phase === 'pending' || this.#phase === 'attempting') {
      this.#resignPending = true
      await new Promise<void>((resolve) => this.#idle.push(resolve))
      return
    }
    if (!this.#current) return
    const done = this.#whenNotLeading()
    this.#stepDown('resign')
    await done
  }

  /** @internal The process "died" (coordinator.crash()): stop without callbacks or writes. */
  kill(): void {
    this.#dead = true
    this.#stopped = true
    this.#resignPending = false
    this.#notifyIdle()
    this.#ready.reject(new ProviderNotLeaderError(this.name))
    this.#clearDownTimer()
    this.#wakeSleep?.()
  }

  /** Stop campaigning: step down if leading (onFollower 'stopped'), stop standing. */
  async stop(): Promise<void> {
    if (this.#stopped) return this.#loopDone
    this.#stopped = true
    this.#resignPending = false
    this.#notifyIdle()
    this.#stepDown('stopped')
    this.#wakeSleep?.()
    await this.#loopDone
  }
}

/** A promise with its resolve and reject; a rejection nobody awaited is not reported as unhandled. */
function deferred(): { promise: Promise<void>; resolve(): void; reject(err: Error): void } {
  let resolve!: () => void
  let reject!: (err: Error) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  promise.catch(() => {})
  return { promise, resolve, reject }
}
