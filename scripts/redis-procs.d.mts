// Types of ./redis-procs.mjs (plain JavaScript, so that bench/ and chaos/ run it without a build).
import type { Redis, RedisOptions } from 'ioredis'

export declare const REDIS_SERVER_MISSING: string

export interface RedisProc {
  readonly port: number
  /** undefined only before the first start */
  readonly pid: number
  /** redis://[:password@]127.0.0.1:<port>, or rediss:// with `tls` */
  readonly url: string
  /** its working dir (redis.log, nodes.conf, AOF): a fresh temp dir unless `dir` was given */
  readonly dir: string
  logTail(lines?: number): string
  /** Send a signal ('SIGSTOP' freezes it, 'SIGCONT' thaws it); SIGKILL/SIGTERM resolve once it exited. */
  kill(signal?: NodeJS.Signals): Promise<void>
  /** SIGKILL it and start it again on the same port and dir (empty unless persist 'aof' or a Cluster node). */
  restart(opts?: { downMs?: number }): Promise<RedisProc>
  /** SIGTERM (SIGKILL after 3 s), then remove its temp dir. Idempotent. */
  stop(): Promise<void>
}

export interface StartRedisOptions {
  /** the redis-server to run (default: the one on PATH) */
  bin?: string
  port?: number
  /** extra redis-server arguments, e.g. ['--maxmemory', '10mb'] */
  args?: string[]
  /** requirepass; also put into `url` */
  password?: string
  /** 'aof': appendonly with fsync always, kept across restart() */
  persist?: 'none' | 'aof'
  /** run in this folder instead of a fresh temp dir (not removed by stop) */
  dir?: string
  /** serve TLS only on `port` (paths relative to dir or absolute); `url` is rediss:// */
  tls?: { certFile: string; keyFile: string; caFile?: string }
  /** its own process group: a Ctrl-C in the terminal does not reach it */
  detached?: boolean
  /** how long to wait for PING (default 10 s) */
  readyTimeoutMs?: number
  /** the text of a sentinel.conf: the server runs as `redis-server sentinel.conf --sentinel` */
  sentinelConf?: string
}

export interface ClusterProc {
  /** every node, masters first */
  readonly nodes: RedisProc[]
  /** the nodes that were masters at start (a failover changes roles: ask roleOf()) */
  readonly masters: RedisProc[]
  /** the nodes that were replicas at start (none unless `replicas`) */
  readonly replicas: RedisProc[]
  readonly ports: number[]
  readonly pids: number[]
  /** redis://127.0.0.1:<first node's port> */
  readonly url: string
  stop(): Promise<void>
}

export declare function startRedis(opts?: StartRedisOptions): Promise<RedisProc>
export declare function startCluster(opts?: {
  nodeTimeoutMs?: number
  replicas?: number
  args?: string[]
  readyTimeoutMs?: number
}): Promise<ClusterProc>
export declare function clusterReady(nodes: RedisProc[], timeoutMs?: number, opts?: { replicas?: number }): Promise<void>
export declare function roleOf(port: number, extra?: RedisOptions): Promise<'master' | 'slave' | 'sentinel' | null>

export interface SentinelSet {
  readonly masterName: string
  /** the two data servers (master and replica at start; a failover swaps their roles) */
  readonly servers: RedisProc[]
  readonly sentinels: RedisProc[]
  /** redis+sentinel://127.0.0.1:<s1>,127.0.0.1:<s2>,127.0.0.1:<s3>/<masterName> */
  readonly url: string
  server(port: number): RedisProc | undefined
  /** the master's port as the sentinels name it now */
  master(): Promise<number | null>
  /** the other data server's port */
  replicaPort(): Promise<number>
  /** every sentinel sees the others and the replica, and the replica is in sync */
  ready(timeoutMs?: number): Promise<void>
  /** SENTINEL FAILOVER; resolves with the new master's port once it answers as a master */
  failover(timeoutMs?: number): Promise<number>
  stop(): Promise<void>
}

export declare function startSentinels(opts?: {
  masterName?: string
  /** requirepass (and masterauth) of the data servers; the sentinels get it as auth-pass */
  password?: string
  /** the sentinels' own requirepass (and sentinel-pass between them) */
  sentinelPassword?: string
  /** every server and sentinel speaks TLS only (absolute paths); `url` is rediss+sentinel:// */
  tls?: { certFile: string; keyFile: string; caFile: string }
  downAfterMs?: number
  failoverTimeoutMs?: number
  readyTimeoutMs?: number
}): Promise<SentinelSet>
export declare function killAllSync(): void
export declare function killAllOnSignals(): void
export declare function trackedPids(): number[]
export declare function findOnPath(bin: string): string | null
export declare function findRedisServer(): string | null
export declare function assertRedisServerAvailable(): string
export declare function redisServerVersion(): string | null
export declare function freePorts(n: number): Promise<number[]>
export declare function freePort(): Promise<number>
export declare function client(port: number, extra?: RedisOptions): Redis
export declare function withClient<T>(port: number, fn: (c: Redis) => Promise<T>, extra?: RedisOptions): Promise<T>
