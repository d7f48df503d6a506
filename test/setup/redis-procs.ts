/**
 * Throwaway redis-server processes for the test suite.
 *
 * Plain functions, usable both from vitest's globalSetup (main process) and
 * from individual tests (worker processes). Every pid we spawn is tracked in a
 * per-process set and SIGKILLed on process exit / SIGINT / SIGTERM, so a
 * crashed or interrupted run leaves nothing behind.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { accessSync, constants as fsConstants, readFileSync, rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'

export const REDIS_SERVER_MISSING = "redis-server not found on PATH: install it with 'apt-get install -y redis-server'"

export interface RedisProc {
  port: number
  pid: number
  /** redis://[:password@]127.0.0.1:<port> */
  url: string
  /** fresh temp dir (working dir, redis.log) — removed by stop() */
  dir: string
  /** SIGTERM, wait for exit (SIGKILL after 3 s), remove dir. Idempotent. */
  stop(): Promise<void>
  /** Send a raw signal (e.g. 'SIGKILL' to simulate a crash, 'SIGSTOP' to freeze). */
  kill(signal?: NodeJS.Signals): void
}

export interface ClusterProc {
  ports: number[]
  pids: number[]
  /** redis://127.0.0.1:<first port> */
  url: string
  nodes: RedisProc[]
  stop(): Promise<void>
}

// ---------------------------------------------------------------------------
// pid tracking + emergency cleanup (shared per process even if this module is
// evaluated more than once, e.g. by vite's module runner and by a plain import)

interface Registry {
  /** pid -> temp dir */
  pids: Map<number, string>
  hooked: boolean
}
const REGISTRY_KEY = Symbol.for('botmesh-coord.test.redis-procs')
const registry: Registry =
  ((globalThis as Record<symbol, unknown>)[REGISTRY_KEY] as Registry | undefined) ??
  ((globalThis as Record<symbol, unknown>)[REGISTRY_KEY] = { pids: new Map<number, string>(), hooked: false } as Registry)

function killAllSync(): void {
  for (const [pid, dir] of registry.pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      /* already gone */
    }
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch {
      /* best effort */
    }
  }
  registry.pids.clear()
}

function installExitHooks(): void {
  if (registry.hooked) return
  registry.hooked = true
  process.on('exit', killAllSync)
  // vitest fork workers talk to the main process over IPC. If the main process
  // dies (Ctrl-C, SIGTERM), workers linger until their current test finishes;
  // the IPC channel closing is the earliest signal, so clean up right there.
  if (typeof process.send === 'function') process.once('disconnect', killAllSync)
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    const onSignal = (): void => {
      killAllSync()
      // If we are the only listener, installing us removed Node's default
      // "terminate" behaviour: restore it and re-raise.
      if (process.listenerCount(sig) === 1) {
        process.removeListener(sig, onSignal)
        process.kill(process.pid, sig)
      }
    }
    process.on(sig, onSignal)
  }
}

// ---------------------------------------------------------------------------
// helpers

function findOnPath(bin: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue
    const candidate = join(dir, bin)
    try {
      accessSync(candidate, fsConstants.X_OK)
      return candidate
    } catch {
      /* keep looking */
    }
  }
  return undefined
}

/** Throws the one-line "redis-server not found" error if it is not installed. */
export function assertRedisServerAvailable(): string {
  const bin = findOnPath('redis-server')
  if (!bin) {
    const err = new Error(REDIS_SERVER_MISSING)
    err.stack = REDIS_SERVER_MISSING // keep it to exactly one line wherever it is printed
    throw err
  }
  return bin
}

function listenEphemeral(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.once('error', reject)
    srv.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => resolve(srv))
  })
}

