// redis-server processes for the campaign: started, signalled and stopped by pid only.
// Every pid is tracked; stopAll() (also on exit and SIGINT) kills what is left.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { sleep } from './clock.mjs'

const live = new Map() // pid -> ChildProcess
const dirs = new Set() // temp dirs of servers not stopped yet

export function trackedPids() {
  return [...live.keys()]
}

export function killAllSync() {
  for (const [pid] of live) {
    try {
      process.kill(pid, 'SIGCONT')
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
  live.clear()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
  dirs.clear()
}

export function spawnTracked(cmd, args, opts) {
  const child = spawn(cmd, args, opts)
  if (child.pid) {
    live.set(child.pid, child)
    child.once('exit', () => live.delete(child.pid))
  }
  return child
}

export function forget(pid) {
  live.delete(pid)
}

export async function freePorts(n) {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise((res, rej) => {
          const s = createServer()
          s.once('error', rej)
          s.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => res(s))
        }),
    ),
  )
  const ports = servers.map((s) => s.address().port)
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
  return ports
}

export function client(port, extra = {}) {
  const c = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    ...extra,
  })
  c.on('error', () => {})
  return c
}

export async function withClient(port, fn) {
  const c = client(port)
  try {
    await c.connect()
    return await fn(c)
  } finally {
    c.disconnect()
  }
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null
}

async function waitExit(child, ms) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (exited(child)) return true
    await sleep(20)
  }
  return exited(child)
}

/**
 * One redis-server. `persist: 'aof'` keeps data across restart() (appendfsync always, so even a
 * SIGKILL loses nothing acknowledged); otherwise a restart comes back empty.
 */
export class RedisServer {
  constructor({ port, args = [], persist = 'none', dir } = {}) {
    this.port = port
    this.args = args
    this.persist = persist
    this.dir = dir ?? mkdtempSync(join(tmpdir(), 'botmesh-chaos-redis-'))
    this.ownsDir = !dir
    if (this.ownsDir) dirs.add(this.dir)
    this.child = null
  }

  get pid() {
    return this.child?.pid
  }

  async start() {
    if (!this.port) [this.port] = await freePorts(1)
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--dir',
      this.dir,
      '--daemonize',
      'no',
      '--logfile',
      join(this.dir, 'redis.log'),
      ...(this.persist === 'aof' ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
      ...this.args,
    ]
    this.child = spawnTracked('redis-server', args, { cwd: this.dir, stdio: 'ignore' })
    const end = Date.now() + 10_000
    for (;;) {
      if (exited(this.child)) throw new Error(`redis-server :${this.port} exited at start: ${this.logTail()}`)
      try {
        if ((await withClient(this.port, (c) => c.ping())) === 'PONG') {
          // AOF loading answers LOADING to PING? (it answers -LOADING): ping only succeeds once loaded
          return this
        }
      } catch {}
      if (Date.now() > end) throw new Error(`redis-server :${this.port} did not start: ${this.logTail()}`)
      await sleep(30)
    }
  }

  logTail() {
    try {
      return readFileSync(join(this.dir, 'redis.log'), 'utf8').trim().split('\n').slice(-5).join(' | ')
    } catch {
      return '(no log)'
    }
  }

  signal(sig) {
    if (!this.child || exited(this.child)) return
    try {
      process.kill(this.child.pid, sig)
    } catch {}
  }

  async kill() {
    if (!this.child) return
    this.signal('SIGCONT')
    this.signal('SIGKILL')
    await waitExit(this.child, 5000)
  }

  /** SIGKILL and start again on the same port (and dir: AOF data kept when persist is 'aof'). */
  async restart({ downMs = 0 } = {}) {
    await this.kill()
    if (downMs) await sleep(downMs)
    if (this.persist !== 'aof' && !this.args.includes('--cluster-enabled')) {
      for (const f of ['appendonlydir', 'dump.rdb']) rmSync(join(this.dir, f), { recursive: true, force: true })
    }
    return this.start()
  }

  async stop() {
    if (this.child && !exited(this.child)) {
      this.signal('SIGCONT')
      this.signal('SIGTERM')
      if (!(await waitExit(this.child, 2000))) {
        this.signal('SIGKILL')
        await waitExit(this.child, 3000)
      }
    }
    if (this.ownsDir) {
      rmSync(this.dir, { recursive: true, force: true })
      dirs.delete(this.dir)
    }
  }
}

const SLOTS = [
  [0, 5460],
  [5461, 10922],
  [10923, 16383],
]

/** A 3-master Redis Cluster (no replicas), as test/setup/redis-procs.ts builds it. */
export async function startCluster() {
  const ports = await freePorts(6)
  const nodes = ports.slice(0, 3).map(
    (port, i) =>
      new RedisServer({
        port,
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          '3000',
          '--cluster-port',
          String(ports[3 + i]),
        ],
      }),
  )
  try {
    await Promise.all(nodes.map((n) => n.start()))
    await Promise.all(
      nodes.map((n, i) =>
        withClient(n.port, async (c) => {
          await c.call('CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1))
          await c.call('CLUSTER', 'ADDSLOTSRANGE', String(SLOTS[i][0]), String(SLOTS[i][1]))
        }),
      ),
    )
    await withClient(nodes[0].port, async (c) => {
      for (let i = 1; i < 3; i++) await c.call('CLUSTER', 'MEET', '127.0.0.1', String(nodes[i].port), String(ports[3 + i]))
    })
    await clusterOk(nodes, 20_000)
    return { nodes, url: `redis://127.0.0.1:${nodes[0].port}`, stop: () => Promise.all(nodes.map((n) => n.stop())) }
  } catch (e) {
    await Promise.all(nodes.map((n) => n.stop()))
    throw e
  }
}

export async function clusterOk(nodes, timeoutMs) {
  const end = Date.now() + timeoutMs
  for (;;) {
    const ok = await Promise.all(
      nodes.map((n) =>
        withClient(n.port, async (c) => {
          const info = String(await c.call('CLUSTER', 'INFO'))
          return info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${nodes.length}`)
        }).catch(() => false),
      ),
    )
    if (ok.every(Boolean)) return true
    if (Date.now() > end) throw new Error('cluster did not reach cluster_state:ok')
    await sleep(100)
  }
}
