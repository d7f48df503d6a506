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
}

export interface ClusterProc {
  readonly nodes: RedisProc[]
  readonly ports: number[]
  readonly pids: number[]
  /** redis://127.0.0.1:<first node's port> */
  readonly url: string
  stop(): Promise<void>
}

export declare function startRedis(opts?: StartRedisOptions): Promise<RedisProc>
export declare function startCluster(opts?: { nodeTimeoutMs?: number; readyTimeoutMs?: number }): Promise<ClusterProc>
export declare function clusterReady(nodes: RedisProc[], timeoutMs?: number): Promise<void>
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