/**
 * `n` distinct currently-free TCP ports on 127.0.0.1 (all bound at the same
 * time, so they cannot collide with each other), then released.
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: n }, () => listenEphemeral()))
  const ports = servers.map((srv) => {
    const addr = srv.address()
    if (!addr || typeof addr === 'string') throw new Error('freePort: could not read bound address')
    return addr.port
  })
  await Promise.all(servers.map((srv) => new Promise<void>((r) => srv.close(() => r()))))
  return ports
}

/** A currently free TCP port on 127.0.0.1 (bind port 0, read it, close). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1)
  return port!
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null
}

async function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    // exitCode/signalCode are set once libuv has reaped the child, so a zombie
    // never counts as "alive" here.
    if (exited(child) || child.pid === undefined || !isAlive(child.pid)) return true
    await sleep(25)
  }
  return exited(child)
}

function logTail(dir: string, lines = 15): string {
  try {
    return readFileSync(join(dir, 'redis.log'), 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return '(no redis.log)'
  }
}

function client(port: number, password?: string): Redis {
  const c = new Redis({
    host: '127.0.0.1',
    port,
    password,
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    reconnectOnError: () => false,
  })
  c.on('error', () => {
    /* polled; errors surface through the awaited command */
  })
  return c
}

async function withClient<T>(port: number, password: string | undefined, fn: (c: Redis) => Promise<T>): Promise<T> {
  const c = client(port, password)
  try {
    await c.connect()
    return await fn(c)
  } finally {
    c.disconnect()
  }
}

// ---------------------------------------------------------------------------
// single server

export interface StartRedisOptions {
  /** Reuse a specific port (e.g. to restart a stopped server on the same port). */
  port?: number
  /** Extra redis-server command-line args, e.g. ['--maxmemory', '10mb']. */
  args?: string[]
  /** Sets --requirepass and puts the password into `url`. */
  password?: string
  /** @internal how long to wait for PING (ms). Default 10 000. */
  readyTimeoutMs?: number
}

export async function startRedis(opts: StartRedisOptions = {}): Promise<RedisProc> {
  const bin = assertRedisServerAvailable()
  installExitHooks()

  const port = opts.port ?? (await freePort())
  const dir = await mkdtemp(join(tmpdir(), `botmesh-redis-${port}-`))
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--logfile',
    join(dir, 'redis.log'),
    ...(opts.password !== undefined ? ['--requirepass', opts.password] : []),
    ...(opts.args ?? []),
  ]

  const child = spawn(bin, args, { cwd: dir, stdio: 'ignore' })
  // Don't let a forgotten server keep the test process alive; exit hooks kill it.
  child.unref()
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('spawn', () => resolve(child.pid!))
    child.once('error', reject)
  }).catch(async (e: unknown) => {
    await rm(dir, { recursive: true, force: true })
    throw e
  })
  registry.pids.set(pid, dir)
  child.once('exit', () => registry.pids.delete(pid))

  let stopped: Promise<void> | undefined
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      if (!exited(child)) {
        try {
          process.kill(pid, 'SIGTERM')
        } catch {
          /* already gone */
        }
        // A SIGSTOPped server ignores SIGTERM until continued.
        try {
          process.kill(pid, 'SIGCONT')
        } catch {
          /* already gone */
        }
        if (!(await waitForExit(child, 3000))) {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {
            /* already gone */
          }
          await waitForExit(child, 5000)
        }
      }
      registry.pids.delete(pid)
      await rm(dir, { recursive: true, force: true })
    })())

  const auth = opts.password !== undefined ? `:${encodeURIComponent(opts.password)}@` : ''
  const proc: RedisProc = {
    port,
    pid,
    url: `redis://${auth}127.0.0.1:${port}`,
    dir,
    stop,
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      try {
        process.kill(pid, signal)
      } catch {
        /* already gone */
      }
    },
  }

  // Wait for PING (up to 10 s by default).
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 10_000)
  let lastErr: unknown
  for (;;) {
    if (exited(child)) {
      await stop()
      throw new Error(
        `redis-server on port ${port} exited during startup (code ${child.exitCode}, signal ${child.signalCode}):\n${logTail(dir)}`,
      )
    }
    try {
      const pong = await withClient(port, opts.password, (c) => c.ping())
      if (pong === 'PONG') return proc
    } catch (e) {
      lastErr = e
    }
    if (Date.now() > deadline) {
      const tail = logTail(dir)
      await stop()
      throw new Error(`redis-server on port ${port} did not answer PING within timeout (${String(lastErr)}):\n${tail}`)
    }
    await sleep(50)
  }
}

