/**
 * Helpers for tests: the shared Redis / Redis Cluster started by
 * test/setup/global-setup.ts, plus unique key prefixes so test files can run
 * in parallel against the same servers.
 */
import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
// Type-only: pulls in the `ProvidedContext` augmentation (redisUrl, redisClusterUrl).
import type {} from '../setup/global-setup.js'

export { freePort, freePorts, startCluster, startRedis } from '../setup/redis-procs.js'
export type { ClusterProc, RedisProc, StartRedisOptions } from '../setup/redis-procs.js'

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
