/**
 * A lossy failover, made deterministic: a primary and a standby (REPLICAOF), coordinators that reach
 * Redis through one TCP proxy (the address a managed service gives). The replication link is cut
 * (REPLICAOF NO ONE on the standby) after what must survive has reached the standby, writes go on at
 * the primary, then the proxy is pointed at the standby and the primary killed: the new master lacks
 * the last writes. Each test here fails without the fix it names.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { CoordinationUnavailableError, RedisCoordinator, type LeaseLostError } from '../../src/index.js'
import { startRedis, withClient, type RedisProc } from '../../scripts/redis-procs.mjs'
import { ChaosProxy } from '../../chaos/proxy.mjs'
import { startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { sleep, until } from '../helpers/wait.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

interface LossyPair {
  primary: RedisProc
  standby: RedisProc
  url: string
  /** Wait until the standby has everything written so far (WAIT 1). */
  synced(): Promise<void>
  /** Stop replicating: the standby keeps what it has, the primary goes on alone. */
  cutReplication(): Promise<void>
  /** The proxy now leads to the standby (connections dropped); the primary dies. */
  failover(): Promise<void>
}

async function lossyPair(): Promise<LossyPair> {
  const repl = ['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0']
  const primary = await startRedis({ args: repl })
  cleanup.push(() => primary.stop())
  const standby = await startRedis({ args: [...repl, '--replicaof', '127.0.0.1', String(primary.port)] })
  cleanup.push(() => standby.stop())
  await until(
    () => withClient(standby.port, async (c) => /master_link_status:up/.test(await c.info('replication'))),
    10_000,
    'the standby in sync',
  )
  const proxy = await new ChaosProxy(primary.port).listen()
  cleanup.push(() => proxy.close())
  return {
    primary,
    standby,
    url: `redis://127.0.0.1:${proxy.port}`,
    synced: () =>
      until(() => withClient(primary.port, async (c) => Number(await c.call('WAIT', '1', '1000')) >= 1), 10_000, 'WAIT 1').then(
        () => undefined,
      ),
    cutReplication: () => withClient(standby.port, (c) => c.call('REPLICAOF', 'NO', 'ONE')).then(() => undefined),
    failover: async () => {
      proxy.switchUpstream(standby.port)
      await primary.kill('SIGKILL')
    },
  }
}

/** The chat's holder incarnation as `server` has it ('' when free). */
const holderOn = (server: RedisProc, prefix: string, chat: string) =>
  withClient(server.port, async (c: Redis) => (await c.hget(`${prefix}:c:${chat}`, 'hi')) ?? '')

async function coordinator(url: string, prefix: string, replicaId: string, leaseMs: number, maxPollMs?: number): Promise<RedisCoordinator> {
  const c = await startCoordinator(() => new RedisCoordinator({ url, prefix, replicaId, leaseMs, maxPollMs }))
  cleanup.push(() => c.stop())
  return c
}

describe('after a reconnect', () => {
  it('a heartbeat carries the wall clock of its sending, not of its wait for the connection (no clock skew reported)', async () => {
    const server = await startRedis()
    cleanup.push(() => server.stop())
    const proxy = await new ChaosProxy(server.port).listen()
    cleanup.push(() => proxy.close())
    const prefix = uniquePrefix('skew')
    const a = await coordinator(`redis://127.0.0.1:${proxy.port}`, prefix, 'a', 15_000)
    proxy.cut()
    proxy.stall() // the client reconnects, but its handshake hangs: commands wait for it
    const held = () => (proxy as unknown as { pairs: Set<unknown> }).pairs.size
    await until(() => held() > 0, 10_000, 'the client reconnecting into the stalled proxy')
    const renewing = a.renewNow()
    await sleep(1500) // time is the subject: the heartbeat waits this long for the connection
    proxy.restore()
    await renewing
    const record = await withClient(server.port, (c: Redis) => c.hmget(`${prefix}:r:a`, 'beat', 'cw'))
    const skew = Number(record[0]) - Number(record[1])
    expect(Math.abs(skew)).toBeLessThan(1000)
  })
})

