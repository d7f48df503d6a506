// The four ways of taking a chat's turn that the benchmark compares. Each adapter: setup(), then
// acquire(chatKey) → { fence, release() }, then close(). One Redis connection per replica process
// for every adapter (botmesh-coord adds its pub/sub connection).
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'

export const ADAPTERS = ['botmesh', 'redlock', 'semaphore', 'naive']

export const ADAPTER_LABELS = {
  botmesh: 'botmesh-coord turns',
  redlock: 'redlock 5 (1 instance)',
  semaphore: 'redis-semaphore Mutex',
  naive: 'SET NX PX + poll',
}

function client(url) {
  const c = new Redis(url, { maxRetriesPerRequest: 2 })
  c.on('error', () => {})
  return c
}

/** o: { url, prefix, replica, leaseMs, peerTtlMs, retryMs, waitMs } */
export async function createAdapter(name, o) {
  switch (name) {
    case 'botmesh': {
      const { RedisCoordinator } = await import('../../dist/src/index.js')
      const coordinator = new RedisCoordinator({
        url: o.url,
        prefix: o.prefix,
        leaseMs: o.leaseMs,
        replicaId: `bench-${o.replica}`,
        turnWaitMs: o.waitMs,
      })
      coordinator.on('coordination:warning', () => {})
      await coordinator.start()
      return {
        async acquire(key) {
          const turn = await coordinator.acquireTurn(key)
          return { fence: turn.fence, release: () => turn.release() }
        },
        close: () => coordinator.stop(),
      }
    }
    case 'redlock': {
      const { default: Redlock } = await import('redlock')
      const redis = client(o.url)
      const redlock = new Redlock([redis], {
        driftFactor: 0.01,
        retryCount: Math.ceil(o.waitMs / o.retryMs),
        retryDelay: o.retryMs,
        retryJitter: Math.floor(o.retryMs / 2),
        automaticExtensionThreshold: 500,
      })
      redlock.on('error', () => {}) // ResourceLockedError on every failed attempt
      return {
        async acquire(key) {
          const lock = await redlock.acquire([`${o.prefix}:lock:${key}`], o.peerTtlMs)
          return { fence: 0, release: () => lock.release() }
        },
        close: () => redis.quit(),
      }
    }
    case 'semaphore': {
      const { Mutex } = await import('redis-semaphore')
      const redis = client(o.url)
      return {
        async acquire(key) {
          const mutex = new Mutex(redis, `${o.prefix}:lock:${key}`, {
            lockTimeout: o.peerTtlMs,
            acquireTimeout: o.waitMs,
            retryInterval: o.retryMs,
            onLockLost: () => {},
          })
          await mutex.acquire()
          return { fence: 0, release: () => mutex.release() }
        },
        close: () => redis.quit(),
      }
    }
    case 'naive': {
      const redis = client(o.url)
      redis.defineCommand('compareAndDelete', {
        numberOfKeys: 1,
        lua: "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
      })
      const jitter = Math.floor(o.retryMs / 2)
      return {
        async acquire(key) {
          const k = `${o.prefix}:lock:${key}`
          const token = randomBytes(12).toString('hex')
          const giveUp = Date.now() + o.waitMs
          for (;;) {
            if ((await redis.set(k, token, 'PX', o.peerTtlMs, 'NX')) === 'OK') {
              return { fence: 0, release: () => redis.compareAndDelete(k, token) }
            }
            if (Date.now() > giveUp) throw new Error(`no lock for ${key}`)
            await sleep(o.retryMs + Math.floor((Math.random() * 2 - 1) * jitter))
          }
        },
        close: () => redis.quit(),
      }
    }
    default:
      throw new Error(`unknown adapter ${name}`)
  }
}
