import { afterAll, beforeAll } from 'vitest'
import { defineStoreContract } from '../contract/store.contract.js'
import { redisStoreHarness } from '../contract/redis-store-harness.js'
import { startRedis, type RedisProc } from '../helpers/redis.js'

// A private redis-server for this file: the outage test freezes it.
let server: RedisProc
beforeAll(async () => {
  server = await startRedis()
})
afterAll(async () => {
  await server?.stop()
})

defineStoreContract(
  redisStoreHarness(
    'redis standalone',
    () => server.url,
    'standalone',
    async () => {
      server.kill('SIGSTOP')
      return { restore: async () => void server.kill('SIGCONT') }
    },
  ),
)
