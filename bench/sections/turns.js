// Section 2: turns. P replica processes per scenario, every adapter in the same run, interleaved.
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { workerExecArgv } from '../lib/args.js'
import { Redis } from 'ioredis'
import { ADAPTERS } from '../workers/adapters.js'
import { parseCommandStats, parseInfo, diffStats, total, summarize, inversions, round, aggregateRuns } from '../lib/stats.js'

const redisCpuUs = (text) => {
  const i = parseInfo(text)
  return (Number(i.used_cpu_user) + Number(i.used_cpu_sys)) * 1e6
}

const WORKER = fileURLToPath(new URL('../workers/turn-worker.js', import.meta.url))

export function once(child, type) {
  return new Promise((resolve, reject) => {
    const onMsg = (m) => {
      if (m.type === type) {
        cleanup()
        resolve(m)
      } else if (m.type === 'error') {
        cleanup()
        reject(new Error(m.error))
      }
    }
    const onExit = (code) => {
      cleanup()
      reject(new Error(`worker exited (${code}) before '${type}'`))
    }
    const cleanup = () => {
      child.off('message', onMsg)
      child.off('exit', onExit)
    }
    child.on('message', onMsg)
    child.on('exit', onExit)
  })
}

/** Per chat: critical sections [grant, releaseStart] sorted by grant. */
export function analyse(perWorker, cfg) {
  const byChat = new Map()
  let messages = 0
  let first = Infinity
  let last = -Infinity
  const acquire = []
  const holds = []
  let outOfOrder = 0
  let invertedPairs = 0
  for (const [w, rec] of perWorker.entries()) {
    const { records, fields } = rec
    const mine = new Map() // chat -> [[grant, seq]]
    for (let i = 0; i < records.length; i += fields) {
      const [chat, seq, arrival, grant, relStart, relEnd, fence] = records.slice(i, i + fields)
      messages++
      first = Math.min(first, arrival)
      last = Math.max(last, relEnd)
      acquire.push(grant - arrival)
      holds.push(relStart - grant)
      if (!byChat.has(chat)) byChat.set(chat, [])
      byChat.get(chat).push({ w, seq, arrival, grant, relStart, fence })
      if (!mine.has(chat)) mine.set(chat, [])
      mine.get(chat).push([grant, seq])
    }
    // Order: this replica's messages for one chat, in the order they were served vs. arrival (seq).
    for (const list of mine.values()) {
      list.sort((a, b) => a[0] - b[0])
      let maxSeq = 0
      const seqs = list.map(([, s]) => s)
      for (const s of seqs) {
        if (s < maxSeq) outOfOrder++
        else maxSeq = s
      }
      invertedPairs += inversions(seqs)
    }
  }
  let overlaps = 0
  let fenceRegressions = 0
  const gaps = []
  const hotChats = cfg.pattern === 'hot1' ? new Set([0]) : cfg.pattern === 'hot10' ? null : null
  const hotLimit = cfg.pattern === 'hot10' ? Math.max(1, Math.round(cfg.chats / 10)) : Infinity
  for (const [chat, list] of byChat) {
    list.sort((a, b) => a.grant - b.grant)
    let openUntil = -Infinity
    let lastFence = -Infinity
    for (let i = 0; i < list.length; i++) {
      const m = list[i]
      if (m.grant < openUntil) overlaps++
      openUntil = Math.max(openUntil, m.relStart)
      if (m.fence) {
        if (m.fence <= lastFence) fenceRegressions++
        lastFence = m.fence
      }
      // Handoff gap: the previous holder's release to this grant, when this message was already waiting.
      const isHot = hotChats ? hotChats.has(chat) : chat < hotLimit
      if (i > 0 && isHot && m.arrival < list[i - 1].relStart) gaps.push(m.grant - list[i - 1].relStart)
    }
  }
  const elapsedS = (last - first) / 1000
  return {
    messages,
    elapsedS: round(elapsedS, 3),
    msgPerS: round(messages / elapsedS, 1),
    acquireMs: roundSummary(summarize(acquire)),
    holdMs: roundSummary(summarize(holds)),
    handoffGapMs: roundSummary(summarize(gaps)),
    overlaps,
    outOfOrder,
    invertedPairs,
    fenceRegressions,
  }
}

const roundSummary = (s) => ({ n: s.n, p50: round(s.p50, 3), p99: round(s.p99, 3), max: round(s.max, 3), mean: round(s.mean, 3) })