describe('a lossy failover', () => {
  it('a release lost with the old master is sent again to the new one: the chat is free at once, not a lease later', async () => {
    const pair = await lossyPair()
    const prefix = uniquePrefix('lost-rel')
    // Leases far longer than the test: without the resend, the chat stays blocked by a's lease.
    const a = await coordinator(pair.url, prefix, 'a', 120_000)
    const b = await coordinator(pair.url, prefix, 'b', 120_000)
    const warnings: string[] = []
    a.on('coordination:warning', (w) => w.code === 'server-changed' && warnings.push(w.message))
    const t = await a.acquireTurn('chat:1')
    await pair.synced() // the grant reached the standby
    expect(await holderOn(pair.standby, prefix, 'chat:1')).toBe(a.incarnation)
    await pair.cutReplication()
    await t.release() // on the primary only
    await pair.failover()
    await until(() => warnings.length > 0, 20_000, "a's server-changed warning")
    expect(warnings[0]).toMatch(/1 recent release\(s\) sent again/)
    await until(
      async () => (await holderOn(pair.standby, prefix, 'chat:1')) !== a.incarnation,
      10_000,
      'the release sent again to the new master',
    )
    const next = await b.acquireTurn('chat:1', { waitMs: 30_000 })
    expect(next.fence).toBeGreaterThan(t.fence)
    await next.release()
  })

  it("a turn the new master does not know is dropped as soon as the client reconnects, not at the holder's next renewal", async () => {
    const pair = await lossyPair()
    const prefix = uniquePrefix('dbl')
    // Renewals every 200 s: only the check on reconnect can drop the lease within the test.
    const a = await coordinator(pair.url, prefix, 'a', 600_000)
    const lost: Array<LeaseLostError['reason']> = []
    a.on('coordination:lease-lost', (e) => lost.push(e.reason))
    await pair.synced()
    await pair.cutReplication()
    const t = await a.acquireTurn('chat:2') // granted by the primary alone
    await pair.failover()
    await until(() => t.signal.aborted, 20_000, "a's turn to be dropped after the reconnect")
    expect(lost).toEqual(['reset'])
    expect(() => t.assertHeld()).toThrow(expect.objectContaining({ reason: 'reset' }))
  })

  it('a wait whose ticket the failover lost queues again and is granted, instead of failing as dropped', async () => {
    const pair = await lossyPair()
    const prefix = uniquePrefix('requeue')
    const a = await coordinator(pair.url, prefix, 'a', 120_000)
    const b = await coordinator(pair.url, prefix, 'b', 120_000)
    const held = await a.acquireTurn('chat:3')
    await pair.synced()
    await pair.cutReplication()
    const waiting = b.acquireTurn('chat:3', { waitMs: 60_000 })
    // b's ticket is queued on the primary only.
    await until(
      () => withClient(pair.primary.port, async (c) => (await c.zcard(`${prefix}:q:chat:3`)) === 1),
      10_000,
      "b's ticket on the primary",
    )
    await pair.failover()
    // a's turn goes (server changed) and its release reaches the new master; b queues again there.
    const turn = await waiting.catch((e: unknown) => e)
    expect(turn, String(turn instanceof CoordinationUnavailableError ? turn.reason : turn)).not.toBeInstanceOf(Error)
    expect(held.signal.aborted).toBe(true)
  })

  /**
   * One replica's messages for a chat keep their arrival order across a lossy failover (found by the
   * fault campaign: block-0.9 + kill-holding + failover-lossy). b polls only every 10 s here, so
   * each wait learns its ticket is gone only when something makes it poll.
   */
  async function queuedOnPrimaryOnly(prefix: string) {
    const pair = await lossyPair()
    const a = await coordinator(pair.url, prefix, 'a', 120_000)
    const b = await coordinator(pair.url, prefix, 'b', 120_000, 10_000)
    const bChanged: string[] = []
    b.on('coordination:warning', (w) => w.code === 'server-changed' && bChanged.push(w.message))
    await a.acquireTurn('chat:4') // held on both servers: the queue waits behind it
    await pair.synced()
    await pair.cutReplication()
    const granted: number[] = []
    const waits: Array<Promise<void>> = []
    const wait = (i: number) =>
      waits.push(
        b.acquireTurn('chat:4', { waitMs: 60_000 }).then(async (turn) => {
          granted.push(i)
          await turn.release()
        }),
      )
    for (let i = 0; i < 3; i++) wait(i)
    await until(
      () => withClient(pair.primary.port, async (c) => (await c.zcard(`${prefix}:q:chat:4`)) === 3),
      10_000,
      "b's three tickets on the primary",
    )
    const [lastTicket] = await withClient(pair.primary.port, (c) => c.zrange(`${prefix}:q:chat:4`, '-1', '-1'))
    return { pair, a, b, bChanged, granted, waits, wait, lastTicket: lastTicket! }
  }

  it('waits whose tickets the failover lost queue again in arrival order, whichever polls first', async () => {
    const prefix = uniquePrefix('fifo-lost')
    const { pair, b, bChanged, granted, waits, lastTicket } = await queuedOnPrimaryOnly(prefix)
    await pair.failover()
    await until(() => bChanged.length > 0, 20_000, "b's server-changed warning")
    // The last message's wait polls first (a push for its ticket, as an operator's skip sends):
    // its ticket is gone, and it must not queue again ahead of the two before it.
    const stateKey = b.keys.chat('chat:4').state
    await until(
      () =>
        withClient(pair.standby.port, async (c) => (await c.publish(b.keys.wakeChannel(b.incarnation), `${lastTicket}|${stateKey}`)) === 1),
      10_000,
      "b's subscriber on the new master",
    )
    await Promise.all(waits)
    expect(granted).toEqual([0, 1, 2])
  })

  it('a message that arrives during or after the failover queues behind the earlier ones it lost', async () => {
    const prefix = uniquePrefix('fifo-new')
    const { pair, bChanged, granted, waits, wait } = await queuedOnPrimaryOnly(prefix)
    await pair.failover()
    wait(3) // its take reaches the new master before b knows the server changed
    await until(() => bChanged.length > 0, 20_000, "b's server-changed warning")
    wait(4) // b knows; the earlier waits have not polled since
    await Promise.all(waits)
    expect(granted).toEqual([0, 1, 2, 3, 4])
  })
})
