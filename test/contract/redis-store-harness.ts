/** The store contract's harness on RedisStore (standalone or cluster): raw clients for what it reads. */
import { Cluster, Redis } from 'ioredis'
import { RedisStore, StateReader, type Layout } from '../../src/index.js'
import { hostPort, uniquePrefix } from '../helpers/redis.js'
import { queueView } from '../helpers/shared-state.js'
import type { AnyStore, StoreHarness } from './store.contract.js'

/** `outage`: how to make the store's Redis unreachable (a private server stopped), or none (a shared one). */
export function redisStoreHarness(
  name: string,
  url: () => string,
  layout: Layout,
  outage: () => Promise<{ restore(): Promise<void> }> | null = () => null,
): StoreHarness {
  const redisOf = (s: AnyStore): RedisStore => {
    if (!(s instanceof RedisStore)) throw new Error('not a RedisStore')
    return s
  }
  const clients = new Map<RedisStore, Redis | Cluster>()
  const client = (s: AnyStore) => {
    const r = redisOf(s)
    let c = clients.get(r)
    if (!c) {
      c = layout === 'cluster' ? new Cluster([hostPort(url())]) : new Redis(url())
      clients.set(r, c)
      const close = r.close.bind(r)
      r.close = async () => {
        clients.delete(r)
        await c!.quit().catch(() => {})
        await close()
      }
    }
    return c
  }
  return {
    name,
    store: ({ sameAs, ...options }) =>
      new RedisStore({ url: url(), prefix: sameAs ? redisOf(sameAs).keys.prefix : uniquePrefix('store'), layout, ...options }),
    lockOwner: async (s, key) => (await client(s).hget(redisOf(s).keys.lock(key), 'o')) ?? null,
    expireCheckpointIn: async (s, key, ms) => void (await client(s).pexpire(redisOf(s).keys.chat(key).checkpoint, ms)),
    markerTtl: async (s, key) => {
      const ms = await client(s).pttl(redisOf(s).keys.chat(key).handover)
      return ms >= 0 ? ms : null
    },
    queue: (s, key) => queueView(redisOf(s), key),
    now: (s) => new StateReader(redisOf(s).redis, redisOf(s).keys).now(),
    leadHolder: async (s, name) => {
      const h = (await new StateReader(redisOf(s).redis, redisOf(s).keys).lead(name))?.holder
      return h ? { replicaId: h.replicaId, incarnation: h.incarnation } : null
    },
    liveIncarnation: async (s, replicaId) =>
      (await new StateReader(redisOf(s).redis, redisOf(s).keys).replica(replicaId))?.incarnation ?? null,
    outage,
    raw: (s) => ({ client: client(s), keys: redisOf(s).keys }),
  }
}
