/**
 * The client type of the connection layer and the two questions every user of it asks: is this a
 * Cluster, and which masters does it reach. Split from connection.ts so that opening, calls and
 * topology can share them without importing one another.
 */
import type { Cluster, Redis } from 'ioredis'

/** An ioredis client: a Redis, or a Cluster. Code above this layer does not care which. */
export type RedisClient = Redis | Cluster

export function isCluster(client: RedisClient): client is Cluster {
  return (client as Cluster).isCluster === true
}

/** The master nodes to scan (one for a standalone client). */
export function masters(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client]
}
