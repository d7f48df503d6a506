import { afterAll } from 'vitest'
import { defineLeadContract } from '../contract/leads.contract.js'
import { CoordinationAdmin, KeyLayout, RedisCoordinator, connect } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { leadView } from '../helpers/shared-state.js'

let prefix = uniquePrefix('leads')
const admins: CoordinationAdmin[] = []
let reader: ReturnType<typeof connect> | undefined
afterAll(async () => {
  await Promise.all(admins.map((a) => a.close()))
  reader?.disconnect()
})

defineLeadContract({
  name: 'redis standalone',
  make: (options) => new RedisCoordinator({ url: redisUrl(), prefix, layout: 'standalone', ...options }),
  reset: () => {
    prefix = uniquePrefix('leads')
  },
  requestYield: async (name, opts = {}) => {
    const admin = new CoordinationAdmin({ url: redisUrl(), prefix, layout: 'standalone' })
    admins.push(admin)
    return admin.requestYield(name, { by: 'test@operator', target: opts.target, ttlMs: opts.ttlMs, ifFence: opts.ifFence })
  },
  lead: (name) =>
    leadView({ redis: (reader ??= connect({ url: redisUrl(), layout: 'standalone' })), keys: new KeyLayout(prefix, 'standalone') }, name),
})
