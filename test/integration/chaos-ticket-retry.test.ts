/**
 * Found by the fault campaign (chaos/, faults `cluster-master-restart` and `net-cut`): while Redis
 * is unreachable, each waiting acquireTurn retries on its own backoff timer.
 *
 * 1. FIFO (failed on 6621512 — granted [0, 4, 7, 5, 1, 2, 6, 3] — fixed by d864e5e): messages that
 *    reached one replica for one chat while the chat's Redis node was down were granted in whatever
 *    order their independent retries reached Redis again, not in arrival order. Reproduced on a
 *    Redis Cluster whose master for the chat's slot restarts: the cluster client rejects the calls
 *    while the node is down. (On a standalone Redis the client's
 *    offline queue often keeps the order; calls in flight when a connection drops are retried one by
 *    one, and the campaign sees the same inversions under `net-cut`.)
 * 2. Ghost tickets (a regression test; fixed by idempotent ticket taking, commit b7df2e6): a
 *    take-ticket call that timed out on the client still runs in Redis later; without a request id
 *    the ticket it took belongs to nobody who polls it, and the chat is held by nobody for leaseMs.
 *    Checked on the state: the retried take-ticket found its first ticket — one ticket was ever issued.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { RedisCoordinator, StateReader } from '../../src/index.js'
import { startCluster, startCoordinator, startRedis, uniquePrefix } from '../helpers/redis.js'
import { sleep } from '../helpers/wait.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

describe('acquireTurn across a Redis outage (found by the fault campaign)', () => {
  it("grants one replica's messages for a chat in arrival order after its cluster master restarts", async () => {
    const cluster = await startCluster()
    cleanup.push(() => cluster.stop())
    const prefix = uniquePrefix('fifo')
    const c = await startCoordinator(() => new RedisCoordinator({ url: cluster.url, prefix, layout: 'cluster', leaseMs: 1500 }))
    cleanup.push(() => c.stop())
    const chat = 'chat:1'
    const stateKey = c.keys.chat(chat).state
    // the master that owns the chat's slot
    const probe = new Redis(cluster.url)
    const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', stateKey))
    const slots = (await probe.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>
    probe.disconnect()
    const port = slots.find(([from, to]) => slot >= from && slot <= to)![2][1]
    const node = cluster.nodes.find((n) => n.port === port)!
    await node.kill('SIGKILL') // the chat's master is gone (resolves once it exited): calls for its slot fail and are retried
    const granted: number[] = []
    const waits: Array<Promise<void>> = []
    for (let i = 0; i < 8; i++) {
      waits.push(
        c.acquireTurn(chat, { waitMs: 25_000 }).then(async (turn) => {
          granted.push(i)
          await turn.release()
        }),
      )
      await sleep(70) // the fault's shape: messages keep arriving during the outage, each retrying on its own timer
    }
    await node.restart() // the same node comes back (same port, same nodes.conf, data gone)
    await Promise.all(waits)
    expect(granted).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
  }, 60_000)

  it('a take-ticket that timed out on the client does not leave the chat held by nobody', async () => {
    const server = await startRedis()
    cleanup.push(() => server.stop())
    const leaseMs = 3000 // commandTimeoutMs defaults to leaseMs / 3 = 1 s
    const c = new RedisCoordinator({ url: server.url, prefix: uniquePrefix('ghost'), leaseMs })
    cleanup.push(() => c.stop())
    await c.start()

    server.kill('SIGSTOP') // Redis stalls (a long fork, a slow disk, a GC-like pause of the server)
    const waiting = c.acquireTurn('chat:1', { waitMs: 20_000 })
    await sleep(1300) // the fault's length is the subject: the first take-ticket times out on the client (1 s) and is retried
    server.kill('SIGCONT') // Redis runs every buffered call: the timed-out take too
    const turn = await waiting
    // Nobody else wants the chat: the retry found the ticket its timed-out first call took, so no
    // ghost ticket (nobody's, holding the chat a lease) was ever issued.
    const chat = (await new StateReader(c.redis, c.keys).chat('chat:1')).chat!
    expect({ ticket: turn.ticket, lastTicket: chat.lastTicket, skipped: chat.skippedTickets }).toEqual({
      ticket: 1,
      lastTicket: 1,
      skipped: 0,
    })
    await turn.release()
  }, 40_000)
})
