/**
 * A command whose reply a dropped connection lost is sent again by the client once it reconnects
 * (ioredis `autoResendUnfulfilledCommands`): Redis runs it twice, and the caller hears the second
 * run. A release run again answers "not held" although the first run released; a take run again
 * finds nothing although the first run took the marker; an operator's conditioned write run again
 * answers "changed" although the first run did it; a lease acquisition run again answers "held".
 * Each script says once what its replies mean after a drop (ScriptDef.resent, applied by the script
 * runner): the state the caller asked for when that is all a second run can mean, the grant itself
 * when the script knows its own earlier run, and an unknown outcome (CoordinationUnavailableError)
 * when it cannot be told — never a refusal of what took effect.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { CoordinationAdmin, CoordinationUnavailableError, OutcomeUnknownError } from '../../src/index.js'
import { until } from '../helpers/wait.js'
import { settle, storesBehindReplyEater } from '../helpers/resent.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

async function setup(name: string) {
  const { proxy, store, other, url, prefix } = await storesBehindReplyEater(name, cleanup)
  /**
   * Run `call` with its reply eaten until `tookEffect` sees it done in Redis, then drop the
   * connection: the client sends it again, and the call settles with the second run's reply.
   */
  const resent = async <T>(call: () => Promise<T>, tookEffect: () => Promise<boolean>, what: string) => {
    proxy.eatReplies(true)
    const outcome = settle(call())
    await until(tookEffect, 5000, what)
    proxy.eatReplies(false)
    proxy.dropAll()
    return outcome
  }
  return { proxy, store, other, url, prefix, resent }
}

describe('a command run twice by a client that lost its reply', () => {
  it('a lock release that released answers true', async () => {
    const { store, other, resent } = await setup('resent-lock-release')
    const lock = (await store.acquireLockFenced('job:1', 30_000))!
    expect(await store.releaseLock('job:0', 'nobody')).toBe(false) // the script is cached: no NOSCRIPT round trip
    let next: Awaited<ReturnType<typeof other.acquireLockFenced>> = null
    const outcome = await resent(
      () => store.releaseLock('job:1', lock.token),
      async () => (next = await other.acquireLockFenced('job:1', 30_000)) !== null,
      'the release taking effect (another owner takes the lock)',
    )
    expect(outcome).toEqual({ value: true })
    expect(next!.fence).toBeGreaterThan(lock.fence)
  }, 20_000)

  it('a lock acquisition that took the lock answers its fence', async () => {
    const { store, other, resent } = await setup('resent-lock-acquire')
    await store.acquireLockFenced('job:0', 1000)
    const outcome = await resent(
      () => store.acquireLockFenced('job:1', 30_000),
      async () => (await other.redis.hget(other.keys.lock('job:1'), 'tk')) !== null,
      'the acquisition taking effect (the lock held)',
    )
    expect('value' in outcome && outcome.value?.fence).toBeGreaterThan(0)
  }, 20_000)

  it("a scheduler lease acquisition that took the lease answers it (it is this backend's, not another's)", async () => {
    const { store, other, resent } = await setup('resent-lease-acquire')
    const leases = store.leases()
    expect(await leases.acquire('nightly:0', 1000)).not.toBeNull()
    const outcome = await resent(
      () => leases.acquire('nightly', 30_000),
      async () => (await other.redis.hget(other.keys.lead('nightly'), 'hi')) === leases.incarnation,
      'the acquisition taking effect (the lease held)',
    )
    expect('value' in outcome && outcome.value).toMatchObject({ name: 'nightly', fence: expect.any(Number) })
    // …and asked again while it holds it, the answer is still null: one holder, once
    expect(await leases.acquire('nightly', 30_000)).toBeNull()
  }, 20_000)

  it('a scheduler lease release that released answers true', async () => {
    const { store, other, resent } = await setup('resent-lease-release')
    const leases = store.leases()
    const lease = (await leases.acquire('nightly', 30_000))!
    expect(await leases.release('nightly:0', 1)).toBe(false)
    const outcome = await resent(
      () => leases.release('nightly', lease.fence),
      async () => (await other.leases().acquire('nightly', 30_000)) !== null,
      'the release taking effect (another backend takes the lease)',
    )
    expect(outcome).toEqual({ value: true })
  }, 20_000)

  it('a handover marker cleared by its writer answers true', async () => {
    const { store, other, resent } = await setup('resent-handover-clear')
    const marker = { name: 'survey', replicaId: 'r1', incarnation: 'inc-1' }
    await store.setHandoverMarker('chat:1', marker)
    expect(await store.clearHandoverMarker('chat:0', { incarnation: 'inc-1' })).toBe(false)
    const outcome = await resent(
      () => store.clearHandoverMarker('chat:1', { incarnation: 'inc-1' }),
      async () => (await other.getHandoverMarker('chat:1')) === null,
      'the clear taking effect',
    )
    expect(outcome).toEqual({ value: true })
  }, 20_000)

  it('a handover marker taken is not reported as absent: the outcome is unknown', async () => {
    const { store, other, resent } = await setup('resent-handover-take')
    await store.setHandoverMarker('chat:1', { name: 'survey', replicaId: 'r1', incarnation: 'inc-1' })
    expect(await store.takeHandoverMarker('chat:0')).toBeNull()
    const outcome = await resent(
      () => store.takeHandoverMarker('chat:1'),
      async () => (await other.getHandoverMarker('chat:1')) === null,
      'the take taking effect',
    )
    if ('value' in outcome) expect.fail(`the marker was taken but the take answered ${JSON.stringify(outcome.value)}`)
    expect(outcome.err).toBeInstanceOf(CoordinationUnavailableError)
  }, 20_000)

  it("an operator's conditioned lock release that released is not reported as 'not held': the outcome is unknown", async () => {
    const { store, other, url, prefix, resent } = await setup('resent-admin-lock')
    const admin = new CoordinationAdmin({ url, prefix })
    cleanup.push(() => admin.close())
    const lock = (await other.acquireLockFenced('job:1', 30_000))!
    expect((await admin.releaseLock('job:0')).status).toBe('not-held')
    const outcome = await resent(
      () => admin.releaseLock('job:1', { ifFence: lock.fence }),
      async () => (await other.renewLock('job:1', lock.token, 30_000)) === false,
      'the forced release taking effect',
    )
    if ('value' in outcome) expect.fail(`the lock was released but the release answered ${outcome.value.status}`)
    // An intervention whose answer was lost: OutcomeUnknownError, saying how to learn what happened.
    expect(outcome.err).toBeInstanceOf(OutcomeUnknownError)
    expect((outcome.err as OutcomeUnknownError).check).toMatch(/job:1/)
    void store
  }, 20_000)

  it('a refusal on a connection that stayed up is still a refusal', async () => {
    const { store, other } = await setup('resent-control')
    const lock = (await other.acquireLockFenced('job:1', 30_000))!
    expect(await store.releaseLock('job:1', 'not-the-token')).toBe(false)
    expect(await store.acquireLockFenced('job:1', 30_000)).toBeNull()
    expect(await store.leases().release('nightly', 1)).toBe(false)
    expect(await store.clearHandoverMarker('chat:1', { incarnation: 'inc-1' })).toBe(false)
    expect(await store.takeHandoverMarker('chat:1')).toBeNull()
    expect(lock.fence).toBeGreaterThan(0)
  }, 20_000)
})
