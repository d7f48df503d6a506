// `npm run bench` (= npm run build && node bench/run.js [flags]): the benchmark of issue 8.
// Starts its own redis-server (and a 3-master cluster for the scale section) on free loopback ports,
// stops them by pid at the end, on errors and on SIGINT. Writes bench/results/latest.{json,md} and
// docs/performance.md.
import { mkdirSync, writeFileSync, readFileSync } from 'node:fs'
import { cpus, totalmem, release, platform, loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { dirname, join, resolve } from 'node:path'
import { parseArgs, HELP } from './lib/args.js'
import { assertRedisServerAvailable, startRedis, startCluster, redisServerVersion } from '../scripts/redis-procs.mjs'
import { runLimit } from './sections/limit.js'
import { runTurns } from './sections/turns.js'
import { runOpenLoop } from './sections/openloop.js'
import { openLoopChart } from './lib/openloop-chart.js'
import { runFailover } from './sections/failover.js'
import { runScale, measureMemory } from './sections/scale.js'
import { runStartup } from './sections/startup.js'
import { runRenewal, runRenewalLoaded } from './sections/renewal.js'
import { evaluateTargets, markdown } from './lib/report.js'
import { performancePage, writePerformancePage } from './lib/performance-page.js'

const here = dirname(fileURLToPath(import.meta.url))
const PERFORMANCE_PAGE = join(here, '..', 'docs', 'performance.md')
const OPENLOOP_CHART = join(here, '..', 'docs', 'openloop.svg')
const log = (s) => process.stderr.write(`${s}\n`)

function machine() {
  let model = cpus()[0]?.model ?? 'unknown'
  try {
    model = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model
  } catch {
    /* not Linux */
  }
  return {
    cpus: cpus().length,
    cpuModel: model.trim(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${platform()} ${release()}`,
    node: process.version,
    redis: redisServerVersion(),
    loadAvgAtStart: loadavg().map((x) => Math.round(x * 10) / 10),
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2))
  if (o.help) {
    process.stdout.write(HELP)
    return 0
  }
  if (o.render) {
    // Re-render the report and docs/performance.md from a saved latest.json (after a change of wording).
    const saved = JSON.parse(readFileSync(o.render, 'utf8'))
    saved.targets = evaluateTargets(saved, { ...saved.config, work: saved.config.work })
    const md = markdown(saved)
    writeFileSync(join(dirname(resolve(o.render)), 'latest.md'), `# botmesh-coord benchmark\n\n${md}\n`)
    if (saved.openloop) writeFileSync(join(dirname(resolve(o.render)), 'openloop.svg'), openLoopChart(saved.openloop))
    if (o.docs) {
      if (saved.openloop) writeFileSync(OPENLOOP_CHART, openLoopChart(saved.openloop))
      writePerformancePage(PERFORMANCE_PAGE, performancePage(saved, md))
    }
    process.stdout.write(`${md}\n`)
    return 0
  }
  assertRedisServerAvailable() // one line and exit 1, before anything starts
  const started = Date.now()
  const servers = []
  const stopAll = () => Promise.all(servers.map((s) => s.stop().catch(() => {})))
  let interrupted = false
  const onSignal = (sig) => {
    if (interrupted) return
    interrupted = true
    log(`\n${sig}: stopping the benchmark's redis-server processes`)
    stopAll().finally(() => process.exit(130))
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  const result = {
    preset: o.preset,
    startedAt: new Date(started).toISOString(),
    machine: machine(),
    config: {
      replicas: o.replicas,
      inflight: o.inflight,
      chats: o.chats,
      messages: o.messages,
      maxSeconds: o.maxSeconds,
      repeats: o.repeats,
      work: o.work,
      patterns: o.patterns,
      adapters: o.adapters,
      leaseMs: o.leaseMs,
      peerTtlMs: o.peerTtlMs,
      retryMs: o.retryMs,
      failoverLeaseMs: o.failoverLeaseMs,
      failoverTrials: o.failoverTrials,
      scaleChats: o.scaleChats,
      scaleTickets: o.scaleTickets,
      scaleSmall: o.scaleSmall,
      refreshes: o.refreshes,
      memoryChats: o.memoryChats,
      startupRounds: o.startupRounds,
      renewLeases: o.renewLeases,
      renewCycles: o.renewCycles,
    },
    errors: {},
    sectionSeconds: {},
  }
  const section = async (name, fn) => {
    if (!o.sections.includes(name)) return
    log(`== ${name}`)
    const t0 = Date.now()
    try {
      await fn()
      result.sectionSeconds[name] = Math.round((Date.now() - t0) / 1000)
      log(`== ${name}: ${result.sectionSeconds[name]} s`)
    } catch (e) {
      result.errors[name] = String(e?.stack ?? e)
        .split('\n')
        .slice(0, 4)
        .join(' | ')
      log(`!! ${name} failed: ${result.errors[name]}`)
    }
  }
  try {
    const redis = await startRedis()
    servers.push(redis)
    log(`redis-server ${result.machine.redis} pid ${redis.pid} on port ${redis.port}`)
    await section('limit', async () => {
      result.limit = await runLimit({
        url: redis.url,
        port: redis.port,
        replicas: o.replicas,
        requests: o.limitRequests,
        seconds: o.limitSeconds,
      })
      for (const x of result.limit)
        log(
          `  ${x.clients} client(s): PING ${x.pingRedisBenchmark}/s, EVALSHA ${x.evalshaRedisBenchmark}/s (redis-benchmark); ioredis ${x.pingIoredis} / ${x.evalshaIoredis}`,
        )
    })
    await section('turns', async () => {
      result.turns = await runTurns({ url: redis.url, ...o, works: o.work }, log)
    })
    await section('openloop', async () => {
      result.openloop = await runOpenLoop({ url: redis.url, ...o }, log)
    })
    await section('renewal', async () => {
      result.renewal = await runRenewal({ url: redis.url, counts: o.renewLeases, cycles: o.renewCycles }, log)
      if (o.renewHeld.length)
        result.renewalLoaded = await runRenewalLoaded(
          { url: redis.url, held: o.renewHeld, leaseMs: o.renewHeldLeaseMs, cycles: o.renewCycles, busy: o.renewBusy },
          log,
        )
    })
    await section('failover', async () => {
      result.failover = await runFailover({ url: redis.url, leaseMs: o.failoverLeaseMs, trials: o.failoverTrials }, log)
    })
    await section('startup', async () => {
      result.startup = await runStartup({ url: redis.url, rounds: o.startupRounds }, log)
    })
    await section('scale', async () => {
      result.memory = await measureMemory(redis.url, o.memoryChats, o.repeats)
      log(
        `  memory: held chat ${result.memory.perHeldChatBytes} B, queued ticket ${result.memory.perQueuedTicketBytes} B, idle chat ${result.memory.perIdleChatBytes} B`,
      )
      result.scale = []
      const scaleOpts = {
        chats: o.scaleChats,
        tickets: o.scaleTickets,
        smallChats: o.scaleSmall,
        refreshes: o.refreshes,
        heldReplicas: o.heldReplicas,
      }
      result.scale.push(await runScale({ layout: 'standalone', url: redis.url, nodeUrls: [redis.url], ...scaleOpts }, log))
      if (o.cluster) {
        const cluster = await startCluster()
        servers.push(cluster)
        result.scale.push(
          await runScale({ layout: 'cluster', url: cluster.url, nodeUrls: cluster.nodes.map((n) => n.url), ...scaleOpts }, log),
        )
        await cluster.stop()
      }
    })
  } finally {
    await stopAll()
  }
  result.durationS = Math.round((Date.now() - started) / 1000)
  result.machine.loadAvgAtEnd = loadavg().map((x) => Math.round(x * 10) / 10)
  if (o.merge) {
    // Keep the saved run, and replace only the sections run now (noted per section).
    const outDirSaved = o.out ? resolve(o.out) : join(here, 'results')
    const saved = JSON.parse(readFileSync(join(outDirSaved, 'latest.json'), 'utf8'))
    const key = {
      limit: 'limit',
      turns: 'turns',
      openloop: 'openloop',
      renewal: 'renewal',
      failover: 'failover',
      startup: 'startup',
      scale: 'scale',
    }
    saved.merged = { ...(saved.merged ?? {}) }
    for (const s of o.sections) {
      if (result[key[s]] === undefined) continue
      saved[key[s]] = result[key[s]]
      if (s === 'scale') saved.memory = result.memory
      if (s === 'renewal') saved.renewalLoaded = result.renewalLoaded
      saved.sectionSeconds = { ...(saved.sectionSeconds ?? {}), [s]: result.sectionSeconds[s] }
      saved.merged[s] = { startedAt: result.startedAt, machine: result.machine, sections: o.sections, args: process.argv.slice(2) }
    }
    saved.errors = { ...(saved.errors ?? {}), ...result.errors }
    saved.config = {
      ...saved.config,
      ...Object.fromEntries(Object.entries(result.config).filter(([k]) => saved.config?.[k] === undefined)),
    }
    Object.assign(result, saved)
  }
  result.targets = evaluateTargets(result, o)
  const md = markdown(result)
  const outDir = o.out ? resolve(o.out) : join(here, 'results')
  mkdirSync(outDir, { recursive: true })
  writeFileSync(join(outDir, 'latest.json'), JSON.stringify(result, null, 2) + '\n')
  writeFileSync(join(outDir, 'latest.md'), `# botmesh-coord benchmark\n\n${md}\n`)
  if (result.openloop) {
    // The chart beside latest.md, and in docs/ beside the page; both link it as openloop.svg.
    const svg = openLoopChart(result.openloop)
    writeFileSync(join(outDir, 'openloop.svg'), svg)
    if (o.docs) writeFileSync(OPENLOOP_CHART, svg)
  }
  if (o.docs) writePerformancePage(PERFORMANCE_PAGE, performancePage(result, md))
  process.stdout.write(`${md}\n`)
  log(`results: ${join(outDir, 'latest.json')}, ${join(outDir, 'latest.md')}${o.docs ? `, ${PERFORMANCE_PAGE}` : ''}`)
  return Object.keys(result.errors).length ? 1 : 0
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (e) => {
    log(String(e?.stack ?? e))
    process.exitCode = 1
  },
)
