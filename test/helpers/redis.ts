/**
 * Helpers for tests: the shared Redis / Redis Cluster started by
 * test/setup/global-setup.ts, private servers from the one launcher (scripts/redis-procs.mjs, shared
 * with the benchmark, the fault campaign and the demo), and unique key prefixes so test files can
 * run in parallel against the same servers.
 */
import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
import { CoordinationUnavailableError } from '../../src/index.js'
import { until } from './wait.js'
import { killAllOnSignals } from '../../scripts/redis-procs.mjs'
// Type-only: pulls in the `ProvidedContext` augmentation (redisUrl, redisClusterUrl).
import type {} from '../setup/global-setup.js'

export { freePort, freePorts, startCluster, startRedis } from '../../scripts/redis-procs.mjs'
export type { ClusterProc, RedisProc, StartRedisOptions } from '../../scripts/redis-procs.mjs'

// A test worker interrupted (Ctrl-C, its runner gone) leaves no server behind.
killAllOnSignals()

/** URL of the shared standalone Redis (redis://127.0.0.1:<port>). */
export function redisUrl(): string {
  return inject('redisUrl')
}

/** URL of one node of the shared 3-master Redis Cluster (redis://127.0.0.1:<port>). */
export function clusterUrl(): string {
  return inject('redisClusterUrl')
}

/** `<name>-<8 random [a-z0-9]>`, e.g. `t-k3x9q0ab`. */
export function uniquePrefix(name = 't'): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'
  const bytes = randomBytes(8)
  let suffix = ''
  for (const b of bytes) suffix += alphabet[b % alphabet.length]
  return `${name}-${suffix}`
}

/** host/port of a redis:// URL, for ioredis' Cluster startup nodes. */
export function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url)
  return { host: u.hostname || '127.0.0.1', port: Number(u.port || 6379) }
}

/**
 * A started coordinator. A cold start (connect, load the scripts, and on a Cluster the slot map)
 * on a loaded machine can outlast commandTimeoutMs (leaseMs / 3 by default): a start that timed out
 * is tried again with a fresh coordinator, until Redis answers in time. Any other failure throws.
 */
export async function startCoordinator<C extends { start(): Promise<void>; stop(): Promise<void> }>(
  make: () => C,
  ms = 20_000,
): Promise<C> {
  const r = await until(
    async () => {
      const c = make()
      try {
        await c.start()
        return { c }
      } catch (err) {
        await c.stop().catch(() => {})
        if (err instanceof CoordinationUnavailableError && err.reason === 'unreachable') throw err // not yet: the last one is reported
        return { err }
      }
    },
    ms,
    'a coordinator to start (Redis answering within commandTimeoutMs)',
  )
  if ('err' in r) throw r.err
  return r.c
}
