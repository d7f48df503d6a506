import { afterAll, beforeAll } from 'vitest'
import { defineTurnContract } from '../contract/turns.contract.js'
import { KeyLayout, RedisCoordinator, connect } from '../../src/index.js'
import { pushSpy } from '../helpers/push-spy.js'
import { startRedis, uniquePrefix, type RedisProc } from '../helpers/redis.js'
import { queueView } from '../helpers/shared-state.js'
import { until } from '../helpers/wait.js'
import { ChaosProxy } from '../../chaos/proxy.mjs'

// A private redis-server for this file: the outage test freezes it.
let server: RedisProc
let reader: ReturnType<typeof connect>
let prefix = uniquePrefix('turns')
const proxies: ChaosProxy[] = []

beforeAll(async () => {
  server = await startRedis()
  reader = connect({ url: server.url, layout: 'standalone' })
})
afterAll(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()))
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
  linked: async (options) => {
    const proxy = await new ChaosProxy(server.port).listen()
    proxies.push(proxy)
    const coordinator = new RedisCoordinator({ url: `redis://127.0.0.1:${proxy.port}`, prefix, layout: 'standalone', ...options })
    const cut = async () => {
      proxy.cut()
      // Commands sent before the client saw the close would be sent again on reconnect.
      await until(() => coordinator.redis.status !== 'ready', 5000, 'the client to see its link cut')
    }
    return { coordinator, cut, loseReplies: () => proxy.eatReplies(), restore: () => proxy.restore() }
  },
  pushesTo: (coordinator) => pushSpy([server.url], new KeyLayout(prefix, 'standalone'), coordinator),
  queue: (key) => queueView({ redis: reader, keys: new KeyLayout(prefix, 'standalone') }, key),
})
