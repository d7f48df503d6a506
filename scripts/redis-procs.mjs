// Throwaway redis-server processes: the one launcher of the tests, the benchmark, the fault campaign
// and the demo. A standalone server or a 3-master Cluster on free loopback ports, each in a fresh temp
// dir, no persistence unless asked; stopped and signalled by pid only. Every pid is tracked per
// process and SIGKILLed at exit (killAllOnSignals() adds SIGINT/SIGTERM), so nothing is left behind.
// Plain ESM JavaScript so that bench/ and chaos/ import it as is; types: redis-procs.d.mts.
import { execFileSync, spawn } from 'node:child_process'
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { createRequire } from 'node:module'
import { setTimeout as sleep } from 'node:timers/promises'

// ioredis is loaded on first use: importing this module costs nothing (the CLI bundles it for the
// demo and starts in a blink).
const require = createRequire(import.meta.url)

export const REDIS_SERVER_MISSING = "redis-server not found on PATH: install it with 'apt-get install -y redis-server'"

// ---------------------------------------------------------------------------- pids of this process
// One registry per process, even when this module is evaluated twice (vite's module runner and a
// plain import in the same vitest worker).

const REGISTRY_KEY = Symbol.for('botmesh-coord.redis-procs')
/** @type {{ live: Map<number, { dir: string | null }>, exitHooked: boolean, signalsHooked: boolean }} */
const registry = (globalThis[REGISTRY_KEY] ??= { live: new Map(), exitHooked: false, signalsHooked: false })

/** SIGKILL every server this process started and still runs (SIGCONT first: a frozen one too); remove their temp dirs. */
export function killAllSync() {
  for (const [pid, { dir }] of registry.live) {
    for (const sig of ['SIGCONT', 'SIGKILL']) {
      try {
        process.kill(pid, sig)
      } catch {
        // already gone
      }
    }
    if (dir) rmSync(dir, { recursive: true, force: true })
  }
  registry.live.clear()
}

/** Pids of the servers this process started and has not stopped. */
export function trackedPids() {
  return [...registry.live.keys()]
}

function track(pid, dir) {
  if (!registry.exitHooked) {
    registry.exitHooked = true
    process.on('exit', killAllSync)
  }
  registry.live.set(pid, { dir })
}

/**
 * Also kill them on SIGINT/SIGTERM and when a parent's IPC channel closes (a vitest worker whose
 * runner died). Opt-in: the demo stops its server itself, after its replicas let go of their leases.
 */
export function killAllOnSignals() {
  if (registry.signalsHooked) return
  registry.signalsHooked = true
  if (typeof process.send === 'function') process.once('disconnect', killAllSync)
  for (const sig of ['SIGINT', 'SIGTERM']) {
    const onSignal = () => {
      killAllSync()
      // Alone, this listener replaced Node's default action: restore it and re-raise.
      if (process.listenerCount(sig) === 1) {
        process.removeListener(sig, onSignal)
        process.kill(process.pid, sig)
      }
    }
    process.on(sig, onSignal)
  }
}

// ---------------------------------------------------------------------------- the binary, ports

/** The executable `bin` on PATH, or null. */
export function findOnPath(bin) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue
    try {
      accessSync(join(dir, bin), constants.X_OK)
      return join(dir, bin)
    } catch {
      // keep looking
    }
  }
  return null
}

/** The redis-server on PATH, or null. */
export function findRedisServer() {
  return findOnPath('redis-server')
}

/** The redis-server on PATH; else throws REDIS_SERVER_MISSING — one line, wherever it is printed. */
export function assertRedisServerAvailable() {
  const bin = findRedisServer()
  if (bin) return bin
  const err = new Error(REDIS_SERVER_MISSING)
  err.stack = REDIS_SERVER_MISSING
  throw err
}

/** `redis-server --version`'s v=… (e.g. 7.0.15), or null. */
export function redisServerVersion() {
  const bin = findRedisServer()
  if (!bin) return null
  try {
    const out = execFileSync(bin, ['--version'], { encoding: 'utf8' })
    return /v=(\S+)/.exec(out)?.[1] ?? out.trim()
  } catch {
    return null
  }
}

/** `n` distinct free TCP ports on 127.0.0.1 (bound all at once, so they differ), then released. */
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

export async function freePort() {
  return (await freePorts(1))[0]
}

// ---------------------------------------------------------------------------- clients

