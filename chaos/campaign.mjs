// The seeded fault campaign: each run starts its own redis-server(s), one TCP proxy per replica,
// three replica worker processes, sends messages, injects a seeded plan of faults, drains, stops
// everything by pid, and checks the recorded history against the invariants.
import { fork } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Cluster } from 'ioredis'
import { rng, runSeed } from './rng.mjs'
import { now, sleep } from './clock.mjs'
import {
  startRedis,
  startCluster,
  startSentinels,
  clusterReady,
  roleOf,
  withClient,
  client,
  killAllSync as killRedisSync,
} from '../scripts/redis-procs.mjs'
import { ChaosProxy } from './proxy.mjs'
import { checkRun, INVARIANTS } from './checkers.mjs'

const here = dirname(fileURLToPath(import.meta.url))
// The library under test: the built package (dist/ + lua/) at CHAOS_LIB (a snapshot, see run.mjs), or this checkout.
const LIB = process.env.CHAOS_LIB || join(here, '..')
const DIST = pathToFileURL(join(LIB, 'dist', 'src', 'index.js')).href
const WORKER = join(here, 'worker.mjs')

export const FAULTS = {
  process: [
    'kill-holding',
    'kill-queued',
    'kill-leading',
    'kill-after-send',
    'restart-same-id',
    'pause-1.5',
    'pause-0.5',
    'pause-0.8',
    'block-0.9',
    'clock-jump',
  ],
  network: ['net-cut', 'net-stall', 'net-slow', 'renew-latency', 'net-cut-waiting'],
  redis: ['redis-restart-aof', 'redis-restart-empty', 'failover-lossy', 'eviction', 'script-flush', 'redis-oom'],
  operator: ['op-release-chat', 'op-skip', 'op-yield', 'op-revoke-lead', 'op-evict'],
  cluster: ['cluster-master-restart'],
  // high-availability topologies: a Sentinel-managed master with a replica, a Cluster with a replica per master
  sentinel: ['sentinel-failover', 'sentinel-failover-lossy'],
  clusterHa: ['cluster-failover', 'cluster-master-kill', 'cluster-takeover'],
}
/** The topology a fault needs (none: the standalone server or the plain cluster). */
export function topologyOf(faults) {
  if (faults.some((f) => FAULTS.sentinel.includes(f))) return 'sentinel'
  if (faults.some((f) => FAULTS.clusterHa.includes(f))) return 'cluster-ha'
  if (faults.includes('cluster-master-restart')) return 'cluster'
  return 'standalone'
}
/** Faults that need nothing but the replicas' processes: they go with any topology. */
const PROCESS_ONLY = ['kill-holding', 'pause-1.5', 'restart-same-id', 'op-release-chat']
export const ALL_FAULTS = Object.values(FAULTS).flat()
const SERVER_FAULTS = ['redis-restart-aof', 'redis-restart-empty', 'failover-lossy', 'eviction', 'redis-oom']
const SOLO = ['pause-0.5', 'pause-0.8', 'clock-jump', 'block-0.9']

