/**
 * The connection layer: opening a client for a URL (standalone or Cluster), the options every Redis
 * user of the library shares (coordinator, store, admin), and bounding one call in time.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis'
import { readFileSync } from 'node:fs'
import { ConfigurationError } from './errors/configuration-error.js'
import { CoordinationUnavailableError } from './errors/coordination-unavailable-error.js'
import { KeyLayout, type Layout } from './keys.js'
import { DEFAULT_URL, maskUrl, parseRedisUrl, type RedisUrl } from './url.js'
import { DEFAULTS } from './defaults.js'
import { parseDuration, timerDuration, type Duration } from './duration.js'

/** An ioredis client: a Redis, or a Cluster. Code above this layer does not care which. */
export type RedisClient = Redis | Cluster

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

export { DEFAULT_URL, maskUrl } from './url.js'

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

/** The Cluster hash slot of a key: CRC16 (XMODEM) of its hash tag (or of the whole key) mod 16384, as Redis computes it. */
export function keySlot(key: string | Buffer): number {
  let bytes = typeof key === 'string' ? Buffer.from(key) : key
  const open = bytes.indexOf(0x7b) // {
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1) // }
    if (close > open + 1) bytes = bytes.subarray(open + 1, close)
  }
  let crc = 0
  for (const b of bytes) {
    crc ^= b << 8
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc % 16384
}

/**
 * Who serves a Cluster's slots now, with each master's run_id: `host:port=run_id@0-5460,…`, one entry
 * per master (sorted, `;` between them). The slot map is read at once from a master that answers
 * (CLUSTER SLOTS; ioredis refreshes its own lazily), and each slot owner must answer INFO as a master
 * — one that does not answer, or answers as a replica (a stale map), makes the whole check fail,
 * and a master ioredis has no connection to yet makes it refresh its map and fail this time.
 */
export async function clusterIdentity(client: Cluster, timeoutMs: number): Promise<string> {
  type Slots = Array<[number, number, [string, number, ...unknown[]], ...unknown[]]>
  let slots: Slots | undefined
  let lastError: unknown = new CoordinationUnavailableError('unreachable', 'no Cluster master answered CLUSTER SLOTS')
  for (const node of client.nodes('master')) {
    try {
      slots = (await withTimeout(node.call('CLUSTER', 'SLOTS'), timeoutMs, 'CLUSTER SLOTS')) as Slots
      break
    } catch (err) {
      lastError = err
    }
  }
  if (!slots) throw lastError
  const ranges = new Map<string, string[]>()
  for (const [start, end, [host, port]] of slots) {
    const addr = `${host}:${port}`
    ranges.set(addr, [...(ranges.get(addr) ?? []), start === end ? `${start}` : `${start}-${end}`])
  }
  const nodes = new Map(client.nodes('all').map((n) => [`${n.options.host}:${n.options.port}`, n]))
  const entries = await Promise.all(
    [...ranges].map(async ([addr, owned]) => {
      const node = nodes.get(addr)
      if (!node) {
        void client.refreshSlotsCache()
        throw new CoordinationUnavailableError('unreachable', `no connection to the Cluster master ${addr} yet`)
      }
      const info = String(await withTimeout(node.call('INFO', 'server', 'replication'), timeoutMs, 'INFO'))
      if (!/role:master/.test(info)) {
        void client.refreshSlotsCache()
        throw new CoordinationUnavailableError('unreachable', `${addr} is no longer a master (the slot map was stale)`)
      }
      const run = /run_id:([0-9a-f]+)/.exec(info)?.[1] ?? '?'
      return `${addr}=${run}@${owned.sort((a, b) => parseInt(a) - parseInt(b)).join(',')}`
    }),
  )
  return entries.sort().join(';')
}

/**
 * The entry of a Cluster identity (clusterIdentity) that serves `slot`: `host:port=run_id`, or null
 * when none does (the identity is not a Cluster's, or the slot had no owner).
 */
export function slotOwnerIn(identity: string, slot: number): string | null {
  for (const entry of identity.split(';')) {
    const at = entry.indexOf('@')
    if (at < 0) return null
    for (const range of entry.slice(at + 1).split(',')) {
      const [a, b = a] = range.split('-')
      if (slot >= Number(a) && slot <= Number(b)) return entry.slice(0, at)
    }
  }
  return null
}