/** A client of one server that never retries (a probe); `extra` overrides its options. */
export function client(port, extra = {}) {
  const { Redis } = require('ioredis')
  const c = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    reconnectOnError: () => false,
    ...extra,
  })
  c.on('error', () => {})
  return c
}

/** Run `fn` with a fresh probe client of `port`, then disconnect it. */
export async function withClient(port, fn, extra = {}) {
  const c = client(port, extra)
  try {
    await c.connect()
    return await fn(c)
  } finally {
    c.disconnect()
  }
}

// ---------------------------------------------------------------------------- one server

const exited = (child) => child.exitCode !== null || child.signalCode !== null

async function waitExit(child, ms) {
  const end = performance.now() + ms
  while (!exited(child) && performance.now() < end) await sleep(20)
  return exited(child)
}

function logTail(dir, lines = 15) {
  try {
    return readFileSync(join(dir, 'redis.log'), 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return '(no redis.log)'
  }
}

/**
 * Start one redis-server and resolve once it answers PING.
 * Options: bin (the redis-server to run; default: the one on PATH), port (default: a free one), args (extra command-line arguments), password (requirepass,
 * also in `url`), persist ('aof': appendonly with fsync always, kept across restart()), dir (use this
 * folder instead of a fresh temp dir; not removed), tls ({ certFile, keyFile, caFile } relative to
 * dir or absolute: the port speaks TLS only, `url` is rediss://), detached (own process group: a
 * Ctrl-C in the terminal does not reach it), readyTimeoutMs (default 10 s), sentinelConf (the text of
 * a sentinel.conf: written into dir and run as `redis-server sentinel.conf --sentinel`).
 */
export async function startRedis(opts = {}) {
  const bin = opts.bin ?? assertRedisServerAvailable()
  const port = opts.port ?? (await freePort())
  const ownsDir = !opts.dir
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), `botmesh-redis-${port}-`))
  const args = opts.args ?? []
  const persist = opts.persist ?? 'none'
  const tls = opts.tls ?? null
  const auth = opts.password !== undefined ? `:${encodeURIComponent(opts.password)}@` : ''
  let child = null
  let stopping = null

  const sentinelConf = opts.sentinelConf ?? null
  if (sentinelConf !== null) writeFileSync(join(dir, 'sentinel.conf'), sentinelConf)
  const argv = () => [
    ...(sentinelConf !== null ? [join(dir, 'sentinel.conf'), '--sentinel'] : []),
    ...(tls
      ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile]
      : ['--port', String(port)]),
    ...(tls?.caFile ? ['--tls-ca-cert-file', tls.caFile, '--tls-auth-clients', 'no'] : []),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    ...(persist === 'aof' ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--logfile',
    join(dir, 'redis.log'),
    ...(opts.password !== undefined ? ['--requirepass', opts.password] : []),
    ...args,
  ]
  const ping = () =>
    withClient(port, (c) => c.ping(), {
      password: opts.password,
      ...(tls ? { tls: { ca: tls.caFile ? readFileSync(resolve(dir, tls.caFile)) : undefined } } : {}),
    })

  const proc = {
    port,
    url: `${tls ? 'rediss' : 'redis'}://${auth}127.0.0.1:${port}`,
    dir,
    get pid() {
      return child?.pid
    },
    /** The last lines of its redis.log. */
    logTail: (lines) => logTail(dir, lines),
    /** Send a signal ('SIGSTOP' freezes it, 'SIGCONT' thaws it); a fatal one resolves once it exited. */
    async kill(signal = 'SIGKILL') {
      if (!child || exited(child)) return
      try {
        if (signal === 'SIGKILL' || signal === 'SIGTERM') process.kill(child.pid, 'SIGCONT')
        process.kill(child.pid, signal)
      } catch {
        return // already gone
      }
      if (signal === 'SIGKILL' || signal === 'SIGTERM') await waitExit(child, signal === 'SIGTERM' ? 3000 : 5000)
    },
    /** SIGKILL it and start it again on the same port and dir (empty unless persist 'aof' or a Cluster node). */
    async restart({ downMs = 0 } = {}) {
      await proc.kill('SIGKILL')
      if (downMs) await sleep(downMs)
      if (persist !== 'aof' && !args.includes('--cluster-enabled')) {
        for (const f of ['appendonlydir', 'dump.rdb']) rmSync(join(dir, f), { recursive: true, force: true })
      }
      stopping = null
      await launch()
      return proc
    },
    /** SIGTERM (SIGKILL after 3 s), then remove its temp dir. Idempotent. */
    stop() {
      return (stopping ??= (async () => {
        if (child && !exited(child)) {
          await proc.kill('SIGTERM')
          if (!exited(child)) await proc.kill('SIGKILL')
        }
        if (child) registry.live.delete(child.pid)
        if (ownsDir) rmSync(dir, { recursive: true, force: true })
      })())
    },
  }

  async function launch() {
    const c = spawn(bin, argv(), { cwd: dir, stdio: 'ignore', detached: opts.detached === true })
    c.unref() // a forgotten server must not keep the process alive: the exit hook kills it
    await new Promise((resolve, reject) => {
      c.once('spawn', resolve)
      c.once('error', reject)
    })
    child = c
    track(c.pid, ownsDir ? dir : null)
    c.once('exit', () => registry.live.delete(c.pid))
    const end = performance.now() + (opts.readyTimeoutMs ?? 10_000)
    let lastErr = null
    for (;;) {
      if (exited(c)) {
        const tail = logTail(dir)
        await proc.stop()
        throw new Error(`redis-server on port ${port} exited during startup (code ${c.exitCode}, signal ${c.signalCode}):\n${tail}`)
      }
      try {
        // A server loading its AOF answers -LOADING: PING succeeds only once it serves.
        if ((await ping()) === 'PONG') return
      } catch (e) {
        lastErr = e
      }
      if (performance.now() > end) {
        const tail = logTail(dir)
        await proc.stop()
        throw new Error(`redis-server on port ${port} did not answer PING in time (${String(lastErr)}):\n${tail}`)
      }
      await sleep(30)
    }
  }

  try {
    await launch()
  } catch (e) {
    if (ownsDir) rmSync(dir, { recursive: true, force: true })
    throw e
  }
  return proc
}

