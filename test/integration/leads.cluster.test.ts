import { afterAll } from 'vitest'
import { defineLeadContract } from '../contract/leads.contract.js'
import { CoordinationAdmin, KeyLayout, RedisCoordinator, connect } from '../../src/index.js'
import { clusterUrl, uniquePrefix } from '../helpers/redis.js'
import { leadView } from '../helpers/shared-state.js'

let prefix = uniquePrefix('leads')
const admins: CoordinationAdmin[] = []
let reader: ReturnType<typeof connect> | undefined
afterAll(async () => {
  await Promise.all(admins.map((a) => a.close()))
  reader?.disconnect()
})

defineLeadContract({
  name: 'redis cluster',
  make: (options) => new RedisCoordinator({ url: clusterUrl(), prefix, layout: 'cluster', ...options }),
  reset: () => {
    prefix = uniquePrefix('leads')
  },
  requestYield: async (name, opts = {}) => {
    const admin = new CoordinationAdmin({ url: clusterUrl(), prefix, layout: 'cluster' })
    admins.push(admin)
    return admin.requestYield(name, { by: 'test@operator', target: opts.target, ttlMs: opts.ttlMs, ifFence: opts.ifFence })
  },
  lead: (name) =>
    leadView({ redis: (reader ??= connect({ url: clusterUrl(), layout: 'cluster' })), keys: new KeyLayout(prefix, 'cluster') }, name),
})