/** maxmemory-policy other than noeviction can silently evict lease keys. Checked on every master. */
export async function evictionWarnings(client: RedisClient): Promise<Array<{ code: string; message: string }>> {
  const out: Array<{ code: string; message: string }> = []
  const nodes: Redis[] = isCluster(client) ? masters(client) : [client as Redis]
  for (const node of nodes) {
    try {
      const r = (await node.config('GET', 'maxmemory-policy')) as string[]
      const policy = r[1]
      if (policy && policy !== 'noeviction') {
        out.push({
          code: 'eviction-policy',
          message: `Redis ${node.options.host}:${node.options.port} has maxmemory-policy ${policy}: it may evict lease keys; set it to noeviction`,
        })
      }
    } catch {
      // CONFIG may be refused to an ACL user: nothing to say then
    }
  }
  return out
}

/** The master nodes to scan (one for a standalone client). */
export function masters(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client]
}

const dropCounters = new WeakMap<RedisClient, { closes: number }>()

/**
 * How many times the client's connection closed so far (any node's, for a Cluster). ioredis sends a
 * command again after it reconnects when the connection closed before its reply came
 * (autoResendUnfulfilledCommands; a Cluster retries one lost with its node): a call that saw this
 * count change may have run in Redis twice.
 */
export function connectionCloses(client: RedisClient): () => number {
  let c = dropCounters.get(client)
  if (!c) {
    const counter = { closes: 0 }
    const bump = () => {
      counter.closes++
    }
    if (isCluster(client)) {
      const watched = new WeakSet<Redis>()
      const watch = (node: Redis) => {
        if (watched.has(node)) return
        watched.add(node)
        node.on('close', bump)
      }
      for (const node of client.nodes()) watch(node)
      client.on('+node', watch)
    } else {
      client.on('close', bump)
    }
    dropCounters.set(client, (c = counter))
  }
  return () => c.closes
}

/**
 * Call `onChange` when the server behind the client may have changed: a reconnect (to the same
 * server, a restarted one, or a new master: a Sentinel client, a managed service's address that
 * moved); on a Cluster, its set of masters changed (a failover, a slot moved) or a master's
 * connection came back. Returns a function that stops watching.
 */
export function watchServerChanges(client: RedisClient, onChange: () => void): () => void {
  if (!isCluster(client)) {
    client.on('ready', onChange)
    return () => void client.off('ready', onChange)
  }
  const signature = () =>
    masters(client)
      .map((n) => `${n.options.host}:${n.options.port}`)
      .sort()
      .join(',')
  let last = signature()
  const onRefresh = () => {
    const now = signature()
    if (now === last) return
    last = now
    onChange()
  }
  const watched = new Set<Redis>()
  const watchNode = (node: Redis) => {
    if (watched.has(node)) return
    watched.add(node)
    node.on('ready', onChange)
  }
  for (const node of client.nodes('master')) watchNode(node)
  client.on('refresh', onRefresh)
  client.on('+node', watchNode)
  return () => {
    client.off('refresh', onRefresh)
    client.off('+node', watchNode)
    for (const node of watched) node.off('ready', onChange)
  }
}

type Corkable = { cork(): void; uncork(): void; writable: boolean }
const corked = new WeakSet<RedisClient>()

/**
 * Commands a client sends in the same turn of the event loop (replies that came in one read and the
 * calls they lead to, a renewal cycle, a command's first reads) leave in one write: its sockets are
 * corked until the loop's check phase. A write per command is a system call, the largest part of a
 * replica's CPU per turn on a busy machine. No command waits for another's reply (unlike ioredis's
 * enableAutoPipelining, which keeps one pipeline in flight per node), and none waits longer than the
 * current turn of the loop. Call it before sending.
 */