async function runScenario(url, admin, cfg, log) {
  const workers = Array.from({ length: cfg.replicas }, () =>
    fork(WORKER, [], {
      execArgv: workerExecArgv(),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  )
  try {
    const perWorker = Math.ceil(cfg.messages / cfg.replicas)
    const base = { ...cfg, url, messages: perWorker }
    await Promise.all(
      workers.map((w, i) => {
        const p = once(w, 'ready')
        w.send({ type: 'setup', cfg: { ...base, replica: i, seed: cfg.seed + i * 101 } })
        return p
      }),
    )
    const cpuBefore = redisCpuUs(await admin.info('cpu'))
    const before = parseCommandStats(await admin.info('commandstats'))
    const done = workers.map((w) => once(w, 'done'))
    workers.forEach((w, i) => w.send({ type: 'go', cfg: { ...base, replica: i, seed: cfg.seed + i * 101 } }))
    const results = await Promise.all(done)
    const server = diffStats(before, parseCommandStats(await admin.info('commandstats')), 2)
    const redisCpu = redisCpuUs(await admin.info('cpu')) - cpuBefore
    const closed = workers.map((w) => new Promise((r) => w.once('exit', r)))
    workers.forEach((w) => w.send({ type: 'close' }))
    await Promise.race([Promise.all(closed), new Promise((r) => setTimeout(r, 8000))])
    const a = analyse(results, cfg)
    const client = {}
    for (const r of results) for (const [k, v] of Object.entries(r.commands)) client[k] = (client[k] ?? 0) + v
    const errors = results.reduce((n, r) => n + r.errorCount, 0)
    const out = {
      adapter: cfg.adapter,
      pattern: cfg.pattern,
      workMs: cfg.workMs,
      ...a,
      errors,
      errorSamples: results.flatMap((r) => r.errors).slice(0, 3),
      roundTripsPerMsg: round(total(client) / Math.max(1, a.messages), 2),
      serverCommandsPerMsg: round(total(server) / Math.max(1, a.messages), 2),
      redisCpuUsPerMsg: round(redisCpu / Math.max(1, a.messages), 1),
      nodeCpuUsPerMsg: round(results.reduce((n, r) => n + r.cpuUs, 0) / Math.max(1, a.messages), 1),
      clientCommands: client,
      serverCommands: server,
    }
    if (cfg.pattern === 'hot1' && cfg.workMs > 0 && a.holdMs.mean) out.holdBoundPct = round((100 * out.msgPerS) / (1000 / a.holdMs.mean), 1)
    log(
      `  ${cfg.pattern.padEnd(7)} W=${cfg.workMs} ${cfg.adapter.padEnd(9)} ${String(out.msgPerS).padStart(8)} msg/s  acq p99 ${out.acquireMs.p99} ms  gap p50 ${out.handoffGapMs.p50}  rt/msg ${out.roundTripsPerMsg}  overlaps ${out.overlaps}  order ${out.outOfOrder}/${out.invertedPairs}${errors ? `  errors ${errors}` : ''}`,
    )
    return out
  } finally {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL')
  }
}

/**
 * o: { url, replicas, inflight, chats, messages, maxSeconds, works, patterns, adapters, leaseMs, peerTtlMs, retryMs, warmup, repeats }
 *
 * Every scenario runs `repeats` times. The repeats are the outer loop and the adapters' order turns
 * by one place per repeat (botmesh-coord first, then last, …), so that a change of load on the
 * machine falls on every adapter alike; each row is the median of its runs (stats.aggregateRuns).
 */
export async function runTurns(o, log) {
  const admin = new Redis(o.url)
  admin.on('error', () => {})
  const repeats = Math.max(1, Math.floor(o.repeats ?? 1))
  const adapters = o.adapters.filter((a) => ADAPTERS.includes(a))
  const runs = new Map() // pattern|work|adapter -> [run]
  try {
    for (let rep = 0; rep < repeats; rep++) {
      const order = adapters.map((_, i) => adapters[(i + rep) % adapters.length])
      if (repeats > 1) log(`  repeat ${rep + 1}/${repeats}: ${order.join(', ')}`)
      for (const pattern of o.patterns) {
        for (const workMs of o.works) {
          for (const adapter of order) {
            const cfg = {
              adapter,
              pattern,
              workMs,
              replicas: o.replicas,
              inflight: o.inflight,
              chats: pattern === 'hot1' ? 1 : o.chats,
              messages: o.messages,
              maxSeconds: o.maxSeconds,
              prefix: `bt-${adapter}-${pattern}-w${workMs}-r${rep}`,
              leaseMs: o.leaseMs,
              peerTtlMs: o.peerTtlMs,
              retryMs: o.retryMs,
              waitMs: 120_000,
              warmup: o.warmup,
              seed: 12345 + rep,
            }
            const key = `${pattern}|${workMs}|${adapter}`
            if (!runs.has(key)) runs.set(key, [])
            runs.get(key).push(await runScenario(o.url, admin, cfg, log))
            await admin.flushall()
          }
        }
      }
    }
  } finally {
    admin.disconnect()
  }
  // Rows in the report's order: traffic, work, adapter.
  const scenarios = []
  for (const pattern of o.patterns)
    for (const workMs of o.works)
      for (const adapter of adapters) {
        const r = runs.get(`${pattern}|${workMs}|${adapter}`)
        if (r?.length) scenarios.push(aggregateRuns(r))
      }
  return scenarios
}
