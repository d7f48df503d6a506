/**
 * The leadership contract (tryLead, campaign, yield requests, providerDownMs): runs unchanged against
 * the in-memory reference, Redis standalone and Redis Cluster.
 */
import { afterEach, describe, expect, it } from 'vitest'
import {
  LeaseLostError,
  ProviderNotLeaderError,
  type Coordinator,
  type CoordinatorOptions,
  type Election,
  type FollowerReason,
  type YieldResult,
} from '../../src/index.js'
import { blockEventLoop, sleep, until } from '../helpers/wait.js'
import { startCoordinator } from '../helpers/redis.js'
import type { LeadView } from '../helpers/shared-state.js'

export interface LeadHarness {
  name: string
  make(options?: CoordinatorOptions): Coordinator
  reset(): void
  /** What `botmesh-coord provider yield` writes. */
  requestYield(name: string, opts?: { target?: string; ifFence?: number; ttlMs?: number }): Promise<YieldResult>
  /** A lead in the shared state (what the tests wait on instead of sleeping). */
  lead(name: string): Promise<LeadView>
}

interface Tracked {
  c: Coordinator
  e: Election
  log: string[]
}

export function defineLeadContract(h: LeadHarness): void {
  describe(`leadership contract: ${h.name}`, () => {
    const started: Coordinator[] = []
    const replica = async (replicaId: string, options: CoordinatorOptions = {}) => {
      const c = await startCoordinator(() => h.make({ replicaId, leaseMs: 1200, maxPollMs: 50, ...options }))
      started.push(c)
      return c
    }
    afterEach(async () => {
      await Promise.allSettled(started.splice(0).map((c) => c.stop()))
      h.reset()
    })

    /** Campaign with a log of callbacks, and a global "who is connected" check. */
    const connected = new Set<string>()
    let doubleLeaders = 0
    const stand = async (id: string, opts: { providerDownMs?: number; sitOutMs?: number; leaseMs?: number } = {}): Promise<Tracked> => {
      const c = await replica(id, opts.leaseMs ? { leaseMs: opts.leaseMs } : {})
      const log: string[] = []
      const e = c.campaign('provider:wa', {
        providerDownMs: opts.providerDownMs,
        sitOutMs: opts.sitOutMs ?? 500,
        onLeader: (lead) => {
          if (connected.size > 0) doubleLeaders++
          connected.add(id)
          log.push(`leader:${lead.fence}`)
        },
        onFollower: ({ reason }) => {
          connected.delete(id)
          log.push(`follower:${reason}`)
        },
      })
      return { c, e, log }
    }
    afterEach(() => {
      connected.clear()
      doubleLeaders = 0
    })
    const leaderOf = (rs: Tracked[]) => rs.filter((r) => r.e.isLeader)

    it('tryLead: one holder, a higher fence for the next, previousHolder, null while held', async () => {
      const a = await replica('a')
      const b = await replica('b')
      const la = await a.tryLead('job:report')
      expect(la).not.toBeNull()
      expect(la!.name).toBe('job:report')
      expect(la!.previousHolder).toBeNull()
      expect(await b.tryLead('job:report')).toBeNull()
      expect(await a.tryLead('job:report')).toBeNull() // no second handle for the same holder
      await la!.release()
      const lb = await b.tryLead('job:report')
      expect(lb!.fence).toBeGreaterThan(la!.fence)
      expect(lb!.previousHolder).toEqual({ replicaId: 'a', incarnation: a.incarnation })
      await lb!.release()
    })

    it('tryLead: renewed while held, and lost locally before Redis expiry after a freeze', async () => {
      const a = await replica('a', { leaseMs: 600 })
      const lead = (await a.tryLead('job:x'))!
      await sleep(900) // time is the subject: held past its lease, renewed every leaseMs / 3
      expect(lead.held).toBe(true)
      blockEventLoop(700)
      expect(() => lead.assertHeld()).toThrow(LeaseLostError)
      expect(lead.signal.aborted).toBe(true)
    })

    it('campaign: exactly one leader; standbys hear standby; a dead leader is replaced after its lease', async () => {
      const rs = await Promise.all(['a', 'b', 'c'].map((id) => stand(id, { leaseMs: 800 })))
      await until(() => leaderOf(rs).length === 1, 5000, 'a leader')
      await until(() => rs.filter((r) => r.log.includes('follower:standby')).length === 2, 3000, 'two standbys')
      const first = leaderOf(rs)[0]!
      const firstFence = first.e.fence!
      const events: unknown[] = []
      for (const r of rs) r.c.on('coordination:leader', (e) => events.push(e))
      first.c.crash()
      connected.delete(first.c.replicaId) // the dead process's transport is gone with it
      const rest = rs.filter((r) => r !== first)
      // After its lease (and the standby's next look, every leaseMs / 3 at most): the bound is generous
      // for a loaded machine, but a standby that stopped looking would break it.
      await until(() => leaderOf(rest).length === 1, 3 * 800, 'a new leader within three leases')
      const next = leaderOf(rest)[0]!
      expect(next.e.fence!).toBeGreaterThan(firstFence)
      expect(events).toEqual([expect.objectContaining({ name: 'provider:wa', fence: next.e.fence })])
      expect(doubleLeaders).toBe(0)
    })

    it('an orderly stop hands the lead to a standby at once', async () => {
      // A long lease: a standby tries again only every leaseMs / 3 (10 s), so a takeover within 5 s was pushed.
      const leaseMs = 30_000
      const rs = await Promise.all(['a', 'b'].map((id) => stand(id, { leaseMs })))
      await until(() => leaderOf(rs).length === 1)
      const first = leaderOf(rs)[0]!
      const other = rs.find((r) => r !== first)!
      await until(() => other.log.includes('follower:standby'))
      await first.c.stop()
      await until(() => other.e.isLeader, leaseMs / 6, 'a takeover pushed by the release')
      expect(first.log.at(-1)).toBe('follower:stopped')
      expect(doubleLeaders).toBe(0)
    })

    it('a yield request: onFollower(yield) before the release, a standby takes over, the yielder sits out', async () => {
      // A long lease: the leader renews only every leaseMs / 3 (10 s), so a takeover within 5 s was pushed.
      const leaseMs = 30_000
      const rs = await Promise.all(['a', 'b'].map((id) => stand(id, { sitOutMs: 1500, leaseMs })))
      await until(() => leaderOf(rs).length === 1)
      const first = leaderOf(rs)[0]!
      const other = rs.find((r) => r !== first)!
      await until(() => other.log.includes('follower:standby'))
      const fence = first.e.fence!
      const res = await h.requestYield('provider:wa', { ifFence: fence })
      expect(res).toMatchObject({ status: 'requested', fence, leader: { replicaId: first.c.replicaId } })
      await until(() => other.e.isLeader, leaseMs / 6, 'a takeover pushed to the leader (not at its next renewal)')
      expect(first.log.at(-1)).toBe('follower:yield')
      expect(other.e.fence!).toBeGreaterThan(fence)
      expect(doubleLeaders).toBe(0)
      // The yielder sits out, then stands again — and does not take the lead back from a live leader.
      await until(() => first.log.at(-1) === 'follower:standby', 5000, 'the yielder standing again after sitting out')
      expect(first.e.isLeader).toBe(false)
      expect(other.e.isLeader).toBe(true)
    })

    it('a yield request with a target hands the lead to that standby only', async () => {
      const rs = await Promise.all(['a', 'b', 'c'].map((id) => stand(id)))
      await until(() => leaderOf(rs).length === 1)
      await until(() => rs.filter((r) => r.log.includes('follower:standby')).length === 2)
      const first = leaderOf(rs)[0]!
      const target = rs.filter((r) => r !== first).sort((x, y) => y.c.replicaId.localeCompare(x.c.replicaId))[0]!
      const res = await h.requestYield('provider:wa', { target: target.c.replicaId })
      expect(res.status).toBe('requested')
      await until(() => target.e.isLeader, 3000, 'the target leads')
      expect(leaderOf(rs)).toEqual([target])
      expect(doubleLeaders).toBe(0)
    })

    it('refuses a yield whose fence is stale or whose target is not standing, and changes nothing', async () => {
      const rs = await Promise.all(['a', 'b'].map((id) => stand(id)))
      await until(() => leaderOf(rs).length === 1)
      const leader = leaderOf(rs)[0]!
      const fence = leader.e.fence!
      expect(await h.requestYield('provider:wa', { ifFence: fence - 1 })).toEqual({ status: 'fence-changed', fence })
      expect(await h.requestYield('provider:wa', { target: 'nobody' })).toEqual({ status: 'target-not-standing' })
      expect(await h.requestYield('provider:other')).toEqual({ status: 'no-leader' })
      // Nothing was written: no yield request pending, same holder and fence, and the leader still leads.
      expect(await h.lead('provider:wa')).toEqual({ holder: leader.c.replicaId, fence, yieldRequested: false })
      await leader.c.renewNow()
      expect(leader.e.isLeader).toBe(true)
      expect(leader.e.fence).toBe(fence)
    })

    it('providerDownMs: a leader whose transport stays down yields; reportUp in time keeps it', async () => {
      const rs = await Promise.all(['a', 'b'].map((id) => stand(id, { providerDownMs: 300 })))
      await until(() => leaderOf(rs).length === 1)
      const first = leaderOf(rs)[0]!
      const other = rs.find((r) => r !== first)!
      first.e.reportDown()
      first.e.reportUp() // in time: the down timer is cleared…
      await sleep(2 * 300) // …time is the subject: past providerDownMs nothing fired
      expect(first.e.isLeader).toBe(true)
      expect(first.log).not.toContain('follower:provider-down')
      first.e.reportDown()
      await until(() => other.e.isLeader, 3000, 'takeover after provider-down')
      expect(first.log).toContain('follower:provider-down')
      expect(doubleLeaders).toBe(0)
    })

    it('resign steps down and stands again after sitting out', async () => {
      const rs = await Promise.all(['a', 'b'].map((id) => stand(id, { sitOutMs: 300 })))
      await until(() => leaderOf(rs).length === 1)
      const first = leaderOf(rs)[0]!
      const other = rs.find((r) => r !== first)!
      await until(() => other.log.includes('follower:standby')) // standing: the release wakes it
      await first.e.resign()
      expect(first.e.isLeader).toBe(false)
      expect(first.log.at(-1)).toBe('follower:resign')
      await until(() => other.e.isLeader, 3000, 'takeover after resign')
      await other.e.stop()
      await until(() => first.e.isLeader, 3000, 'the resigner leads again once alone')
    })

    it('coordination:leader fires once onLeader resolved; ready and assertLeader follow the transport', async () => {
      const a = await replica('a')
      const log: string[] = []
      let connect!: () => void
      const connecting = new Promise<void>((resolve) => (connect = resolve))
      a.on('coordination:leader', (e) => {
        const fence: number = e.fence // typed payloads
        // @ts-expect-error not a field of the leader event
        void e.reason
        log.push(`event:leader:${fence}`)
      })
      a.on('coordination:follower', (e) => log.push(`event:follower:${e.reason}`))
      const e = a.campaign('provider:ready', {
        onLeader: async (lead) => {
          log.push(`onLeader:${lead.fence}`)
          await connecting
          log.push('connected')
        },
        onFollower: ({ reason }) => void log.push(`onFollower:${reason}`),
      })
      let ready = false
      void e.ready.then(() => (ready = true))
      await until(() => log.length > 0, 5000, 'onLeader to run')
      expect(e.isLeader).toBe(true)
      expect(() => e.assertLeader()).toThrow(ProviderNotLeaderError) // not connected yet
      expect(ready).toBe(false)
      connect()
      await e.ready
      expect(log).toEqual([`onLeader:${e.fence}`, 'connected', `event:leader:${e.fence}`])
      expect(() => e.assertLeader()).not.toThrow()
      // A standby: pending ready, ProviderNotLeaderError; it is ready once it leads.
      const b = await replica('b')
      const eb = b.campaign('provider:ready', {})
      await until(async () => (await h.lead('provider:ready')).holder === 'a' && eb.isLeader === false, 5000, 'b standing')
      expect(() => eb.assertLeader()).toThrow(ProviderNotLeaderError)
      await e.stop()
      await eb.ready
      expect(() => eb.assertLeader()).not.toThrow()
      expect(log.slice(3)).toEqual(['event:follower:stopped', 'onFollower:stopped'])
      // A lead whose local deadline passed: LeaseLostError, before any timer noticed.
      blockEventLoop(1300)
      expect(() => eb.assertLeader()).toThrow(LeaseLostError)
    })

    it('after a freeze, assertLeader throws a LeaseLostError whether or not the timers ran first (ProviderNotLeaderError is one)', async () => {
      const a = await replica('a', { leaseMs: 600 })
      const log: string[] = []
      let open!: () => void
      const gate = new Promise<void>((resolve) => (open = resolve))
      let leads = 0
      const e = a.campaign('provider:frozen', {
        // The first lead connects; a later one stays connecting (not served) until the test ends.
        onLeader: () => (++leads === 1 ? undefined : gate),
        onFollower: ({ reason }) => void log.push(reason),
      })
      await e.ready
      blockEventLoop(700) // past the lead's local deadline
      let first: unknown
      try {
        e.assertLeader() // no timer has run yet: the lead's deadline says it
      } catch (err) {
        first = err
      }
      expect(first).toBeInstanceOf(LeaseLostError)
      // Now the library's timers run first: the lead is dropped, the election steps down (and stands again).
      await until(() => log.includes('lost'), 5000, "the election's step-down")
      let later: unknown
      try {
        e.assertLeader()
      } catch (err) {
        later = err
      }
      expect(later).toBeInstanceOf(ProviderNotLeaderError)
      expect(later).toBeInstanceOf(LeaseLostError) // one catch handles both
      expect(later).toMatchObject({ code: 'ERR_NOT_LEADER', reason: 'not-leader', lead: 'provider:frozen', key: 'provider:frozen' })
      open()
      await e.stop()
    })

    it('a leader late to renew (frozen past half its lease) is not the leader until a renewal confirms the lead', async () => {
      const leaseMs = 1500 // renewals every 500 ms; late past 750 ms; the local deadline at 1350 ms
      const [first, other] = await Promise.all(['a', 'b'].map((id) => stand(id, { leaseMs })))
      await until(() => leaderOf([first!, other!]).length === 1)
      const leader = first!.e.isLeader ? first! : other!
      await leader.e.ready
      await leader.c.renewNow()
      blockEventLoop(0.6 * leaseMs)
      // The first instant after the freeze, before any timer ran: an operator may have revoked the
      // lead and a standby taken it meanwhile; only the next renewal can tell.
      expect(leader.e.isLeader).toBe(false)
      expect(leader.e.fence).toBeNull()
      let err: unknown
      try {
        leader.e.assertLeader()
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(LeaseLostError)
      expect(err).toMatchObject({ reason: 'unconfirmed', key: 'provider:wa' })
      await leader.c.renewNow() // still ours in Redis: confirmed, and leading again
      expect(leader.e.isLeader).toBe(true)
      expect(() => leader.e.assertLeader()).not.toThrow()
      expect(leader.log.filter((l) => l.startsWith('follower:') && l !== 'follower:standby')).toEqual([])
      expect(doubleLeaders).toBe(0)
    })

    it('tryLead announces coordination:leader at its grant (there is no onLeader)', async () => {
      const a = await replica('a')
      const events: number[] = []
      a.on('coordination:leader', (e) => events.push(e.fence))
      const lead = (await a.tryLead('job:announce'))!
      expect(events).toEqual([lead.fence])
      await lead.release()
    })

    it('tryLead pairs its events: coordination:follower once when the lead is released, lost, or given back by stop()', async () => {
      const a = await replica('a', { leaseMs: 600 })
      const log: string[] = []
      a.on('coordination:leader', (e) => log.push(`leader:${e.name}`))
      a.on('coordination:follower', (e) => log.push(`follower:${e.name}:${e.reason}`))
      const released = (await a.tryLead('job:released'))!
      await released.release()
      await released.release() // idempotent: told once
      expect(log).toEqual(['leader:job:released', 'follower:job:released:released'])
      const lost = (await a.tryLead('job:lost'))!
      blockEventLoop(700) // past its lease
      expect(lost.held).toBe(false)
      await lost.release() // after the loss: nothing more to tell
      expect(log.slice(2)).toEqual(['leader:job:lost', 'follower:job:lost:lost'])
      expect(await a.tryLead('job:stopped')).not.toBeNull()
      await a.stop()
      expect(log.slice(4)).toEqual(['leader:job:stopped', 'follower:job:stopped:stopped'])
    })

    it('a rejected onLeader is no lead: it steps down (a standby takes over), sits out, stands again; ready waits for a served lead', async () => {
      const a = await replica('a')
      const b = await replica('b')
      const log: string[] = []
      const warnings: string[] = []
      a.on('coordination:leader', () => log.push('event:leader'))
      a.on('coordination:follower', (e) => log.push(`event:follower:${e.reason}`))
      a.on('coordination:warning', (w) => warnings.push(w.message))
      let fail!: () => void
      const failing = new Promise<void>((_, reject) => (fail = () => reject(new Error('connect failed'))))
      let attempts = 0
      const ea = a.campaign('provider:flaky', {
        sitOutMs: 300,
        onLeader: async () => {
          log.push('onLeader')
          if (++attempts === 1) await failing // the first connect fails; the next one works
        },
        onFollower: ({ reason }) => void log.push(`onFollower:${reason}`),
      })
      let ready = false
      void ea.ready.then(() => (ready = true))
      await until(() => log.includes('onLeader'), 5000, 'a connecting')
      let bStanding = false
      b.on('coordination:follower', (e) => (bStanding ||= e.reason === 'standby'))
      const eb = b.campaign('provider:flaky', {})
      await until(() => bStanding, 5000, 'b standing by')
      fail()
      await until(() => eb.isLeader, 3000, 'b taking the lead a released')
      expect(ea.isLeader).toBe(false)
      expect(() => ea.assertLeader()).toThrow(ProviderNotLeaderError)
      expect(ready).toBe(false)
      expect(log).toEqual(['onLeader', 'event:follower:leader-failed', 'onFollower:leader-failed'])
      expect(warnings).toContain('connect failed')
      // It sat out and stands again; once b goes, it leads, and this time onLeader resolves.
      await until(() => log.includes('onFollower:standby'), 5000, 'a standing again after sitting out')
      await eb.stop()
      await ea.ready
      expect(ea.isLeader).toBe(true)
      expect(() => ea.assertLeader()).not.toThrow()
      expect(log.slice(3)).toEqual(['event:follower:standby', 'onFollower:standby', 'onLeader', 'event:leader'])
      await ea.stop()
    })

    it('resign in every interleaving with a campaign: callbacks and events stay paired, or none fire', async () => {
      const a = await replica('a')
      const pairs = (log: string[]) => ({
        onLeader: log.filter((l) => l === 'onLeader').length,
        onFollower: log.filter((l) => l.startsWith('onFollower:') && l !== 'onFollower:standby').length,
        leader: log.filter((l) => l === 'event:leader').length,
        follower: log.filter((l) => l.startsWith('event:follower:') && l !== 'event:follower:standby').length,
      })
      const log: string[] = []
      a.on('coordination:leader', () => log.push('event:leader'))
      a.on('coordination:follower', (e) => log.push(`event:follower:${e.reason}`))
      let gate: Promise<void> = Promise.resolve()
      const campaign = () =>
        a.campaign('provider:resign', {
          sitOutMs: 200,
          onLeader: async () => {
            log.push('onLeader')
            await gate
          },
          onFollower: ({ reason }) => void log.push(`onFollower:${reason}`),
        })
      // 0. Stopped right after campaign(): a lead granted meanwhile is given back — nothing fires.
      let e = campaign()
      await e.stop()
      expect(log).toEqual([])
      // 1. Resigned right after campaign(): the lead, if granted, is given back unserved — nothing fires.
      e = campaign()
      await e.resign()
      expect(e.isLeader).toBe(false)
      expect((await h.lead('provider:resign')).holder).toBeNull()
      expect(log).toEqual([])
      await e.stop()
      // 2. While the attempt is in flight (the coordinator asks Redis): the same.
      e = campaign()
      await Promise.resolve()
      await Promise.resolve()
      await e.resign()
      expect(pairs(log)).toEqual({ onLeader: 0, onFollower: 0, leader: 0, follower: 0 })
      await e.stop()
      // 3. During onLeader: it completes, is announced, then steps down — all paired.
      let open!: () => void
      gate = new Promise<void>((resolve) => (open = resolve))
      e = campaign()
      await until(() => log.includes('onLeader'), 5000, 'onLeader to start')
      const resigned = e.resign()
      open()
      await resigned
      expect(log).toEqual(['onLeader', 'event:leader', 'event:follower:resign', 'onFollower:resign'])
      // 4. It stands again after sitting out, leads (paired again), and resigns while serving.
      gate = Promise.resolve()
      await e.ready
      await e.resign()
      expect(pairs(log)).toEqual({ onLeader: 2, onFollower: 2, leader: 2, follower: 2 })
      await e.stop()
      expect(pairs(log)).toEqual({ onLeader: 2, onFollower: 2, leader: 2, follower: 2 })
    })

    it('one leader at every moment through repeated yields', async () => {
      const rs = await Promise.all(['a', 'b', 'c'].map((id) => stand(id, { sitOutMs: 200 })))
      await until(() => leaderOf(rs).length === 1)
      let maxLeaders = 0
      const sampler = setInterval(() => {
        maxLeaders = Math.max(maxLeaders, leaderOf(rs).length)
      }, 2)
      const fences: number[] = []
      try {
        for (let i = 0; i < 4; i++) {
          const leader = leaderOf(rs)[0]!
          fences.push(leader.e.fence!)
          await h.requestYield('provider:wa')
          await until(() => leaderOf(rs).length === 1 && leaderOf(rs)[0] !== leader, 3000, 'next leader')
        }
        fences.push(leaderOf(rs)[0]!.e.fence!)
      } finally {
        clearInterval(sampler)
      }
      expect(maxLeaders).toBe(1)
      expect(doubleLeaders).toBe(0)
      for (let i = 1; i < fences.length; i++) expect(fences[i]!).toBeGreaterThan(fences[i - 1]!)
      const reasons: FollowerReason[] = rs.flatMap((r) => r.log.filter((l) => l === 'follower:yield')) as never
      expect(reasons).toHaveLength(4)
    })
  })
}
