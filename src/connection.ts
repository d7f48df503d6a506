import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis'
import { readFileSync } from 'node:fs'
import { ConfigurationError } from './errors/configuration-error.js'
import type { Layout } from './keys.js'
import type { RedisClient } from './scripts/runner.js'

export interface ConnectOptions {
  url?: string
  layout?: Layout
  /** PEM file with the CA that signed the server's certificate (rediss://). */
  tlsCaFile?: string
  /** ms; how long one command may take before it counts as Redis unreachable. */
  commandTimeoutMs?: number
  /** Connection name shown in CLIENT LIST. */
  connectionName?: string
  /** Fail fast instead of reconnecting forever (the CLI). */
  failFast?: boolean
}

export const DEFAULT_URL = 'redis://127.0.0.1:6379'

/** A URL with its password replaced: safe to print, log, or put in an error. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString().replace(/\/$/, '')
  } catch {
    return url.replace(/\/\/([^@/]*)@/, '//***@')
  }
}

function baseOptions(url: URL, opts: ConnectOptions): RedisOptions {
  const o: RedisOptions = {
    lazyConnect: false,
    // RESP2: a refused password surfaces as NOAUTH/WRONGPASS instead of a closed connection.
    protocol: 2,
    maxRetriesPerRequest: opts.failFast ? 0 : 2,
    enableOfflineQueue: true,
    connectTimeout: 5000,
    connectionName: opts.connectionName,
  }
  if (opts.failFast) {
    o.retryStrategy = () => null
    // One answer or one clear error: no ready-check warning for an ACL user without INFO.
    o.enableReadyCheck = false
  }
  if (url.username) o.username = decodeURIComponent(url.username)
  if (url.password) o.password = decodeURIComponent(url.password)
  if (url.protocol === 'rediss:') {
    o.tls = opts.tlsCaFile ? { ca: readFileSync(opts.tlsCaFile) } : {}
  }
  const db = url.pathname.replace(/^\//, '')
  if (db) o.db = Number(db)
  return o
}

/** Open a client for a URL: a Redis, or a Cluster when the layout is 'cluster'. */
export function connect(opts: ConnectOptions): RedisClient {
  const raw = opts.url ?? DEFAULT_URL
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigurationError(`not a Redis URL: ${maskUrl(raw)} (expected redis://host:port or rediss://…)`)
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ConfigurationError(`unsupported URL scheme ${url.protocol} in ${maskUrl(raw)} (use redis:// or rediss://)`)
  }
  const port = url.port ? Number(url.port) : 6379
  const host = url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1'
  const redisOptions = baseOptions(url, opts)
  if (opts.layout === 'cluster') {
    const clusterOptions: ClusterOptions = {
      redisOptions,
      enableOfflineQueue: true,
      maxRedirections: 16,
      clusterRetryStrategy: opts.failFast ? () => null : (times) => Math.min(100 * times, 2000),
      slotsRefreshTimeout: 3000,
      dnsLookup: (address, callback) => callback(null, address),
    }
    return new Cluster([{ host, port }], clusterOptions)
  }
  return new Redis({ ...redisOptions, host, port })
}

export function isCluster(client: RedisClient): client is Cluster {
  return (client as Cluster).isCluster === true
}

/** An ioredis keyPrefix would not reach the keys inside Lua scripts: refuse such a client. */
export function assertNoKeyPrefix(client: RedisClient): void {
  const o = client.options as { keyPrefix?: string; redisOptions?: { keyPrefix?: string } }
  if (o.keyPrefix || o.redisOptions?.keyPrefix) {
    throw new ConfigurationError(
      'the Redis client has an ioredis keyPrefix: it would not apply to keys inside Lua scripts; use the prefix option instead',
    )
  }
}

/** The master nodes to scan (one for a standalone client). */
export function masters(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client]
}
