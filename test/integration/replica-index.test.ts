/**
 * The replica index is shared by replicas with different lease lengths: a beat never shortens its
 * expiry, so a short-lease replica's last beat does not make a long-lease replica vanish with the key.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { RedisCoordinator, connect, type Coordinator } from '../../src/index.js'
import { clusterUrl, redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { sleep } from '../helpers/wait.js'

const layouts = [
  { layout: 'standalone' as const, url: redisUrl },
  { layout: 'cluster' as const, url: clusterUrl },
]

describe.each(layouts)('the replica index with mixed lease lengths ($layout)', ({ layout, url }) => {
  const started: Coordinator[] = []
  const reader = connect({ url: url(), layout })
  afterAll(async () => {
    await Promise.allSettled(started.map((c) => c.stop()))
    reader.disconnect()
  })

  it("keeps a long-lease replica listed after a short-lease replica's last beat", async () => {
    const prefix = uniquePrefix('index')
    const make = (replicaId: string, leaseMs: number) =>
      startCoordinator(() => new RedisCoordinator({ url: url(), prefix, layout, replicaId, leaseMs }))
    const long = await make('long', 60_000) // beats every 20 s: once, at start, in this test
    started.push(long)
    const short = await make('short', 600)
    started.push(short)
    await sleep(300) // short beats again (every 200 ms), each time with its own 2 × 600 ms
    short.crash() // its last beat is the index's last write
    await sleep(1600) // past that beat's 2 × leaseMs: the old index expiry would have dropped the key
    const index = long.keys.replicaIndex
    expect(await reader.zscore(index, 'long')).not.toBeNull()
    expect(await reader.pttl(index)).toBeGreaterThan(60_000)
  })
})
