/**
 * The exporter's lease counts do not stop at what its bounded read reaches: a replica holding more
 * turns than its heartbeat names (100) is counted whole, from its own count, and the part the scrape
 * did not read one by one is said (botmesh_leases_unread).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCoordinator } from '../../src/index.js'
import { startExporter } from '../helpers/exporter.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

describe('exporter: turns past the heartbeat cap', () => {
  const prefix = uniquePrefix('many')
  let c: RedisCoordinator
  beforeAll(async () => {
    c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-busy', leaseMs: 60_000 })
    await c.start()
    for (let i = 0; i < 250; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => c.acquireTurn(`chat:${i + j}`)))
    await c.renewNow() // a heartbeat that counts all 250
  }, 60_000)
  afterAll(async () => {
    await c?.stop()
  })

  it('counts all 250 held turns, and how many it did not read one by one', async () => {
    const exporter = await startExporter(['--url', redisUrl(), '--prefix', prefix])
    try {
      expect(await exporter.sample('botmesh_leases{kind="chat",state="ok"}')).toBe(250)
      const unread = await exporter.sample('botmesh_leases_unread')
      expect(unread).toBeGreaterThanOrEqual(150) // the heartbeat names 100
      expect(unread).toBeLessThan(250)
    } finally {
      await exporter.stop()
    }
  })
})