// ---------------------------------------------------------------------------
// cluster

const SLOT_RANGES: Array<[number, number]> = [
  [0, 5460],
  [5461, 10922],
  [10923, 16383],
]

function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf(':')
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1).trim()
  }
  return out
}

type SlotsReply = Array<[number, number, [string, number, ...unknown[]], ...unknown[]]>

async function clusterReady(port: number, ports: number[]): Promise<boolean> {
  return withClient(port, undefined, async (c) => {
    const info = parseInfo((await c.call('CLUSTER', 'INFO')) as string)
    if (info.cluster_state !== 'ok' || info.cluster_known_nodes !== String(ports.length)) return false
    const slots = (await c.call('CLUSTER', 'SLOTS')) as SlotsReply
    let covered = 0
    for (const [start, end, master] of slots) {
      // every range must name a reachable master on one of our ports
      if (!master || !ports.includes(Number(master[1])) || !master[0]) return false
      covered += end - start + 1
    }
    return covered === 16384
  })
}

export async function startCluster(opts: { readyTimeoutMs?: number } = {}): Promise<ClusterProc> {
  assertRedisServerAvailable()
  const nodes: RedisProc[] = []
  const stopAll = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.stop()))
  }
  try {
    // The default cluster bus port is port+10000, which overflows for
    // ephemeral ports > 55535 — so give every node an explicit free bus port.
    const count = SLOT_RANGES.length
    const reserved = await freePorts(2 * count)
    const ports = reserved.slice(0, count)
    const busPorts = reserved.slice(count)
    const started = await Promise.allSettled(
      ports.map((port, i) =>
        startRedis({
          port,
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '2000',
            '--cluster-port',
            String(busPorts[i]),
          ],
        }),
      ),
    )
    for (const r of started) if (r.status === 'fulfilled') nodes.push(r.value)
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) throw failed.reason

    // Distinct config epochs up front (what redis-cli --cluster create does)
    // avoid the slower epoch-collision resolution; then assign slots.
    await Promise.all(
      nodes.map((n, i) =>
        withClient(n.port, undefined, async (c) => {
          await c.call('CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1))
          const [from, to] = SLOT_RANGES[i]!
          await c.call('CLUSTER', 'ADDSLOTSRANGE', String(from), String(to))
        }),
      ),
    )
    await withClient(nodes[0]!.port, undefined, async (c) => {
      for (let i = 1; i < nodes.length; i++) {
        await c.call('CLUSTER', 'MEET', '127.0.0.1', String(nodes[i]!.port), String(busPorts[i]))
      }
    })

    const deadline = Date.now() + (opts.readyTimeoutMs ?? 20_000)
    for (;;) {
      const ok = await Promise.all(ports.map((p) => clusterReady(p, ports).catch(() => false)))
      if (ok.every(Boolean)) break
      if (Date.now() > deadline) {
        const tails = nodes.map((n) => `--- node ${n.port} ---\n${logTail(n.dir, 8)}`).join('\n')
        throw new Error(`redis cluster on ports ${ports.join(',')} did not reach cluster_state:ok within timeout:\n${tails}`)
      }
      await sleep(100)
    }

    return {
      ports,
      pids: nodes.map((n) => n.pid),
      url: `redis://127.0.0.1:${ports[0]}`,
      nodes,
      stop: stopAll,
    }
  } catch (e) {
    await stopAll()
    throw e
  }
}