// every worker process of every run, by pid: stopped on exit and SIGINT
const workerPids = new Set()
export function killAllSync() {
  for (const pid of workerPids) {
    try {
      process.kill(pid, 'SIGCONT')
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
  workerPids.clear()
  killRedisSync()
}
process.once('exit', killAllSync)

/** The plan of one run, from its seed alone. */
export function planRun(seed, opts = {}) {
  const r = rng(seed)
  let ha = opts.only ? topologyOf(opts.only) : null
  if (!opts.only && opts.haEvery > 0 && r.chance(1 / opts.haEvery)) ha = r.pick(['sentinel', 'cluster-ha'])
  const cluster =
    ha === 'cluster-ha' ||
    (opts.cluster ??
      (opts.only
        ? opts.only.includes('cluster-master-restart')
        : ha !== 'sentinel' && opts.clusterEvery > 0 && r.chance(1 / opts.clusterEvery)))
  let faults
  if (opts.only) faults = [...opts.only]
  else if (ha === 'sentinel' || ha === 'cluster-ha')
    faults = [r.pick(ha === 'sentinel' ? FAULTS.sentinel : FAULTS.clusterHa), ...(r.chance(0.5) ? [r.pick(PROCESS_ONLY)] : [])]
  else if (cluster)
    faults = [
      'cluster-master-restart',
      ...(r.chance(0.5) ? [r.pick(['kill-holding', 'pause-1.5', 'restart-same-id', 'op-release-chat'])] : []),
    ]
  else if (r.chance(0.2)) faults = [r.pick(SOLO)]
  else {
    const pool = [...FAULTS.process, ...FAULTS.network, ...FAULTS.redis, ...FAULTS.operator]
    const n = r.int(1, 3)
    faults = []
    while (faults.length < n) {
      const f = r.pick(pool)
      if (SERVER_FAULTS.includes(f) && faults.some((g) => SERVER_FAULTS.includes(g))) continue
      faults.push(f)
    }
    faults = r.shuffle(faults)
    // a failover changes the server under everything: do it last
    const fo = faults.indexOf('failover-lossy')
    if (fo >= 0) faults.push(...faults.splice(fo, 1))
  }
  const evictPolicy = r.pick(['allkeys-lru', 'volatile-lru', 'allkeys-random'])
  return {
    seed,
    cluster,
    topology: topologyOf(faults) === 'standalone' && cluster ? 'cluster' : topologyOf(faults),
    faults,
    evictPolicy,
    chats: r.int(3, 5),
    msgEveryMs: r.int(15, 35),
    gaps: faults.map(() => r.float(0.5, 1.2)),
    r,
  }
}

class Replica {
  constructor(run, replicaId) {
    this.run = run
    this.replicaId = replicaId
    this.proc = null
    this.inc = null
    this.alive = false
    this.leader = false
    this.generation = 0
    this.outstanding = new Set()
    this.starting = null
  }

  /**
   * Start its process unless it runs or is being started: one process per replica. Restarts are asked
   * for from two places (the supervisor restarts an evicted replica; every fault restarts the dead
   * ones), and a start under load can take seconds: two starts at once would run two processes with
   * one replicaId, the first of them left running unseen.
   */
  start() {
    if (this.alive) return Promise.resolve(this)
    this.starting ??= this.startWithRetries().finally(() => (this.starting = null))
    return this.starting
  }

  async startWithRetries() {
    // a start under load may time out (the first script call also connects): try again, as a supervisor would
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startOnce()
      } catch (e) {
        if (attempt >= 4) throw e
        await sleep(100)
      }
    }
  }

  async startOnce() {
    const run = this.run
    const cfg = {
      ...run.workerCfg,
      replicaId: this.replicaId,
      url: run.cluster ? run.cluster.url : run.sentinels ? run.sentinels.url : `redis://127.0.0.1:${this.proxy.port}`,
      historyFile: join(run.dir, `${this.replicaId}-${++this.generation}.jsonl`),
    }
    const proc = fork(WORKER, [], {
      env: { ...process.env, CHAOS_WORKER: JSON.stringify(cfg) },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      execArgv: [],
    })
    this.proc = proc
    workerPids.add(proc.pid)
    this.stderr = ''
    proc.stderr.on('data', (b) => {
      if (this.stderr.length < 4000) this.stderr += b
    })
    const exited = new Promise((res) => proc.once('exit', (code, sig) => res({ code, sig, t: now() })))
    this.exited = exited
    exited.then((x) => {
      workerPids.delete(proc.pid)
      if (this.proc === proc) {
        this.alive = false
        this.leader = false
        this.outstanding.clear()
        this.lastExit = x
        run.onExit(this, x)
      }
    })
    proc.on('message', (m) => this.onMessage(m))
    proc.on('error', () => {})
    const ready = await new Promise((res) => {
      this.onReady = res
      exited.then(() => res(false))
      setTimeout(() => res(false), 15_000)
    })
    if (!ready) {
      await this.kill()
      throw new Error(`replica ${this.replicaId} did not start: ${this.startError ?? ''} ${this.stderr.slice(0, 400)}`)
    }
    this.alive = true
    return this
  }

  onMessage(m) {
    if (m.type === 'ready') {
      this.inc = m.inc
      this.onReady?.(true)
    } else if (m.type === 'start-failed') {
      this.startError = m.message
      this.onReady?.(false)
    } else if (m.type === 'effect') {
      const accepted = this.run.sinkAccept(m)
      this.send({ type: 'effect-ack', req: m.req, accepted })
    } else if (m.type === 'role') this.leader = m.leader
    else if (m.type === 'fin') this.outstanding.delete(m.msg)
  }

  send(m) {
    if (!this.proc || !this.proc.connected) return false
    try {
      this.proc.send(m)
      return true
    } catch {
      return false
    }
  }

  signal(sig) {
    try {
      process.kill(this.proc.pid, sig)
    } catch {}
  }

  async kill() {
    const p = this.proc
    if (!p || p.exitCode !== null || p.signalCode !== null) return
    this.signal('SIGCONT')
    this.signal('SIGKILL')
    await this.exited
  }

  async stop(timeoutMs) {
    if (!this.alive) return 'dead'
    this.signal('SIGCONT')
    this.send({ type: 'stop' })
    const r = await Promise.race([this.exited.then(() => 'stopped'), sleep(timeoutMs).then(() => 'timeout')])
    if (r === 'timeout') await this.kill()
    return r
  }
}

