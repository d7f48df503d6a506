import { afterAll, beforeAll } from 'vitest'
import { defineTurnContract } from '../contract/turns.contract.js'
import { KeyLayout, RedisCoordinator, connect } from '../../src/index.js'
import { pushSpy } from '../helpers/push-spy.js'
import { startCluster, uniquePrefix, type ClusterProc } from '../helpers/redis.js'
import { queueView } from '../helpers/shared-state.js'

// A private 3-master cluster for this file: the outage test freezes all of its nodes.
let cluster: ClusterProc
let reader: ReturnType<typeof connect>
let prefix = uniquePrefix('turns')

beforeAll(async () => {
  cluster = await startCluster()
  reader = connect({ url: cluster.url, layout: 'cluster' })
})
afterAll(async () => {
  reader?.disconnect()
  await cluster?.stop()
})

defineTurnContract({
  name: 'redis cluster',
  make: (options) => new RedisCoordinator({ url: cluster.url, prefix, layout: 'cluster', ...options }),
  reset: () => {
    prefix = uniquePrefix('turns')
  },
  outage: async () => {
    for (const n of cluster.nodes) n.kill('SIGSTOP')
    return {
      restore: async () => {
        for (const n of cluster.nodes) n.kill('SIGCONT')
      },
    }
  },
  childTarget: () => ({ url: cluster.url, prefix, layout: 'cluster' }),
  // A proxy in front of one node would not be followed by the cluster's redirections.
  linked: () => null,
  pushesTo: (coordinator) =>
    pushSpy(
      cluster.nodes.map((n) => n.url),
      new KeyLayout(prefix, 'cluster'),
      coordinator,
    ),
  queue: (key) => queueView({ redis: reader, keys: new KeyLayout(prefix, 'cluster') }, key),
})
