/**
 * Found by the fault campaign (chaos/, fault `renew-latency`): a replica whose round trip to Redis
 * is above commandTimeoutMs (default leaseMs / 3) but well below leaseMs blocks every chat it asks
 * for. Its take-ticket and poll calls time out on the client, yet Redis runs them: the turn is granted
 * to it and each later (timed-out) poll extends that grant, so Redis keeps the chat held by a replica
 * that never learns it holds it, until that replica's acquireTurn gives up (waitMs: turnWaitMs,
 * 2 min by default). Healthy replicas wait all that time.
 *
 * Expected: a replica that cannot confirm a grant is, for everybody else, like a dead one — its
 * claim on the chat lapses within about leaseMs.
 *
 * Checked as an order, not with a stopwatch: the healthy replica gets the chat while the slow one is
 * still waiting for it (before the fix, only once the slow replica gave up).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { RedisCoordinator } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { queueView } from '../helpers/shared-state.js'
import { until } from '../helpers/wait.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

interface DelayProxy {
  port: number
  /** Added to every chunk, each way (in order). */
  delayMs: number
  close(): Promise<void>
}

/** A TCP proxy that delays every chunk by `delayMs` each way (in order). */
async function delayProxy(upstreamPort: number): Promise<DelayProxy> {
  const sockets = new Set<Socket>()
  const state = { delayMs: 0 }
  const pipe = (from: Socket, to: Socket) => {
    let last = 0
    from.on('data', (b) => {
      const at = Math.max(performance.now() + state.delayMs, last)
      last = at
      setTimeout(() => to.destroyed || to.write(b), at - performance.now())
    })
  }
  const server: Server = createServer((down) => {
    const up = connect({ port: upstreamPort, host: '127.0.0.1' })
    sockets.add(down).add(up)
    const close = () => {
      down.destroy()
      up.destroy()
    }
    down.on('error', close).on('close', close)
    up.on('error', close).on('close', close)
    pipe(down, up)
    pipe(up, down)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return {
    port: (server.address() as { port: number }).port,
    get delayMs() {
      return state.delayMs
    },
    set delayMs(ms: number) {
      state.delayMs = ms
    },
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

describe('a slow replica (found by the fault campaign)', () => {
  it('does not keep a chat from healthy replicas for longer than about leaseMs', async () => {
    const leaseMs = 1500 // commandTimeoutMs = 500 ms
    const prefix = uniquePrefix('slow')
    const upstream = Number(new URL(redisUrl()).port)
    const proxy = await delayProxy(upstream)
    cleanup.push(() => proxy.close())
    const slow = new RedisCoordinator({ url: `redis://127.0.0.1:${proxy.port}`, prefix, replicaId: 'slow', leaseMs })
    const healthy = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'healthy', leaseMs })
    cleanup.push(() => healthy.stop())
    cleanup.push(() => slow.stop())
    await Promise.all([slow.start(), healthy.start()])
    proxy.delayMs = 0.2 * leaseMs // the slow replica's network degrades: round trip 0.4 × leaseMs = 600 ms

    // load the scripts into Redis's cache first, so the slow replica's first call is one round trip
    await (await healthy.acquireTurn('chat:warm')).release()
    let slowSettled = false
    const slowWait = slow
      .acquireTurn('chat:1', { waitMs: 12_000 })
      .then(
        (t) => t.release(),
        () => undefined,
      )
      .finally(() => (slowSettled = true))
    // the slow replica's take has reached Redis (one way: 300 ms): it holds the chat, without knowing
    await until(async () => (await queueView(healthy, 'chat:1')).holder === 'slow', 5000, 'the slow replica holding chat:1 in Redis')
    const turn = await healthy.acquireTurn('chat:1', { waitMs: 15_000 })
    expect(slowSettled, 'the healthy replica got the chat only once the slow one gave up').toBe(false)
    await turn.release()
    await slowWait
  }, 40_000)
})