export async function runOne(seed, opts = {}) {
  const L = opts.leaseMs ?? 1000
  const plan = planRun(seed, opts)
  const r = plan.r
  const dir = mkdtempSync(join(tmpdir(), `botmesh-chaos-${seed}-`))
  const prefix = `cx${seed.toString(36)}`
  const layout = plan.cluster ? 'cluster' : 'standalone'
  const { KeyLayout, CoordinationAdmin, RedisCoordinator } = await import(DIST)
  const keys = new KeyLayout(prefix, layout)
  const provider = 'provider:wa'
  const run = {
    dir,
    seed,
    cluster: null,
    primary: null,
    workerCfg: {
      dist: DIST,
      prefix,
      layout,
      leaseMs: L,
      turnWaitMs: 8 * L,
      maxPollMs: 100,
      idleKeyTtlMs: 500,
      workMinMs: 2,
      workMaxMs: 20,
      clearEvery: 7,
      campaign: true,
      provider,
      leadEffectMs: 100,
      sitOutMs: Math.round(L / 2),
    },
    sink: [],
    sinkMax: new Map(),
    faults: [],
    replicas: [],
    restarts: [],
    onExit: () => {},
  }
  run.sinkAccept = (m) => {
    const k = `${m.kind}|${m.key}`
    const max = run.sinkMax.get(k) ?? -Infinity
    const accepted = m.fence >= max
    if (accepted) run.sinkMax.set(k, m.fence)
    run.sink.push({ t: now(), kind: m.kind, key: m.key, fence: m.fence, accepted, inc: m.inc, msg: m.msg })
    return accepted
  }
  const servers = []
  const proxies = []
  let stopGen = false
  let evictionWatchDone = false
  let sent = 0
  const result = {
    seed,
    plan: { cluster: plan.cluster, topology: plan.topology, faults: plan.faults },
    injected: {},
    violations: [],
    stats: {},
    error: null,
    dir,
  }
  const t0 = now()
  try {
    // ---------------------------------------------------------------- servers
    const evicting = plan.faults.includes('eviction')
    if (plan.cluster) {
      // With replicas: cluster-require-full-coverage no, so the other masters serve while one fails over.
      run.cluster =
        plan.topology === 'cluster-ha'
          ? await startCluster({ nodeTimeoutMs: 2000, replicas: 1, args: ['--cluster-require-full-coverage', 'no'] })
          : await startCluster({ nodeTimeoutMs: 3000 })
      servers.push(...run.cluster.nodes)
    } else if (plan.topology === 'sentinel') {
      run.sentinels = await startSentinels({ downAfterMs: 1000, failoverTimeoutMs: 5000 })
      servers.push(...run.sentinels.servers, ...run.sentinels.sentinels)
      run.primary = run.sentinels.server(await run.sentinels.master())
    } else {
      const persist = plan.faults.includes('redis-restart-aof') ? 'aof' : 'none'
      const args = evicting ? ['--maxmemory', '3mb', '--maxmemory-policy', plan.evictPolicy] : []
      run.primary = await startRedis({ persist, args })
      servers.push(run.primary)
      if (plan.faults.includes('failover-lossy')) {
        run.standby = await startRedis({ args: ['--replicaof', '127.0.0.1', String(run.primary.port)] })
        servers.push(run.standby)
        const end = Date.now() + 10_000
        while (!(await withClient(run.standby.port, (c) => c.info('replication'))).includes('master_link_status:up')) {
          if (Date.now() > end) throw new Error('standby did not sync')
          await sleep(50)
        }
      }
    }
    const directClient = () =>
      run.cluster
        ? new Cluster([{ host: '127.0.0.1', port: run.cluster.nodes[0].port }], { enableOfflineQueue: true })
        : client(run.primary.port, { lazyConnect: false, enableOfflineQueue: true, maxRetriesPerRequest: 1 })
    const adminUrl = () => (run.cluster ? run.cluster.url : run.sentinels ? run.sentinels.url : `redis://127.0.0.1:${run.primary.port}`)
    const withAdmin = async (fn) => {
      const admin = new CoordinationAdmin({ url: adminUrl(), prefix, layout, idleKeyTtlMs: run.workerCfg.idleKeyTtlMs })
      try {
        return await fn(admin)
      } finally {
        await admin.close().catch(() => {})
      }
    }
    const withDirect = async (fn) => {
      const c = directClient()
      c.on('error', () => {})
      try {
        return await fn(c)
      } finally {
        c.disconnect()
      }
    }

    // ---------------------------------------------------------------- a neighbouring tenant
    // Another bot's keys under the nested prefix `<prefix>:eu`, written once with no expiry and the
    // same chat, lead and lock names: nothing this run does (replicas, operators, faults) may change
    // them. Checked at the end unless a fault lost data.
    const neighbour = new KeyLayout(`${prefix}:eu`, layout)
    const neighbourKeys = await withDirect((c) => writeNeighbour(c, neighbour))

    // ---------------------------------------------------------------- evictions outside the fault
    // An evicting run's Redis keeps its low maxmemory for the whole run: the replicas' own keys and
    // buffers may push it past the limit before or after the eviction fault's window. Each sample
    // that finds evicted_keys grown records that span as a data loss of its own (late: not a fault
    // the plan injected), so the checkers explain what it lost as they explain the fault's.
    const evictionWatch = evicting
      ? (async () => {
          let last = null
          let prev = now()
          while (!evictionWatchDone) {
            await sleep(50)
            const n = await withClient(run.primary.port, async (c) => Number(/evicted_keys:(\d+)/.exec(await c.info('stats'))?.[1])).catch(
              () => null,
            )
            const t = now()
            const inFault = run.faults.some((f) => f.kind === 'eviction' && !f.late && f.start <= t && (f.end ?? Infinity) >= prev)
            if (n !== null && last !== null && n > last && !inFault)
              run.faults.push({
                kind: 'eviction',
                late: true,
                injected: true,
                target: 'redis',
                scope: 'global',
                dataLoss: true,
                start: prev,
                lossAt: prev,
                restoredAt: t,
                end: t,
                evicted: n - last,
              })
            if (n !== null) last = n
            prev = t
          }
        })()
      : null

    // ---------------------------------------------------------------- replicas
    for (let i = 1; i <= 3; i++) {
      const rep = new Replica(run, `r${i}`)
      if (!plan.cluster && !run.sentinels) {
        rep.proxy = await new ChaosProxy(run.primary.port).listen()
        proxies.push(rep.proxy)
      }
      run.replicas.push(rep)
    }
    await Promise.all(run.replicas.map((rep) => rep.start()))
    // a replica evicted by an operator exits; its supervisor (we) restarts it with the same replicaId
    run.onExit = (rep, x) => {
      if (x.code === 3 && !stopGen) {
        run.restarts.push(sleep(50).then(() => (stopGen ? null : rep.start().catch((e) => (result.note = String(e.message))))))
      }
    }

    // ---------------------------------------------------------------- messages
    const chats = Array.from({ length: plan.chats }, (_, i) => `chat:${i}`)
    const msgPlan = r.int(1, 1 << 30)
    /** Send one message for `chat` to the first live replica from `pref` on. */
    const sendMsg = (chat, pref) => {
      for (let k = 0; k < 3; k++) {
        const rep = run.replicas[(pref + k) % 3]
        if (!rep.alive || rep.quiet) continue
        const id = ++sent
        rep.outstanding.add(id)
        if (rep.send({ type: 'msg', id, chat })) return true
        rep.outstanding.delete(id)
        sent--
      }
      return false
    }
    const gen = (async () => {
      const mr = rng(msgPlan)
      while (!stopGen) {
        sendMsg(mr.pick(chats), mr.int(0, 2))
        await sleep(plan.msgEveryMs)
      }
    })()

    // ---------------------------------------------------------------- faults
    const live = () => run.replicas.filter((x) => x.alive)
    const pickLive = () => {
      const l = live()
      return l.length ? r.pick(l) : null
    }
    const leaseKeyOf = (h) => (h.kind === 'chat' ? keys.chat(h.key).state : keys.lead(h.key))
    /** Redis's view of what a replica holds (its heartbeat record): ms left on each lease. */
    const probe = (rep) =>
      withDirect(async (c) => {
        const rec = await c.hget(keys.replica(rep.replicaId), 'leases')
        const held = rec ? JSON.parse(rec).held : []
        const out = []
        for (const h of held) {
          const k = leaseKeyOf(h)
          const [[hi, exp], t] = await Promise.all([c.hmget(k, 'hi', 'exp'), c.time()])
          const nowMs = Number(t[0]) * 1000 + Math.floor(Number(t[1]) / 1000)
          out.push({ key: h.key, kind: h.kind, redisMsLeft: hi === rep.inc ? Number(exp) - nowMs : -1 })
        }
        return out
      }).catch(() => [])
    /** Send one message for `chat` to `rep` itself; its id. */
    const sendTo = (rep, chat) => {
      const id = ++sent
      rep.outstanding.add(id)
      if (rep.send({ type: 'msg', id, chat })) return id
      rep.outstanding.delete(id)
      sent--
      return null
    }
    /** The tickets of incarnation `inc` in a chat, as Redis holds them: queued ones, and the holder's. */
    const ticketsOf = (c, chat, inc) =>
      c.hgetall(keys.chat(chat).state).then((h) => {
        const queued = Object.keys(h)
          .filter((k) => /^t:\d+$/.test(k) && h[k].split('|')[2] === inc)
          .map((k) => Number(k.slice(2)))
        return { queued, held: h.hi === inc ? Number(h.ht) : null }
      })
    const restartLater = (rep, ms) =>
      run.restarts.push(sleep(ms).then(() => (stopGen ? null : rep.start().catch((e) => (result.note = String(e.message))))))

    const armKill = async (rep, point, f) => {
      f.target = rep.replicaId
      f.inc = rep.inc
      f.killedInc = rep.inc
      rep.send({ type: 'arm', point })
      const x = await Promise.race([rep.exited, sleep(3 * L).then(() => null)])
      if (!x) {
        rep.send({ type: 'arm', point: null })
        f.note = `${point} not reached: killed anyway`
        await rep.kill()
      }
      f.killedAt = (x ?? rep.lastExit)?.t ?? now()
      f.end = f.killedAt
    }

    const inject = {
      'kill-holding': async (f) => armKill(pickLive(), 'holding', f),
      'kill-queued': async (f) => armKill(pickLive(), 'queued', f),
      'kill-after-send': async (f) => armKill(pickLive(), 'after-send', f),
      'kill-leading': async (f) => armKill(live().find((x) => x.leader) ?? pickLive(), 'leading', f),
      'restart-same-id': async (f) => {
        const rep = pickLive()
        Object.assign(f, { target: rep.replicaId, inc: rep.inc, killedInc: rep.inc })
        await rep.kill()
        f.killedAt = f.end = now()
        await rep.start() // at once, same replicaId, new incarnation
        f.end = now()
        f.newInc = rep.inc
      },
      pause: async (f, factor) => {
        const rep = pickLive()
        Object.assign(f, { target: rep.replicaId, inc: rep.inc, factor })
        rep.signal('SIGSTOP')
        f.start = now()
        await sleep(factor * L)
        if (factor < 1) f.probe = await probe(rep)
        rep.signal('SIGCONT')
        f.end = now()
      },
      'block-0.9': async (f) => {
        const rep = pickLive()
        Object.assign(f, { target: rep.replicaId, inc: rep.inc })
        rep.send({ type: 'block', ms: 0.9 * L })
        await sleep(0.85 * L)
        f.probe = await probe(rep)
        await sleep(0.1 * L)
        f.end = now()
      },
      'clock-jump': async (f) => {
        const rep = pickLive()
        Object.assign(f, { target: rep.replicaId, inc: rep.inc, scope: 'none' })
        rep.send({ type: 'clock', offsetMs: r.chance(0.5) ? 3_600_000 : -3_600_000 })
        f.end = now()
      },
      // A waiting replica's link is cut exactly as its waits give up (aborted here, as by a timeout):
      // withdrawing the tickets fails. Restored later; what it left in Redis must be withdrawn (or a
      // turn granted to it meanwhile passed on) within leaseMs / 3 + a poll of Redis answering again,
      // and its next message in that chat must not be dropped as a dead replica's.
      'net-cut-waiting': async (f) => {
        const rep = pickLive()
        const chat = r.pick(chats)
        Object.assign(f, { target: rep.replicaId, inc: rep.inc, chat })
        rep.quiet = true // no other traffic to it meanwhile: its tickets in Redis are these waits'
        // Another process of the bot holds the chat, so the replica's messages wait behind it.
        const holder = new RedisCoordinator({
          url: adminUrl(),
          prefix,
          layout,
          replicaId: 'chaos-holder',
          leaseMs: 2 * L,
          idleKeyTtlMs: run.workerCfg.idleKeyTtlMs,
        })
        holder.on('coordination:warning', () => {})
        try {
          await holder.start()
          const turn = await holder.acquireTurn(chat, { waitMs: 8 * L })
          for (let i = 0; i < 3; i++) sendTo(rep, chat)
          const waiting = await withDirect(async (c) => {
            const until = now() + L
            while (now() < until) {
              const t = await ticketsOf(c, chat, rep.inc)
              if (t.queued.length) return t.queued
              await sleep(5)
            }
            return []
          })
          if (!waiting.length) {
            await turn.release()
            return (f.injected = false)
          }
          f.tickets = waiting
          f.start = now()
          rep.proxy.cut()
          rep.send({ type: 'abort-waits' })
          await sleep(r.float(0.1, 0.4) * L)
          // Half the time the chat is released during the cut: a live ticket of the replica that gave up is granted.
          f.releasedDuringCut = r.chance(0.5)
          if (f.releasedDuringCut) await turn.release()
          await sleep(r.float(0.4, 0.9) * L)
          rep.proxy.restore()
          f.restoredAt = now()
          if (!f.releasedDuringCut) await turn.release()
          rep.quiet = false
          f.nextMsg = sendTo(rep, chat) // at once: before the withdrawal is retried
          // Until nothing of the given-up waits is left in Redis (bounded: 4 leases).
          f.clearedAt = await withDirect(async (c) => {
            const until = now() + 4 * L
            while (now() < until) {
              const t = await ticketsOf(c, chat, rep.inc)
              if (!t.queued.some((x) => waiting.includes(x)) && !waiting.includes(t.held)) return now()
              await sleep(5)
            }
            return null
          })
        } finally {
          rep.quiet = false
          await holder.stop().catch(() => {})
        }
        f.end = now()
      },
      net: async (f, action, ms) => {
        const rep = pickLive()
        Object.assign(f, { target: rep.replicaId, inc: rep.inc })
        action(rep.proxy)
        await sleep(ms)
        rep.proxy.restore()
        f.end = now()
      },
      'redis-restart-aof': async (f) => {
        Object.assign(f, { target: 'redis', scope: 'global' })
        await run.primary.restart({ downMs: L / 3 })
        f.end = now()
      },
      'redis-restart-empty': async (f) => {
        Object.assign(f, { target: 'redis', scope: 'global', dataLoss: true, lossAt: now() })
        await run.primary.restart({ downMs: L / 3 })
        f.restoredAt = f.end = now()
      },
      'failover-lossy': async (f) => {
        Object.assign(f, { target: 'redis', scope: 'global', dataLoss: true })
        // cut the replication link: the standby keeps what it had, the primary goes on accepting writes
        await withClient(run.standby.port, (c) => c.call('REPLICAOF', 'NO', 'ONE'))
        f.lossAt = now()
        await sleep(L / 2)
        await run.primary.kill()
        run.primary = run.standby
        for (const p of proxies) p.switchUpstream(run.primary.port)
        f.restoredAt = f.end = now()
      },
      eviction: async (f) => {
        Object.assign(f, { target: 'redis', scope: 'global', dataLoss: true, lossAt: now(), policy: plan.evictPolicy })
        await withClient(run.primary.port, async (c) => {
          await c.select(1)
          const before = Number(/evicted_keys:(\d+)/.exec(await c.info('stats'))[1])
          const val = 'x'.repeat(2048)
          const end = now() + L
          let i = 0
          while (now() < end) {
            const p = c.pipeline()
            for (let k = 0; k < 50; k++) p.set(`junk:${i++}`, val, 'PX', 60_000)
            await p.exec().catch(() => {})
            await sleep(5)
          }
          f.evicted = Number(/evicted_keys:(\d+)/.exec(await c.info('stats'))[1]) - before
          await c.flushdb()
        })
        f.restoredAt = f.end = now()
      },
      'script-flush': async (f) => {
        Object.assign(f, { target: 'redis', scope: 'none', flushes: 0 })
        for (let i = 0; i < 6; i++) {
          await withClient(run.primary.port, (c) => c.script('FLUSH'))
          f.flushes++
          await sleep(L / 6)
        }
        f.end = now()
      },
      'redis-oom': async (f) => {
        // Redis out of memory (maxmemory just above what it holds, noeviction): every write is refused
        // for a whole lease, then memory comes back. No data is lost; holders cannot renew.
        Object.assign(f, { target: 'redis', scope: 'global', refused: 0 })
        await withClient(run.primary.port, async (c) => {
          const used = Number(/used_memory:(\d+)/.exec(await c.info('memory'))[1])
          await c.config('SET', 'maxmemory-policy', 'noeviction')
          await c.config('SET', 'maxmemory', String(used + 2 * 1024 * 1024))
          await c.select(1)
          // large values until one is refused, then smaller ones: a refused 64 KiB write leaves room for a small one
          let i = 0
          for (const size of [64 * 1024, 4096, 256, 16]) {
            const val = 'x'.repeat(size)
            for (let n = 0; n < 2000; n++) {
              const ok = await c.set(`junk:${i++}`, val).then(
                () => true,
                (e) => (/OOM/.test(e.message) ? false : Promise.reject(e)),
              )
              if (!ok) break
            }
          }
          f.oomAt = now()
          const end = now() + L
          while (now() < end) {
            await c.set(`junk:p${i++}`, 'x'.repeat(1024)).catch((e) => (/OOM/.test(e.message) ? f.refused++ : null))
            await sleep(L / 10)
          }
          await c.flushdb()
          await c.config('SET', 'maxmemory', '0')
        })
        if (!f.refused) Object.assign(f, { injected: false, note: 'Redis never refused a write' })
        f.restoredAt = f.end = now()
      },
      'op-release-chat': async (f) => {
        Object.assign(f, { target: 'operator', scope: 'none' })
        const c = await withDirect(async (c) => {
          for (const chat of r.shuffle(chats)) {
            const [h, hi] = await c.hmget(keys.chat(chat).state, 'h', 'hi')
            if (h) return { chat, h, hi }
          }
          return null
        })
        if (!c) return (f.injected = false)
        f.start = now()
        const res = await withAdmin((a) => a.releaseChat(c.chat, { ifIncarnation: c.hi, by: 'chaos', reason: 'campaign' }))
        f.end = now()
        f.result = res.status
        if (res.status !== 'released') return (f.injected = false)
        f.revokes = { chat: c.chat, inc: c.hi }
        f.affects = [c.h]
      },
      'op-skip': async (f) => {
        Object.assign(f, { target: 'operator', scope: 'none' })
        // a burst on one chat makes a queue; the operator drops one waiting ticket from it
        for (let attempt = 0; attempt < 4; attempt++) {
          const chat = r.pick(chats)
          for (let i = 0; i < 4; i++) sendMsg(chat, i % 3)
          const c = await withDirect(async (c) => {
            const until = now() + L
            while (now() < until) {
              for (const ch of [chat, ...chats]) {
                const h = await c.hgetall(keys.chat(ch).state)
                const t = Object.keys(h).find((k) => k.startsWith('t:'))
                if (t) return { chat: ch, ticket: Number(t.slice(2)), rid: h[t].split('|')[3] }
              }
              await sleep(3)
            }
            return null
          })
          if (!c) continue
          f.start = now()
          const res = await withAdmin((a) => a.skipTicket(c.chat, c.ticket, { by: 'chaos' }))
          f.end = now()
          f.result = res.status
          f.affects = [c.rid]
          if (res.status === 'skipped') return
        }
        f.injected = false
      },
      'op-yield': async (f) => {
        Object.assign(f, { target: 'operator', scope: 'none' })
        const res = await withAdmin((a) => a.requestYield(provider, { by: 'chaos' }))
        f.end = now()
        f.result = res.status
        if (res.status !== 'requested') return (f.injected = false)
        f.affects = [res.leader.replicaId]
      },
      'op-revoke-lead': async (f) => {
        Object.assign(f, { target: 'operator', scope: 'none' })
        const res = await withAdmin((a) => a.revokeLead(provider, { by: 'chaos' }))
        f.end = now()
        f.result = res.status
        if (res.status !== 'revoked') return (f.injected = false)
        f.revokes = { lead: true, inc: res.holder.incarnation }
        f.affects = [res.holder.replicaId]
      },
      'op-evict': async (f) => {
        const rep = pickLive()
        Object.assign(f, { target: rep.replicaId, inc: rep.inc })
        const res = await withAdmin((a) => a.evictReplica(rep.replicaId, { ifIncarnation: rep.inc, by: 'chaos' }))
        f.end = now()
        f.result = res.status
        if (res.status !== 'evicted') return (f.injected = false)
        f.revokes = { inc: rep.inc }
        f.killedInc = null
      },
      // ---- high availability: the master changes under the replicas (f.failover: the invariant
      // 'failover-stall' bounds how soon every waiting chat moves on after restoredAt)
      'sentinel-failover': async (f) => {
        // SENTINEL FAILOVER promotes the replica at once and demotes the old master only after: the
        // writes the old master accepts in between are lost (measured: up to ~1 s of them). Data loss.
        Object.assign(f, { target: 'redis', scope: 'global', failover: true, dataLoss: true })
        await run.sentinels.ready(20_000)
        f.start = f.lossAt = now()
        const old = await run.sentinels.master()
        run.primary = run.sentinels.server(await run.sentinels.failover(30_000))
        // the loss window closes once the old master is demoted (it refuses writes from then on)
        const end = now() + 20_000
        while ((await roleOf(old)) === 'master' && now() < end) await sleep(20)
        f.restoredAt = f.end = now()
      },
      'sentinel-failover-lossy': async (f) => {
        Object.assign(f, { target: 'redis', scope: 'global', dataLoss: true, failover: true })
        const s = run.sentinels
        await s.ready(20_000)
        const masterPort = await s.master()
        const replicaPort = await s.replicaPort()
        f.start = now()
        // cut replication (the replica keeps what it has), let the master take writes alone, kill it,
        // and point the replica back at the dead master: the sentinels promote it without those writes
        await withClient(replicaPort, (c) => c.call('REPLICAOF', 'NO', 'ONE'))
        f.lossAt = now()
        await sleep(L / 2)
        await s.server(masterPort).kill('SIGKILL')
        await withClient(replicaPort, (c) => c.call('REPLICAOF', '127.0.0.1', String(masterPort)))
        const end = now() + 30_000
        while (!((await s.master()) === replicaPort && (await roleOf(replicaPort)) === 'master')) {
          if (now() > end) throw new Error('the sentinels did not promote the replica in time')
          await sleep(50)
        }
        run.primary = s.server(replicaPort)
        f.restoredAt = f.end = now()
      },
      'cluster-failover': async (f) => clusterPromotion(f, 'failover'),
      'cluster-master-kill': async (f) => clusterPromotion(f, 'kill'),
      'cluster-takeover': async (f) => clusterPromotion(f, 'takeover'),
      'cluster-master-restart': async (f) => {
        Object.assign(f, { target: 'redis', scope: 'global', dataLoss: true })
        const node = r.pick(run.cluster.nodes)
        f.lossAt = now()
        await node.restart({ downMs: L / 2 })
        await clusterReady(run.cluster.nodes, 15_000)
        f.restoredAt = f.end = now()
      },
    }
    /** The replica of one master (by the replicas' INFO replication): [master, replica] procs. */
    const masterAndReplica = async () => {
      for (const node of r.shuffle([...run.cluster.nodes])) {
        if ((await roleOf(node.port)) !== 'slave') continue
        const info = await withClient(node.port, (c) => c.info('replication')).catch(() => '')
        const masterPort = Number(/master_port:(\d+)/.exec(info)?.[1])
        const master = run.cluster.nodes.find((n) => n.port === masterPort)
        if (master && /master_link_status:up/.test(info)) return [master, node]
      }
      throw new Error('no replica in sync')
    }
    /**
     * A Cluster master replaced by its replica: 'failover' (CLUSTER FAILOVER: coordinated, no loss),
     * 'kill' (SIGKILL; the replica is promoted after cluster-node-timeout; writes not yet replicated
     * are lost), 'takeover' (CLUSTER FAILOVER TAKEOVER with the master alive: no agreement, so the
     * writes on their way to the replica are lost). The old master comes back as a replica.
     */
    async function clusterPromotion(f, how) {
      Object.assign(f, { target: 'redis', scope: 'global', failover: true, dataLoss: how !== 'failover' })
      const [master, replica] = await masterAndReplica()
      f.start = f.lossAt = now()
      if (how === 'kill') await master.kill('SIGKILL')
      else await withClient(replica.port, (c) => c.call('CLUSTER', 'FAILOVER', ...(how === 'takeover' ? ['TAKEOVER'] : [])))
      const end = now() + 30_000
      while ((await roleOf(replica.port)) !== 'master') {
        if (now() > end) throw new Error(`replica ${replica.port} not promoted in time`)
        await sleep(50)
      }
      f.restoredAt = f.end = now()
      if (how === 'kill') await master.restart()
      await clusterReady(run.cluster.nodes, 30_000, { replicas: 1 }).catch(() => {})
    }
    const runFault = async (kind) => {
      const f = { kind, start: now(), scope: 'replica', injected: true }
      run.faults.push(f)
      if (!live().length) await sleep(L)
      try {
        if (kind.startsWith('pause-')) await inject.pause(f, Number(kind.slice(6)))
        else if (kind === 'net-cut') await inject.net(f, (p) => p.cut(), 1.5 * L)
        else if (kind === 'net-stall') await inject.net(f, (p) => p.stall(), 1.5 * L)
        else if (kind === 'net-slow') await inject.net(f, (p) => p.slow(L / 6), 2 * L)
        else if (kind === 'renew-latency') await inject.net(f, (p) => p.slow(0.2 * L), 2 * L)
        else await inject[kind](f)
      } catch (e) {
        f.injected = false
        f.error = String(e?.message ?? e)
      }
      f.end ??= now()
      // a killed replica comes back (new incarnation, same replicaId)
      const dead = run.replicas.filter((x) => !x.alive && !x.restarting)
      for (const rep of dead) {
        if (kind === 'op-evict') continue
        rep.restarting = true
        restartLater(rep, r.float(0.2, 1.5) * L)
        run.restarts[run.restarts.length - 1].then(() => (rep.restarting = false))
      }
    }

    await sleep(0.8 * L)
    for (let i = 0; i < plan.faults.length; i++) {
      await runFault(plan.faults[i])
      await sleep(plan.gaps[i] * L)
    }
    await sleep(1.2 * L)
    await Promise.all(run.restarts)
    // ---------------------------------------------------------------- drain and stop
    stopGen = true
    await gen
    const drainEnd = now() + run.workerCfg.turnWaitMs + L
    while (now() < drainEnd && run.replicas.some((x) => x.alive && x.outstanding.size)) await sleep(50)
    const stops = await Promise.all(run.replicas.map((x) => x.stop(4 * L)))
    if (stops.includes('timeout')) result.note = `a replica did not stop within ${4 * L}ms`
    await sleep(L + 300)
    evictionWatchDone = true
    await evictionWatch
    // ---------------------------------------------------------------- keys left
    const keysLeft = []
    const bound = 2 * L + run.workerCfg.idleKeyTtlMs + 1000
    const masterPorts = async () => {
      if (run.sentinels) return [await run.sentinels.master()]
      if (!run.cluster) return [run.primary.port]
      const roles = await Promise.all(run.cluster.nodes.map((n) => roleOf(n.port)))
      return run.cluster.nodes.filter((_, i) => roles[i] !== 'slave').map((n) => n.port)
    }
    const nodes = await masterPorts()
    for (const port of nodes) {
      await withClient(port, async (c) => {
        let cursor = '0'
        do {
          const [next, batch] = await c.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500)
          cursor = next
          for (const k of batch) {
            if (k.startsWith(`${neighbour.prefix}:`)) continue
            const ttl = await c.pttl(k)
            if (ttl === -2) continue
            const parsed = keys.parse(k)
            const kind =
              k === keys.schema
                ? 'schema'
                : k === keys.events
                  ? 'events'
                  : k === keys.replicaIndex
                    ? 'replicas'
                    : (parsed?.kind ?? 'unknown')
            if (kind === 'schema' || kind === 'events' || kind === 'checkpoint') continue
            if (['chat', 'queue', 'lead', 'lock', 'replicas'].includes(kind) && ttl > 0 && ttl <= bound) continue
            // an operator's eviction tombstone (refuses the evicted incarnation's beats) lives on, by design
            if (kind === 'replica' && ttl > 0) {
              const fields = await c.hkeys(k)
              if (fields.every((x) => x === 'ev' || x === 'evat')) continue
            }
            keysLeft.push(`${k} (${kind}) left with ttl ${ttl}ms`)
          }
        } while (cursor !== '0')
      }).catch((e) => keysLeft.push(`scan failed on :${port}: ${e.message}`))
    }
    // ---------------------------------------------------------------- the neighbour, untouched
    const lostData = run.faults.some((f) => f.injected && f.dataLoss)
    const neighbourChanged = lostData ? null : await withDirect((c) => neighbourDiff(c, neighbourKeys))
    // ---------------------------------------------------------------- check
    const events = []
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.jsonl'))) {
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
        if (!line) continue
        try {
          events.push(JSON.parse(line))
        } catch {}
      }
    }
    // the precise moment of a kill at a chosen point: the worker wrote it just before SIGKILL
    for (const f of run.faults) {
      const kp = events.find((e) => e.type === 'killpoint' && e.inc === f.killedInc)
      if (kp) f.killedAt = kp.t
    }
    const checked = checkRun({
      events,
      sink: run.sink,
      faults: run.faults.filter((f) => f.injected),
      cfg: { ...run.workerCfg, sentMessages: sent, evicting, handoffSlackMs: opts.handoffSlackMs ?? 400 },
      keysLeft,
      neighbourChanged,
      t0,
    })
    result.violations = checked.violations
    result.stats = checked.stats
    result.faults = run.faults.map((f) => ({
      kind: f.kind,
      injected: f.injected,
      target: f.target,
      note: f.note ?? f.error ?? f.result,
      evicted: f.evicted,
      late: f.late,
    }))
    for (const f of run.faults) if (f.injected && !f.late) result.injected[f.kind] = (result.injected[f.kind] ?? 0) + 1
    result.warnings = countBy(
      events.filter((e) => e.type === 'warning'),
      (e) => e.code,
    )
    result.losses = countBy(
      events.filter((e) => e.type === 'lost'),
      (e) => e.reason,
    )
    // How many recent releases each server change sent again (the server-changed warning says it).
    result.resends = events
      .filter((e) => e.type === 'warning' && e.code === 'server-changed')
      .map((e) => Number(/(\d+) recent release\(s\) sent again/.exec(e.message ?? '')?.[1] ?? NaN))
      .filter((n) => Number.isFinite(n))
  } catch (e) {
    result.error = String(e?.stack ?? e)
  } finally {
    stopGen = evictionWatchDone = true
    await Promise.all(run.replicas.map((x) => x.kill().catch(() => {})))
    await Promise.all(proxies.map((p) => p.close().catch(() => {})))
    if (run.cluster) await run.cluster.stop().catch(() => {})
    await Promise.all(servers.map((s) => s.stop().catch(() => {})))
    result.wallMs = now() - t0
    if (!result.error && result.violations.length === 0 && !opts.keep) rmSync(dir, { recursive: true, force: true })
  }
  return result
}