// ---------------------------------------------------------------------------- a 3-master Cluster

const SLOT_RANGES = [
  [0, 5460],
  [5461, 10922],
  [10923, 16383],
]

/**
 * Every node sees `cluster_state:ok`, all nodes known, all 16384 slots served by masters on our ports,
 * and (with `replicas`) that many replicas per master, each with its replication link up.
 */
export async function clusterReady(nodes, timeoutMs = 20_000, { replicas = 0 } = {}) {
  const ports = nodes.map((n) => n.port)
  const ready = (port) =>
    withClient(port, async (c) => {
      const info = String(await c.call('CLUSTER', 'INFO'))
      if (!info.includes('cluster_state:ok') || !info.includes(`cluster_known_nodes:${ports.length}`)) return false
      let covered = 0
      for (const [from, to, master, ...copies] of await c.call('CLUSTER', 'SLOTS')) {
        if (!master || !ports.includes(Number(master[1]))) return false
        if (copies.length < replicas) return false
        covered += to - from + 1
      }
      if (covered !== 16384) return false
      const repl = String(await c.info('replication'))
      return !/role:slave/.test(repl) || /master_link_status:up/.test(repl)
    }).catch(() => false)
  const end = performance.now() + timeoutMs
  for (;;) {
    if ((await Promise.all(ports.map(ready))).every(Boolean)) return
    if (performance.now() > end) {
      const tails = nodes.map((n) => `--- node ${n.port} ---\n${n.logTail(8)}`).join('\n')
      throw new Error(`redis cluster on ports ${ports.join(',')} did not reach cluster_state:ok in time:\n${tails}`)
    }
    await sleep(100)
  }
}

/**
 * A 3-master Redis Cluster, with `replicas` replicas per master (default 0). Each node gets an
 * explicit free bus port (the default, port + 10000, overflows for high ephemeral ports). Options:
 * nodeTimeoutMs (cluster-node-timeout, default 2000), replicas, args (more redis-server arguments
 * for every node), readyTimeoutMs (default 20 s).
 * `nodes` lists every node, masters first; `masters` / `replicas` the nodes by their role at start
 * (a failover changes roles: ask the nodes, `roleOf()`).
 */
