/**
 * Opening and closing a client: the ioredis options every Redis user of the library shares
 * (reconnects, fail-fast for the CLI, TLS, Sentinel), connect() for a URL, and closeClient().
 * Split from connection.ts: the client's life from start to end.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis'
import { readFileSync } from 'node:fs'
import { ConfigurationError } from '../errors/configuration-error.js'
import type { Layout } from '../keys.js'
import { DEFAULT_URL, maskUrl, parseRedisUrl, type RedisUrl } from '../url.js'
import { DEFAULTS } from '../defaults.js'
import { withTimeout } from './calls.js'
import type { RedisClient } from './client.js'

export interface ConnectOptions {
  url?: string
  layout?: Layout
  /** PEM file with the CA that signed the server's certificate (rediss://, rediss+sentinel://). */
  tlsCaFile?: string
  /** ms; how long one command may take before it counts as Redis unreachable. */
  commandTimeoutMs?: number
  /** Connection name shown in CLIENT LIST. */
  connectionName?: string
  /** Fail fast instead of reconnecting forever (the CLI). */
  failFast?: boolean
  /** redis+sentinel://: the sentinels' own ACL user and password, when they ask for one. */
  sentinelUsername?: string
  sentinelPassword?: string
}

/**
 * How soon to reconnect after a connection dropped, by attempt: fast at first and capped at
 * DEFAULTS.reconnectMaxDelayMs, so that a replica promoted by a failover is reached within a few
 * hundred ms of answering (ioredis's own default grows to 2 s).
 */
export function reconnectDelay(attempt: number): number {
  return Math.min(DEFAULTS.reconnectMinDelayMs * attempt, DEFAULTS.reconnectMaxDelayMs)
}

function baseOptions(url: RedisUrl, opts: ConnectOptions): RedisOptions {
  const o: RedisOptions = {
    lazyConnect: false,
    // RESP2: a refused password surfaces as NOAUTH/WRONGPASS instead of a closed connection.
    protocol: 2,
    maxRetriesPerRequest: opts.failFast ? 0 : 2,
    enableOfflineQueue: true,
    connectTimeout: DEFAULTS.connectTimeoutMs,
    connectionName: opts.connectionName,
    retryStrategy: reconnectDelay,
  }
  if (opts.failFast) {
    o.retryStrategy = () => null
    // One answer or one clear error: no ready-check warning for an ACL user without INFO, and no
    // CLIENT SETINFO writes before the first command (a server that does not speak RESP is then
    // reported as such, not as the broken pipe of a later handshake write).
    o.enableReadyCheck = false
    o.disableClientInfo = true
  }
  if (url.username) o.username = url.username
  if (url.password !== undefined) o.password = url.password
  if (url.tls) {
    o.tls = opts.tlsCaFile ? { ca: readFileSync(opts.tlsCaFile) } : {}
  }
  if (url.db) o.db = url.db
  return o
}

/**
 * The options of a client that follows a Sentinel group's master: it asks the sentinels where the
 * master is, hears of a failover at once (failoverDetector: the sentinels' +switch-master), and a
 * server that answers READONLY (a master demoted to a replica) makes it reconnect to the new master
 * and send the command again there.
 */
function sentinelOptions(url: Extract<RedisUrl, { kind: 'sentinel' }>, base: RedisOptions, opts: ConnectOptions): RedisOptions {
  return {
    ...base,
    sentinels: url.sentinels,
    name: url.masterName,
    role: 'master',
    ...(opts.sentinelUsername ? { sentinelUsername: opts.sentinelUsername } : {}),
    ...(opts.sentinelPassword ? { sentinelPassword: opts.sentinelPassword } : {}),
    ...(url.tls ? { enableTLSForSentinelMode: true, sentinelTLS: base.tls } : {}),
    sentinelRetryStrategy: opts.failFast ? () => null : reconnectDelay,
    sentinelCommandTimeout: DEFAULTS.connectTimeoutMs,
    failoverDetector: !opts.failFast,
    updateSentinels: true,
    reconnectOnError: opts.failFast ? () => false : (err: Error) => (/^READONLY/.test(err.message) ? 2 : false),
  }
}

/** Open a client for a URL: a Redis (directly, or through its sentinels), or a Cluster when the layout is 'cluster'. */
export function connect(opts: ConnectOptions): RedisClient {
  const url = parseRedisUrl(opts.url ?? DEFAULT_URL)
  const redisOptions = baseOptions(url, opts)
  if (url.kind === 'sentinel') {
    if (opts.layout === 'cluster') {
      throw new ConfigurationError(`a Sentinel group is not a Redis Cluster: use layout 'standalone' with ${maskUrl(opts.url!)}`)
    }
    const client = new Redis(sentinelOptions(url, redisOptions, opts))
    // ioredis leaves the failover detector's connections to the sentinels open after quit() (they
    // reconnect forever, keep the process alive, and report errors nobody listens to once the
    // sentinels go): close them with the client.
    client.once('end', () => client.disconnect())
    return client
  }
  const { host, port } = url
  if (opts.layout === 'cluster') {
    const clusterOptions: ClusterOptions = {
      redisOptions,
      enableOfflineQueue: true,
      maxRedirections: 16,
      clusterRetryStrategy: opts.failFast ? () => null : reconnectDelay,
      // The client's own ready check (CLUSTER INFO on a random node) ends a fail-fast client when it
      // hits a master that is down: the CLI then reads the masters that answer, and names the other.
      ...(opts.failFast ? { enableReadyCheck: false } : {}),
      slotsRefreshTimeout: 3000,
      dnsLookup: (address, callback) => callback(null, address),
    }
    return new Cluster([{ host, port }], clusterOptions)
  }
  return new Redis({ ...redisOptions, host, port })
}

/**
 * Close a client within about `ms`: QUIT when it is connected (replies on their way still come),
 * else at once. A QUIT that does not answer in time is cut, and a client that is reconnecting is
 * disconnected: through sentinels that are all gone it would wait forever, since its reconnect loop
 * never gives up and its queued commands (QUIT among them) never fail. A Sentinel client's loop is
 * told to stop too (ioredis's own disconnect leaves it asking the sentinels again every retry).
 */
export async function closeClient(client: RedisClient, ms: number): Promise<void> {
  const sentinelOptions = (client.options as { sentinels?: unknown; sentinelRetryStrategy?: unknown }) ?? {}
  if (sentinelOptions.sentinels) sentinelOptions.sentinelRetryStrategy = () => null
  if (client.status === 'end') return
  if (client.status === 'ready') {
    await withTimeout(client.quit(), ms, 'QUIT').catch(() => {})
  }
  if ((client.status as string) !== 'end') client.disconnect()
}