function countBy(list, f) {
  const out = {}
  for (const x of list) out[f(x)] = (out[f(x)] ?? 0) + 1
  return out
}

export const pct = (xs, p) => {
  if (!xs.length) return null
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]
}

/** Run `runs` runs from `seed`; calls onRun after each. Returns the summary behind the table. */
export async function runCampaign({
  runs,
  seed,
  leaseMs = 1000,
  clusterEvery = 12,
  haEvery = 0,
  only,
  plans,
  replay,
  keep,
  onRun,
  maxMs,
} = {}) {
  const summary = {
    runs: 0,
    seed,
    leaseMs,
    errors: 0,
    faults: {},
    messages: 0,
    handled: 0,
    lostWithKilled: 0,
    failedExcused: 0,
    droppedByOperator: 0,
    explainedOverlaps: 0,
    marginLosses: 0,
    redisExpiredLosses: 0,
    pauseLossChecks: 0,
    staleRejected: 0,
    linChecked: 0,
    linUnchecked: 0,
    violations: Object.fromEntries(INVARIANTS.map((i) => [i, 0])),
    handoffs: [],
    queuedMoveOns: [],
    leaderFailovers: [],
    withdrawRepairs: [],
    failoverMoveOns: [],
    overlapWindows: [],
    resends: [],
    failing: [],
    warnings: {},
    losses: {},
    pauseLosses: {},
    wallMs: 0,
  }
  const started = now()
  for (let i = 0; i < runs; i++) {
    if (maxMs && now() - started > maxMs) break
    const s = replay ?? runSeed(seed, i)
    const res = await runOne(s, { leaseMs, clusterEvery, haEvery, keep, only: plans?.length ? plans[i % plans.length] : only })
    summary.runs++
    summary.wallMs += res.wallMs
    for (const [k, v] of Object.entries(res.injected)) summary.faults[k] = (summary.faults[k] ?? 0) + v
    const st = res.stats
    for (const k of [
      'messages',
      'handled',
      'lostWithKilled',
      'failedExcused',
      'droppedByOperator',
      'explainedOverlaps',
      'marginLosses',
      'redisExpiredLosses',
      'staleRejected',
      'linChecked',
      'linUnchecked',
    ])
      summary[k] += st[k] ?? 0
    summary.pauseLossChecks += st.pauseLossCheck ?? 0
    summary.handoffs.push(...(st.handoffs ?? []))
    summary.queuedMoveOns.push(...(st.queuedMoveOns ?? []))
    summary.withdrawRepairs.push(...(st.withdrawRepairMs ?? []))
    summary.failoverMoveOns.push(...(st.failoverMoveOns ?? []))
    summary.overlapWindows.push(...(st.overlapWindows ?? []))
    summary.resends.push(...(res.resends ?? []))
    summary.leaderFailovers.push(...(st.leaderFailovers ?? []))
    for (const [k, v] of Object.entries(st.pauseLosses ?? {})) {
      const t = (summary.pauseLosses[k] ??= { faults: 0, margin: 0, expired: 0, kept: 0 })
      for (const f of Object.keys(t)) t[f] += v[f]
    }
    for (const [k, v] of Object.entries(res.warnings ?? {})) summary.warnings[k] = (summary.warnings[k] ?? 0) + v
    for (const [k, v] of Object.entries(res.losses ?? {})) summary.losses[k] = (summary.losses[k] ?? 0) + v
    for (const v of res.violations) summary.violations[v.invariant]++
    if (res.error) summary.errors++
    if (res.error || res.violations.length) summary.failing.push(res)
    onRun?.(res, i, summary)
  }
  summary.handoffP50 = pct(summary.handoffs, 50)
  summary.handoffP99 = pct(summary.handoffs, 99)
  summary.queuedMoveOnP50 = pct(summary.queuedMoveOns, 50)
  summary.queuedMoveOnMax = summary.queuedMoveOns.length ? Math.max(...summary.queuedMoveOns) : null
  summary.leaderP50 = pct(summary.leaderFailovers, 50)
  summary.leaderP99 = pct(summary.leaderFailovers, 99)
  summary.withdrawP50 = pct(summary.withdrawRepairs, 50)
  summary.failoverStats = {}
  for (const kind of new Set(summary.failoverMoveOns.map((x) => x.kind))) {
    const of = summary.failoverMoveOns.filter((x) => x.kind === kind)
    const promotions = of.map((x) => x.promotionMs)
    const moves = of.map((x) => x.moveOnMs)
    summary.failoverStats[kind] = {
      n: of.length,
      promotionP50: pct(promotions, 50),
      promotionMax: Math.max(...promotions),
      moveOnP50: pct(moves, 50),
      moveOnMax: Math.max(...moves),
    }
  }
  summary.withdrawMax = summary.withdrawRepairs.length ? Math.max(...summary.withdrawRepairs) : null
  return summary
}

