// Private redis-server processes for the benchmark (the recipe of test/setup/redis-procs.ts, in plain
// JavaScript): a free loopback port, no persistence, a temp dir; every pid is tracked and killed by
// pid on exit, on SIGINT/SIGTERM and on errors. A Redis of your own is never touched.
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'

const live = new Map() // pid -> dir

function killAllSync() {
  for (const [pid, dir] of live) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      /* gone */
    }
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch {
      /* best effort */
    }
  }
  live.clear()
}
process.on('exit', killAllSync)

export function redisServerVersion() {
  try {
    const out = execFileSync('redis-server', ['--version'], { encoding: 'utf8' })
    return /v=(\S+)/.exec(out)?.[1] ?? out.trim()
  } catch {
    return null
  }
}

export async function freePorts(n) {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise((resolve, reject) => {
          const s = createServer()
          s.unref()
          s.once('error', reject)
          s.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => resolve(s))
        }),
    ),
  )
  const ports = servers.map((s) => s.address().port)
  await Promise.all(servers.map((s) => new Promise((r) => s.close(() => r()))))
  return ports
}

function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return e.code === 'EPERM'
  }
}

export async function startRedis({ port, args = [] } = {}) {
  port ??= (await freePorts(1))[0]
  const dir = mkdtempSync(join(tmpdir(), `botmesh-bench-${port}-`))
  const child = spawn(
    'redis-server',
    [
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
      ...args,
    ],
    { cwd: dir, stdio: 'ignore' },
  )
  child.unref()
  const pid = await new Promise((resolve, reject) => {
    child.once('spawn', () => resolve(child.pid))
    child.once('error', reject)
  })
  live.set(pid, dir)
  let stopping = null
  const proc = {
    port,
    pid,
    url: `redis://127.0.0.1:${port}`,
    dir,
    stop() {
      return (stopping ??= (async () => {
        try {
          process.kill(pid, 'SIGTERM')
        } catch {
          /* gone */
        }
        for (let i = 0; i < 120 && alive(pid) && child.exitCode === null && child.signalCode === null; i++) await sleep(25)
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          /* gone */
        }
        live.delete(pid)
        rmSync(dir, { recursive: true, force: true })
      })())
    },
  }
  const deadline = Date.now() + 10_000
  for (;;) {
    const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    c.on('error', () => {})
    try {
      await c.connect()
      if ((await c.ping()) === 'PONG') {
        c.disconnect()
        return proc
      }
    } catch {
      /* not yet */
    }
    c.disconnect()
    if (Date.now() > deadline) {
      await proc.stop()
      throw new Error(`redis-server on port ${port} did not start`)
    }
    await sleep(50)
  }
}

const SLOT_RANGES = [
  [0, 5460],
  [5461, 10922],
  [10923, 16383],
]

/** A 3-master Redis Cluster (no replicas), each node on a free port with an explicit bus port. */
export async function startCluster() {
  const reserved = await freePorts(6)
  const nodes = []
  try {
    for (let i = 0; i < 3; i++) {
      nodes.push(
        await startRedis({
          port: reserved[i],
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '2000',
            '--cluster-port',
            String(reserved[3 + i]),
          ],
        }),
      )
    }
    const clients = nodes.map((n) => new Redis({ port: n.port, host: '127.0.0.1' }))
    for (const c of clients) c.on('error', () => {})
    await Promise.all(
      clients.map(async (c, i) => {
        await c.call('CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1))
        await c.call('CLUSTER', 'ADDSLOTSRANGE', String(SLOT_RANGES[i][0]), String(SLOT_RANGES[i][1]))
      }),
    )
    for (let i = 1; i < 3; i++) await clients[0].call('CLUSTER', 'MEET', '127.0.0.1', String(nodes[i].port), String(reserved[3 + i]))
    const deadline = Date.now() + 20_000
    for (;;) {
      const ok = await Promise.all(
        clients
          .map(async (c) => {
            const info = String(await c.call('CLUSTER', 'INFO'))
            if (!/cluster_state:ok/.test(info) || !/cluster_known_nodes:3/.test(info)) return false
            const slots = await c.call('CLUSTER', 'SLOTS')
            return slots.reduce((n, [a, b]) => n + b - a + 1, 0) === 16384
          })
          .map((p) => p.catch(() => false)),
      )
      if (ok.every(Boolean)) break
      if (Date.now() > deadline) throw new Error('cluster did not become ready')
      await sleep(100)
    }
    clients.forEach((c) => c.disconnect())
    return { nodes, url: nodes[0].url, ports: nodes.map((n) => n.port), stop: () => Promise.all(nodes.map((n) => n.stop())) }
  } catch (e) {
    await Promise.all(nodes.map((n) => n.stop()))
    throw e
  }
}