export function batchWrites(client: RedisClient): void {
  if (corked.has(client)) return
  const sockets: Corkable[] = []
  for (const node of masters(client)) {
    const stream = (node as unknown as { stream?: Corkable }).stream
    if (stream?.writable && typeof stream.cork === 'function') sockets.push(stream)
  }
  if (!sockets.length) return
  for (const s of sockets) s.cork()
  corked.add(client)
  setImmediate(() => {
    corked.delete(client)
    for (const s of sockets) s.uncork()
  })
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

/** Bound a Redis call: one that does not answer within `ms` rejects as CoordinationUnavailableError ('unreachable'). */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  if (!(ms > 0) || !Number.isFinite(ms)) return p
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new CoordinationUnavailableError('unreachable', `Redis did not answer ${what} within ${ms}ms`)), ms)
    p.then(
      (v) => {
        clearTimeout(t)
        resolve(v)
      },
      (e) => {
        clearTimeout(t)
        reject(e)
      },
    )
  })
}

/** Where the shared state lives, and how it is kept: the options of every Redis user of the library. */
export interface RedisConnectionOptions {
  /**
   * redis:// or rediss:// URL (on a Redis Cluster, any node), or redis+sentinel://host:port[,host:port…]/<master-name>[/db]
   * (rediss+sentinel:// for TLS): the master a Sentinel group names, followed through failovers.
   * Ignored when `redis` is given.
   */
  url?: string
  /** redis+sentinel://: the sentinels' own password (and ACL user), when they ask for one. */
  sentinelPassword?: string
  sentinelUsername?: string
  /** Your own ioredis client (Redis or Cluster). It is not closed by stop(). */
  redis?: RedisClient
  /** Key prefix shared by every replica of one bot. Default 'botmesh'. */
  prefix?: string
  /** 'standalone' or 'cluster'; a Cluster client implies 'cluster'. Default 'standalone'. */
  layout?: Layout
  /** PEM CA for rediss:// URLs. */
  tlsCaFile?: string
  /** How long one Redis call may take before it counts as unreachable. Default min(5 s, leaseMs / 3). */
  commandTimeoutMs?: Duration
  /** How long an idle chat keeps its last holder (previousHolder) and counters. Default 24 h. */
  idleKeyTtlMs?: Duration
  /** Approximate length cap of the shared event stream. Default 10,000 entries. */
  eventsMaxLen?: number
}

/** RedisConnectionOptions read and checked: the client (opened here unless given), key names and limits. */
export interface ResolvedRedis {
  redis: RedisClient
  keys: KeyLayout
  /** Close the client when done (it was opened here). */
  ownsClient: boolean
  commandTimeoutMs: number
  idleKeyTtlMs: number
  eventsMaxLen: number
}

/**
 * Read the options every Redis user shares (the coordinator, the store, the admin): durations are
 * parsed and checked before a connection is opened, so a bad option leaves nothing behind.
 */
export function resolveRedis(opts: RedisConnectionOptions, defaultCommandTimeoutMs: number = DEFAULTS.commandTimeoutMs): ResolvedRedis {
  const commandTimeoutMs = timerDuration(opts.commandTimeoutMs ?? defaultCommandTimeoutMs, 'commandTimeoutMs')
  const idleKeyTtlMs = parseDuration(opts.idleKeyTtlMs ?? DEFAULTS.idleKeyTtlMs, 'idleKeyTtlMs')
  const eventsMaxLen = opts.eventsMaxLen ?? DEFAULTS.eventsMaxLen
  let layout = opts.layout
  if (opts.redis) {
    assertNoKeyPrefix(opts.redis)
    if (isCluster(opts.redis)) {
      if (layout === 'standalone') {
        throw new ConfigurationError("a Redis Cluster client needs layout 'cluster' (multi-key scripts must stay in one slot)")
      }
      layout = 'cluster'
    }
  }
  const keys = new KeyLayout(opts.prefix ?? DEFAULTS.prefix, layout ?? DEFAULTS.layout)
  const limits = { commandTimeoutMs, idleKeyTtlMs, eventsMaxLen }
  if (opts.redis) return { redis: opts.redis, keys, ownsClient: false, ...limits }
  const redis = connect({
    url: opts.url,
    layout: keys.layout,
    tlsCaFile: opts.tlsCaFile,
    commandTimeoutMs,
    sentinelUsername: opts.sentinelUsername,
    sentinelPassword: opts.sentinelPassword,
  })
  redis.on('error', () => {}) // surfaced per call as CoordinationUnavailableError
  return { redis, keys, ownsClient: true, ...limits }
}
