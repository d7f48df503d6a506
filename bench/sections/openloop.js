// Section: open loop. Messages arrive as people send them, at a rate, whatever is in flight: the parent
// draws one seeded schedule per scenario (Poisson arrivals at a global rate, each arrival a burst of
// messages 30 ms apart to one uniformly random replica and chat, lognormal handler times), and every
// adapter runs that same schedule, one run each, the adapters interleaved (their order turns by one
// place per scenario). Scenarios: a steady sweep of offered rates, an overload phase and the recovery
// after it, and a steady rate with busy-loop processes beside the replicas (CPU contention).
import { fork, spawn } from 'node:child_process'
import { once as onceEvent } from 'node:events'
import { fileURLToPath } from 'node:url'
import { workerExecArgv } from '../lib/args.js'
import { Redis } from 'ioredis'
import { ADAPTERS } from '../workers/adapters.js'
import { parseCommandStats, parseInfo, diffStats, total, round, mulberry32, sharedNow, quantile } from '../lib/stats.js'
import { analyse, once } from './turns.js'

const WORKER = fileURLToPath(new URL('../workers/openloop-worker.js', import.meta.url))
const HEAP_WORKER = fileURLToPath(new URL('../workers/waiting-heap.js', import.meta.url))
const WINDOW_MS = 500
const BURST_GAP_MS = 30

const maxOf = (xs, empty) => {
  let m = -Infinity
  for (const x of xs) if (x > m) m = x
  return m === -Infinity ? empty : m
}

const redisCpuUs = (text) => {
  const i = parseInfo(text)
  return (Number(i.used_cpu_user) + Number(i.used_cpu_sys)) * 1e6
}

/**
 * One schedule: phases [{ rate (msg/s), seconds }] one after the other. Arrivals are Poisson at
 * rate / burst per second; each arrival is `burst` messages BURST_GAP_MS apart, to one replica and chat.
 * → per replica { times (ms from the start, sorted), chats, handlerMs }, and the totals.
 */
export function makeSchedule({ seed, phases, replicas, chats, burst, handlerMedianMs, handlerSigma }) {
  const rand = mulberry32(seed)
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand())
  const per = Array.from({ length: replicas }, () => [])
  let start = 0
  let messages = 0
  for (const ph of phases) {
    const end = start + ph.seconds * 1000
    const arrivalsPerMs = ph.rate / burst / 1000
    let t = start
    for (;;) {
      t += -Math.log(1 - rand()) / arrivalsPerMs
      if (t >= end) break
      const r = Math.floor(rand() * replicas)
      const chat = Math.floor(rand() * chats)
      for (let k = 0; k < burst; k++) {
        per[r].push([t + k * BURST_GAP_MS, chat, handlerMedianMs * Math.exp(handlerSigma * normal())])
        messages++
      }
    }
    start = end
  }
  return {
    messages,
    spanMs: start,
    replicas: per.map((list) => {
      list.sort((a, b) => a[0] - b[0])
      return { times: list.map((x) => round(x[0], 3)), chats: list.map((x) => x[1]), handlerMs: list.map((x) => round(x[2], 3)) }
    }),
  }
}

const q = (sorted, p) => {
  const v = quantile(sorted, p)
  return v === null ? null : round(v, 2)
}
const waitSummary = (values) => {
  const s = Float64Array.from(values).sort()
  return { n: s.length, p50: q(s, 0.5), p99: q(s, 0.99), p999: q(s, 0.999), max: s.length ? round(s[s.length - 1], 2) : null }
}

function busyLoops(n) {
  return Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }))
}

