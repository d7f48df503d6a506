/**
 * vitest globalSetup: one standalone Redis and one 3-master Redis Cluster for
 * the whole run, shared by every test file (tests isolate themselves with
 * uniquePrefix()). Set REDIS_URL / REDIS_CLUSTER_URL to use existing servers
 * instead of spawning them.
 */
import type { TestProject } from 'vitest/node'
import {
  assertRedisServerAvailable,
  killAllOnSignals,
  startCluster,
  startRedis,
  type ClusterProc,
  type RedisProc,
} from '../../scripts/redis-procs.mjs'

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string
    redisClusterUrl: string
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started: Array<RedisProc | ClusterProc> = []
  const teardown = async (): Promise<void> => {
    await Promise.all(started.map((p) => p.stop()))
  }

  killAllOnSignals()
  const envRedis = process.env.REDIS_URL
  const envCluster = process.env.REDIS_CLUSTER_URL
  // Fail fast, with one line, before spawning anything.
  if (!envRedis || !envCluster) assertRedisServerAvailable()

  try {
    const [redisUrl, redisClusterUrl] = await Promise.all([
      envRedis
        ? envRedis
        : startRedis().then((r) => {
            started.push(r)
            return r.url
          }),
      envCluster
        ? envCluster
        : startCluster().then((c) => {
            started.push(c)
            return c.url
          }),
    ])
    project.provide('redisUrl', redisUrl)
    project.provide('redisClusterUrl', redisClusterUrl)
  } catch (e) {
    await teardown()
    throw e
  }

  return teardown
}