export async function startCluster(opts = {}) {
  assertRedisServerAvailable()
  const count = SLOT_RANGES.length
  const perMaster = opts.replicas ?? 0
  const total = count * (1 + perMaster)
  const reserved = await freePorts(2 * total)
  const busPorts = reserved.slice(total)
  const nodes = []
  const stop = () => Promise.all(nodes.map((n) => n.stop())).then(() => undefined)
  try {
    const started = await Promise.allSettled(
      reserved.slice(0, total).map((port, i) =>
        startRedis({
          port,
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            String(opts.nodeTimeoutMs ?? 2000),
            '--cluster-port',
            String(busPorts[i]),
            ...(perMaster
              ? [
                  '--cluster-replica-validity-factor',
                  '0',
                  '--repl-diskless-sync',
                  'yes',
                  '--repl-diskless-sync-delay',
                  '0',
                  '--repl-ping-replica-period',
                  '1',
                ]
              : []),
            ...(opts.args ?? []),
          ],
        }),
      ),
    )
    for (const r of started) if (r.status === 'fulfilled') nodes.push(r.value)
    const failed = started.find((r) => r.status === 'rejected')
    if (failed) throw failed.reason
    const masters = nodes.slice(0, count)
    const replicas = nodes.slice(count)
    // Distinct config epochs up front (what redis-cli --cluster create does), then the slots.
    await Promise.all(
      masters.map((n, i) =>
        withClient(n.port, async (c) => {
          await c.call('CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1))
          await c.call('CLUSTER', 'ADDSLOTSRANGE', String(SLOT_RANGES[i][0]), String(SLOT_RANGES[i][1]))
        }),
      ),
    )
    await withClient(nodes[0].port, async (c) => {
      for (let i = 1; i < nodes.length; i++) await c.call('CLUSTER', 'MEET', '127.0.0.1', String(nodes[i].port), String(busPorts[i]))
    })
    if (perMaster) {
      const ids = await Promise.all(masters.map((m) => withClient(m.port, (c) => c.call('CLUSTER', 'MYID'))))
      // A node can replicate a master only once it knows it (gossip after MEET): retry until then.
      await Promise.all(
        replicas.map(async (n, i) => {
          const end = performance.now() + (opts.readyTimeoutMs ?? 20_000)
          for (;;) {
            try {
              await withClient(n.port, (c) => c.call('CLUSTER', 'REPLICATE', String(ids[i % count])))
              return
            } catch (e) {
              if (performance.now() > end) throw e
              await sleep(100)
            }
          }
        }),
      )
    }
    await clusterReady(nodes, opts.readyTimeoutMs ?? 20_000, { replicas: perMaster })
    return {
      nodes,
      masters,
      replicas,
      ports: nodes.map((n) => n.port),
      get pids() {
        return nodes.map((n) => n.pid)
      },
      url: nodes[0].url,
      stop,
    }
  } catch (e) {
    await stop()
    throw e
  }
}

/** 'master' or 'slave' (a replica), as the node at `port` says now; null when it does not answer. */
export async function roleOf(port, extra = {}) {
  return withClient(port, async (c) => String((await c.call('ROLE'))[0]), extra).catch(() => null)
}

// ---------------------------------------------------------------------------- Sentinel

/**
 * A Sentinel-managed master: 1 master, 1 replica and 3 sentinels (quorum 2) on free loopback ports.
 * Options: masterName (default 'botmesh'), password (requirepass of the data servers, which the
 * replica and the sentinels use too), downAfterMs (sentinel down-after-milliseconds, default
 * 1000), failoverTimeoutMs (default 5000), readyTimeoutMs (default 20 s). `url` is the
 * redis+sentinel:// URL of the set; sentinelPassword (the sentinels' own requirepass, and
 * sentinel-pass between them); tls ({ certFile, keyFile, caFile }, absolute paths: every server and
 * sentinel speaks TLS only, replication and the sentinels' links too, and `url` is
 * rediss+sentinel://); `master()` asks the sentinels where the master is now;
 * `failover()` runs SENTINEL FAILOVER and resolves once the sentinels name the new master and it
 * answers as one.
 */
