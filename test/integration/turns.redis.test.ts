import { afterAll, beforeAll } from 'vitest'
import { defineTurnContract } from '../contract/turns.contract.js'
import { KeyLayout, RedisCoordinator, connect } from '../../src/index.js'
import { startRedis, uniquePrefix, type RedisProc } from '../helpers/redis.js'
import { queueView } from '../helpers/shared-state.js'

// A private redis-server for this file: the outage test freezes it.
let server: RedisProc
let reader: ReturnType<typeof connect>
let prefix = uniquePrefix('turns')

beforeAll(async () => {
  server = await startRedis()
  reader = connect({ url: server.url, layout: 'standalone' })
})
afterAll(async () => {
  reader?.disconnect()
  await server?.stop()
})

defineTurnContract({
  name: 'redis standalone',
  make: (options) => new RedisCoordinator({ url: server.url, prefix, layout: 'standalone', ...options }),
  reset: () => {
    prefix = uniquePrefix('turns')
  },
  outage: async () => {
    server.kill('SIGSTOP')
    return { restore: async () => server.kill('SIGCONT') }
  },
  childTarget: () => ({ url: server.url, prefix, layout: 'standalone' }),
  queue: (key) => queueView({ redis: reader, keys: new KeyLayout(prefix, 'standalone') }, key),
})