async function runOne(url, admin, cfg, sched) {
  const workers = Array.from({ length: cfg.replicas }, () =>
    fork(WORKER, [], {
      execArgv: workerExecArgv(),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  )
  let busy = []
  try {
    await Promise.all(
      workers.map((w, i) => {
        const p = once(w, 'ready')
        w.send({ type: 'setup', cfg: { ...cfg, url, replica: i, seed: cfg.seed + i * 101 } })
        return p
      }),
    )
    busy = busyLoops(cfg.busy ?? 0)
    const cpuBefore = redisCpuUs(await admin.info('cpu'))
    const before = parseCommandStats(await admin.info('commandstats'))
    const t0 = sharedNow() + 250
    const done = workers.map((w) => once(w, 'done'))
    workers.forEach((w, i) => w.send({ type: 'go', cfg: { cap: cfg.cap, drainMs: cfg.drainMs }, schedule: { t0, ...sched.replicas[i] } }))
    const results = await Promise.all(done)
    const server = diffStats(before, parseCommandStats(await admin.info('commandstats')), 2)
    const redisCpu = redisCpuUs(await admin.info('cpu')) - cpuBefore
    for (const b of busy) if (b.exitCode === null) process.kill(b.pid, 'SIGKILL')
    busy = []
    const closed = workers.map((w) => new Promise((r) => w.once('exit', r)))
    workers.forEach((w) => w.send({ type: 'close' }))
    await Promise.race([Promise.all(closed), new Promise((r) => setTimeout(r, 4000))])
    return measure(results, cfg, sched, t0, server, redisCpu)
  } finally {
    for (const b of busy) if (b.exitCode === null) process.kill(b.pid, 'SIGKILL')
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL')
  }
}

function measure(results, cfg, sched, t0, server, redisCpu) {
  const a = analyse(results, { pattern: 'uniform', chats: cfg.chats }) // overlaps, per-replica FIFO, fences
  const arrivals = []
  const grants = []
  const ends = []
  const waits = []
  for (const r of results) {
    const x = r.records
    for (let i = 0; i < x.length; i += r.fields) {
      arrivals.push(x[i + 2] - t0)
      grants.push(x[i + 3] - t0)
      ends.push(x[i + 5] - t0)
      waits.push(x[i + 3] - x[i + 2])
    }
  }
  const completed = waits.length
  const unfinished = results.flatMap((r) => r.unfinished.map(([arr, g]) => [arr - t0, g >= 0 ? g - t0 : null, r.stoppedAt - t0]))
  // Not released when the run stopped: the wait so far counts (a lower bound when not yet granted).
  const allArrivals = arrivals.concat(unfinished.map((u) => u[0]))
  const allWaits = waits.concat(unfinished.map(([arr, g, stop]) => (g === null ? stop - arr : g - arr)))
  const allGrants = grants.concat(unfinished.filter((u) => u[1] !== null).map((u) => u[1]))
  const span = sched.spanMs
  const inWindow = (lo, hi) => ends.reduce((n, e) => n + (e >= lo && e < hi ? 1 : 0), 0)
  const lastEnd = maxOf(ends, 0)
  const client = {}
  for (const r of results) for (const [k, v] of Object.entries(r.commands)) client[k] = (client[k] ?? 0) + v
  const per = (v) => round(v / Math.max(1, completed), 2)
  const lags = Float64Array.from(results.flatMap((r) => r.lags)).sort()
  const out = {
    scenario: cfg.scenario,
    adapter: cfg.adapter,
    offered: cfg.rate,
    offeredActual: round(sched.messages / (span / 1000), 1),
    phases: cfg.phases,
    busyLoops: cfg.busy ?? 0,
    messages: sched.messages,
    completed,
    errors: results.reduce((n, r) => n + r.errorCount, 0),
    errorSamples: results.flatMap((r) => r.errors).slice(0, 3),
    harnessDrops: results.reduce((n, r) => n + r.drops, 0),
    unfinished: unfinished.length,
    achievedInWindow: round(inWindow(0, span) / (span / 1000), 1),
    achievedOverall: round(completed / Math.max(0.001, lastEnd / 1000), 1),
    waitMs: waitSummary(allWaits),
    harnessLagMs: { p99: q(lags, 0.99), max: lags.length ? round(lags[lags.length - 1], 2) : null },
    redisCallsPerMsg: per(total(server)),
    clientCmdsPerMsg: per(total(client)),
    redisCpuUsPerMsg: round(redisCpu / Math.max(1, completed), 1),
    clientCpuUsPerMsg: round(results.reduce((n, r) => n + r.cpuUs, 0) / Math.max(1, completed), 1),
    overlaps: a.overlaps,
    outOfOrder: a.outOfOrder,
    invertedPairs: a.invertedPairs,
    fenceRegressions: a.fenceRegressions,
    clientCommands: client,
    serverCommands: server,
  }
  // Turn-wait p99 per 500 ms window of arrivals: [start s, messages, p99 ms].
  const windows = []
  for (let lo = 0; lo < span; lo += WINDOW_MS) {
    const w = []
    for (let i = 0; i < allArrivals.length; i++) if (allArrivals[i] >= lo && allArrivals[i] < lo + WINDOW_MS) w.push(allWaits[i])
    windows.push([lo / 1000, w.length, waitSummary(w).p99])
  }
  out.windows = windows
  if (cfg.scenario === 'overload') {
    const [ov, rec] = cfg.phases
    const tEnd = ov.seconds * 1000
    out.achievedOverload = round(inWindow(0, tEnd) / ov.seconds, 1)
    out.achievedRecover = round(inWindow(tEnd, span) / rec.seconds, 1)
    // Backlog: messages that arrived during the overload and had no turn yet when it ended.
    const backlog = []
    for (let i = 0; i < allArrivals.length; i++) {
      const g = i < completed ? grants[i] : unfinished[i - completed][1]
      if (allArrivals[i] < tEnd && (g === null || g > tEnd)) backlog.push(g)
    }
    out.backlogAtOverloadEnd = backlog.length
    if (backlog.length) {
      const drained = backlog.every((g) => g !== null)
      const until = drained
        ? maxOf(backlog, tEnd)
        : maxOf(
            results.map((r) => r.stoppedAt - t0),
            tEnd,
          )
      const granted = allGrants.reduce((n, g) => n + (g > tEnd && g <= until ? 1 : 0), 0)
      out.drained = drained
      out.drainS = round((until - tEnd) / 1000, 2)
      out.drainRate = round(granted / Math.max(0.001, (until - tEnd) / 1000), 1)
    }
  }
  return out
}

/** The time from the overload's end to the first 500 ms window whose wait p99 is within 2× the steady p99. */
function recovery(row, steadyP99) {
  const tEnd = row.phases[0].seconds
  if (!steadyP99) return null
  const w = row.windows.find(([s, n, p99]) => s >= tEnd && n > 0 && p99 !== null && p99 <= 2 * steadyP99)
  return w ? round(w[0] - tEnd, 2) : null
}

/**
 * o: { url, replicas, chats, adapters, leaseMs, peerTtlMs, retryMs, warmup, openloopRates, openloopSeconds,
 *      openloopOverloadRate, openloopOverloadS, openloopRecoverRate, openloopRecoverS, openloopContentionRate,
 *      openloopContentionS, openloopBusy, openloopHandlerMs, openloopHandlerSigma, openloopBurst, openloopCap, openloopDrainS }
 */
export async function runOpenLoop(o, log) {
  const admin = new Redis(o.url)
  admin.on('error', () => {})
  const adapters = o.adapters.filter((a) => ADAPTERS.includes(a))
  const config = {
    replicas: o.replicas,
    chats: o.chats,
    rates: o.openloopRates,
    seconds: o.openloopSeconds,
    overload: { rate: o.openloopOverloadRate, seconds: o.openloopOverloadS },
    recover: { rate: o.openloopRecoverRate, seconds: o.openloopRecoverS },
    contention: { rate: o.openloopContentionRate, seconds: o.openloopContentionS, busyLoops: o.openloopBusy },
    burst: o.openloopBurst,
    burstGapMs: BURST_GAP_MS,
    handlerMedianMs: o.openloopHandlerMs,
    handlerSigma: o.openloopHandlerSigma,
    cap: o.openloopCap,
    drainS: o.openloopDrainS,
    retryMs: o.retryMs,
    windowMs: WINDOW_MS,
  }
  const scenarios = o.openloopRates.map((rate) => ({ scenario: 'sweep', rate, phases: [{ rate, seconds: o.openloopSeconds }] }))
  // The steady p99 at the recover rate: from the sweep, or its own steady run.
  if (!o.openloopRates.includes(o.openloopRecoverRate))
    scenarios.push({
      scenario: 'reference',
      rate: o.openloopRecoverRate,
      phases: [{ rate: o.openloopRecoverRate, seconds: o.openloopSeconds }],
    })
  scenarios.push({
    scenario: 'overload',
    rate: o.openloopOverloadRate,
    phases: [
      { rate: o.openloopOverloadRate, seconds: o.openloopOverloadS },
      { rate: o.openloopRecoverRate, seconds: o.openloopRecoverS },
    ],
  })
  scenarios.push({
    scenario: 'contention',
    rate: o.openloopContentionRate,
    busy: o.openloopBusy,
    phases: [{ rate: o.openloopContentionRate, seconds: o.openloopContentionS }],
  })
  const rows = []
  try {
    for (const [k, sc] of scenarios.entries()) {
      if (sc.scenario === 'overload' && sc.rate === 'auto') {
        // Twice the SET NX lock's capacity, as far as the sweep measured it (its knee).
        const knee = sweepKnee(rows, 'naive')
        sc.rate = knee === null ? AUTO_OVERLOAD_FALLBACK : 2 * knee
        sc.phases[0].rate = sc.rate
        config.overload = { ...config.overload, rate: sc.rate, auto: { knee } }
      }
      const seed = 424242 + k * 7919
      const sched = makeSchedule({
        seed,
        phases: sc.phases,
        replicas: o.replicas,
        chats: o.chats,
        burst: o.openloopBurst,
        handlerMedianMs: o.openloopHandlerMs,
        handlerSigma: o.openloopHandlerSigma,
      })
      const order = adapters.map((_, i) => adapters[(i + k) % adapters.length])
      for (const adapter of order) {
        const cfg = {
          ...sc,
          adapter,
          replicas: o.replicas,
          chats: o.chats,
          prefix: `ol-${adapter}-${sc.scenario}-${k}`,
          leaseMs: o.leaseMs,
          peerTtlMs: o.peerTtlMs,
          retryMs: o.retryMs,
          waitMs: 120_000,
          warmup: o.warmup,
          seed,
          cap: o.openloopCap,
          drainMs: o.openloopDrainS * 1000,
        }
        const row = await runOne(o.url, admin, cfg, sched)
        rows.push(row)
        log(
          `  ${sc.scenario.padEnd(10)} ${String(sc.rate).padStart(6)} msg/s ${adapter.padEnd(9)} achieved ${row.achievedInWindow} (overall ${row.achievedOverall})  wait p50/p99/max ${row.waitMs.p50}/${row.waitMs.p99}/${row.waitMs.max} ms  calls/msg ${row.redisCallsPerMsg} cmds/msg ${row.clientCmdsPerMsg}${row.errors ? `  errors ${row.errors}` : ''}${row.harnessDrops ? `  drops ${row.harnessDrops}` : ''}${row.unfinished ? `  unfinished ${row.unfinished}` : ''}${row.overlaps || row.outOfOrder ? `  overlaps ${row.overlaps} order ${row.outOfOrder}` : ''}`,
        )
        await admin.flushall()
      }
    }
  } finally {
    admin.disconnect()
  }
  const steady = (adapter, rate) =>
    rows.find((r) => (r.scenario === 'sweep' || r.scenario === 'reference') && r.adapter === adapter && r.offered === rate)
  for (const r of rows.filter((x) => x.scenario === 'overload')) {
    const ref = steady(r.adapter, o.openloopRecoverRate)
    r.steadyP99AtRecover = ref?.waitMs.p99 ?? null
    // Only against a steady run that was served (everything completed at ≥ 95% of its offered rate).
    r.steadyServed = Boolean(ref && served(ref))
    r.recoveryS = r.steadyServed ? recovery(r, r.steadyP99AtRecover) : null
  }
  const knees = {}
  for (const a of adapters) knees[a] = sweepKnee(rows, a)
  const waitingHeap = adapters.includes('botmesh') ? await measureWaitingHeap(o.url, o.openloopHeapMessages) : null
  if (waitingHeap)
    log(
      `  a waiting message holds ${waitingHeap.bytesPerMessage} B of its replica's heap (${waitingHeap.messages} waiting on ${waitingHeap.chats} held chats)`,
    )
  return { config, adapters, rows, knees, waitingHeap }
}

/**
 * The replica's heap per waiting message (workers/waiting-heap.js, in its own process with
 * --expose-gc): `messages` waiting on 100 held chats, after a full collection.
 */
async function measureWaitingHeap(url, messages, chats = 100) {
  const child = fork(HEAP_WORKER, [JSON.stringify({ url, prefix: `ol-heap-${Date.now()}`, chats, messages })], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const exited = onceEvent(child, 'exit')
  const [reply] = await Promise.race([
    onceEvent(child, 'message'),
    exited.then(([code]) => {
      throw new Error(`the waiting-heap measurement exited with ${code}`)
    }),
  ])
  await exited
  return { ...reply, chats }
}

/** The overload rate when the SET NX lock was not swept, or kept up at no swept rate. */
const AUTO_OVERLOAD_FALLBACK = 9000

/** A run that was served: every message completed, at ≥ 95% of the rate its schedule offered. */
const served = (r) => r.achievedOverall >= 0.95 * r.offeredActual && !r.harnessDrops && !r.unfinished

/** The highest swept rate an adapter still served, with no turn failed (null: none). */
function sweepKnee(rows, adapter) {
  const ok = rows
    .filter((r) => r.scenario === 'sweep' && r.adapter === adapter && served(r) && !r.errors)
    .sort((x, y) => x.offered - y.offered)
  return ok.length ? ok[ok.length - 1].offered : null
}