export async function startSentinels(opts = {}) {
  assertRedisServerAvailable()
  const name = opts.masterName ?? 'botmesh'
  const readyMs = opts.readyTimeoutMs ?? 20_000
  const procs = []
  const stop = () => Promise.all(procs.map((p) => p.stop())).then(() => undefined)
  try {
    const replArgs = ['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0', '--repl-ping-replica-period', '1']
    // With a password: the data servers require it (and the replica uses it), the sentinels know it.
    const password = opts.password
    const tls = opts.tls ?? null
    // How this launcher's own clients reach the servers (auth) and the sentinels (sentinelAuth).
    const tlsClient = tls ? { tls: { ca: readFileSync(tls.caFile) } } : {}
    const auth = { ...(password === undefined ? {} : { password }), ...tlsClient }
    const sentinelAuth = { ...(opts.sentinelPassword === undefined ? {} : { password: opts.sentinelPassword }), ...tlsClient }
    if (password !== undefined) replArgs.push('--masterauth', password)
    if (tls) replArgs.push('--tls-replication', 'yes')
    const serverOpts = { ...(password === undefined ? {} : { password }), ...(tls ? { tls } : {}) }
    const primary = await startRedis({ args: replArgs, ...serverOpts })
    procs.push(primary)
    const replica = await startRedis({ args: [...replArgs, '--replicaof', '127.0.0.1', String(primary.port)], ...serverOpts })
    procs.push(replica)
    const ports = await freePorts(3)
    const conf = (port) =>
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `sentinel monitor ${name} 127.0.0.1 ${primary.port} 2`,
        ...(password === undefined ? [] : [`sentinel auth-pass ${name} ${password}`]),
        ...(opts.sentinelPassword === undefined ? [] : [`sentinel sentinel-pass ${opts.sentinelPassword}`]),
        ...(tls ? ['tls-replication yes'] : []),
        `sentinel down-after-milliseconds ${name} ${opts.downAfterMs ?? 1000}`,
        `sentinel failover-timeout ${name} ${opts.failoverTimeoutMs ?? 5000}`,
        `sentinel parallel-syncs ${name} 1`,
        '',
      ].join('\n')
    const sentinels = await Promise.all(
      ports.map((port) =>
        startRedis({
          port,
          sentinelConf: conf(port),
          ...(opts.sentinelPassword === undefined ? {} : { password: opts.sentinelPassword }),
          ...(tls ? { tls } : {}),
        }),
      ),
    )
    procs.push(...sentinels)
    const set = {
      masterName: name,
      servers: [primary, replica],
      sentinels,
      url: `${tls ? 'rediss' : 'redis'}+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${name}`,
      /** The data server at `port` (the master or the replica, whichever it is now). */
      server: (port) => [primary, replica].find((p) => p.port === port),
      /** The master's port as the first sentinel that answers names it. */
      async master() {
        for (const s of sentinels) {
          const addr = await withClient(s.port, (c) => c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name), sentinelAuth).catch(() => null)
          if (addr) return Number(addr[1])
        }
        return null
      },
      /** The other data server's port. */
      async replicaPort() {
        const m = await set.master()
        return m === primary.port ? replica.port : primary.port
      },
      /** Wait until every sentinel knows the other sentinels and the replica, and the replica is in sync. */
      async ready(timeoutMs = readyMs) {
        const end = performance.now() + timeoutMs
        for (;;) {
          const ok = await Promise.all(
            sentinels.map((s) =>
              withClient(
                s.port,
                async (c) => {
                  const m = await c.call('SENTINEL', 'MASTER', name)
                  const f = {}
                  for (let i = 0; i < m.length; i += 2) f[m[i]] = m[i + 1]
                  return Number(f['num-other-sentinels']) >= 2 && Number(f['num-slaves']) >= 1 && !/down/.test(f.flags)
                },
                sentinelAuth,
              ).catch(() => false),
            ),
          )
          const m = await set.master()
          const linked =
            m !== null &&
            (await withClient(
              m === primary.port ? replica.port : primary.port,
              async (c) => /master_link_status:up/.test(String(await c.info('replication'))),
              auth,
            ).catch(() => false))
          if (ok.every(Boolean) && linked) return
          if (performance.now() > end) {
            throw new Error(`sentinels on ports ${ports.join(',')} did not see master ${name} with its replica in time`)
          }
          await sleep(100)
        }
      },
      /**
       * SENTINEL FAILOVER, then wait until the sentinels name the other server and it answers as a
       * master. Resolves with the new master's port.
       */
      async failover(timeoutMs = readyMs) {
        const before = await set.master()
        const end = performance.now() + timeoutMs
        for (;;) {
          try {
            await withClient(sentinels[0].port, (c) => c.call('SENTINEL', 'FAILOVER', name), sentinelAuth)
            break
          } catch (e) {
            // NOGOODSLAVE / INPROG right after a previous failover: the replica is not yet known as good.
            if (performance.now() > end) throw e
            await sleep(200)
          }
        }
        for (;;) {
          const now = await set.master()
          if (now !== null && now !== before && (await roleOf(now, auth)) === 'master') return now
          if (performance.now() > end) throw new Error(`sentinel failover of ${name} did not complete in time`)
          await sleep(50)
        }
      },
      stop,
    }
    await set.ready()
    return set
  } catch (e) {
    await stop()
    throw e
  }
}