export { INVARIANTS }

/**
 * A neighbouring tenant's state, written by hand as docs/redis-layout.md spells it: a held chat with
 * a queue, its checkpoint and handover marker, the provider's lead, a lock and a replica record.
 * Returns each key with what it holds.
 */
async function writeNeighbour(c, keys) {
  const chat = keys.chat('chat:0')
  const want = [
    [chat.state, 'hash', { h: 'eu-pod', hi: 'eu-inc', f: '41', lf: '41', n: '3', s: '2' }],
    [chat.queue, 'zset', { 3: '3' }],
    [chat.checkpoint, 'hash', { v: '1', o: 'eu-inc', d: '{"step":"paid"}', fl: 'order' }],
    [chat.handover, 'hash', { r: 'eu-pod', i: 'eu-inc', f: '41' }],
    [keys.lead('provider:whatsapp'), 'hash', { h: 'eu-pod', hi: 'eu-inc', f: '9' }],
    [keys.lock('batch'), 'hash', { h: 'eu-pod', hi: 'eu-inc', f: '5' }],
    [keys.replica('r1'), 'hash', { inc: 'eu-inc', beat: '1' }],
  ]
  for (const [k, type, v] of want) {
    if (type === 'hash') await c.hset(k, v)
    else for (const [m, score] of Object.entries(v)) await c.zadd(k, score, m)
  }
  return want
}

/** What changed in the neighbour's keys: one line per key. */
async function neighbourDiff(c, want) {
  const changed = []
  for (const [k, type, v] of want) {
    const got = type === 'hash' ? await c.hgetall(k) : Object.fromEntries(pairs(await c.zrange(k, 0, -1, 'WITHSCORES')))
    const ttl = await c.pttl(k)
    if (JSON.stringify(sorted(got)) !== JSON.stringify(sorted(v)) || ttl !== -1)
      changed.push(`${k}: ${JSON.stringify(sorted(got))} ttl ${ttl} (was ${JSON.stringify(sorted(v))}, no expiry)`)
  }
  return changed
}
const pairs = (flat) => Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i], flat[2 * i + 1]])
const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)))
