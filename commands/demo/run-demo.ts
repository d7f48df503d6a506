/**
 * `demo` itself: read its flags, start the replicas on the Redis demo-target.ts chose, show the
 * dashboard (or one summary line per second) until Ctrl-C or --duration, and stop everything.
 * Split from index.ts, which declares the command and its rehearsal sub-commands.
 */
import type { Command } from 'commander'
import { SCHEMA_VERSION, loadIo, loadWriteSide, maskUrl, type Layout } from '../lib.js'
import { globalOptions } from '../target.js'
import { configPath } from '../config/contexts.js'
import { usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { makeColour } from '../output/colour.js'
import type { ControlReply, ControlRequest } from './control.js'
import { Demo, PROVIDER, type Summary } from './orchestrator.js'
import { demoConnection, demoPrefix, demoRedis, type DemoRedis } from './demo-target.js'

/** What the demo passes to the dashboard (commands/tui/dashboard.tsx, RunDashboardOptions). */
export interface DemoDashboardOptions {
  url: string
  prefix: string
  layout: Layout
  /** Log file of each replica, listed in the dashboard's help screen. */
  logFiles: Record<string, string>
  color?: boolean
  /** The running demo's rehearsal actions (kill, freeze, start, …), for dashboard keys that want them. */
  demo: { control(req: ControlRequest): Promise<ControlReply> }
}
type RunDashboard = (options: DemoDashboardOptions) => Promise<void>

/** The dashboard, loaded only when the demo opens it (ink and react stay out of --no-tui runs); null if it cannot load. */
async function loadDashboard(): Promise<RunDashboard | null> {
  try {
    const mod = (await import('../tui/dashboard.js')) as { runDashboard?: RunDashboard }
    return typeof mod.runDashboard === 'function' ? mod.runDashboard : null
  } catch {
    return null
  }
}

function positiveInt(name: string, v: string, max = 1000): number {
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1 || n > max) throw usage(`--${name} must be a whole number from 1 to ${max}, not ${v}`)
  return n
}

export interface DemoFlags {
  replicas: string
  chats: string
  rate: string
  /** ms (parsed by the options) */
  leaseMs: number
  providerDownMs: number
  /** ms */
  turnWait?: number
  duration?: number
  tui: boolean
  rehearsal?: boolean
}

/** `demo --rehearsal`: slow enough to follow the runbook by hand from a second shell (each can still be overridden). */
export const REHEARSAL = { leaseMs: 30_000, providerDownMs: 60_000, rate: '1', turnWaitMs: 60_000 }

/** One summary line for people. */
function summaryLine(s: Summary, c: ReturnType<typeof makeColour>): string {
  const time = s.t.slice(11, 19)
  const reps = s.replicas
    .map((r) => {
      const tag = r.state === 'running' ? '' : r.state === 'frozen' ? c.cyan(' frozen') : c.red(` ${r.state}`)
      return `${r.replicaId} ${r.handled}${tag}`
    })
    .join('  ')
  const leader = s.provider.leader ? `${c.bold(s.provider.leader)} fence ${s.provider.fence}` : c.yellow('none')
  const lock = s.lock.holder ? `${s.lock.holder} fence ${s.lock.fence}` : '-'
  const lost = s.leaseLosses ? c.red(String(s.leaseLosses)) : '0'
  return (
    `${c.dim(time)}  msgs ${s.messages.handled} (+${s.messages.perSecond}/s)  ${reps}  ` +
    `${PROVIDER} ${leader}  lock ${lock}  lease-lost ${lost}  handovers ${s.handovers.total}` +
    (s.messages.lost ? `  lost ${s.messages.lost}` : '')
  )
}

/** The demo's numbers: the flags checked, with the rehearsal's settings where a flag was not given. */
function demoSettings(cmd: Command, flags: DemoFlags) {
  const replicas = positiveInt('replicas', flags.replicas, 20)
  const chats = positiveInt('chats', flags.chats, 10_000)
  const given = (k: string) => cmd.getOptionValueSource(k) === 'cli'
  const rehearsal = flags.rehearsal === true
  const rate = Number(rehearsal && !given('rate') ? REHEARSAL.rate : flags.rate)
  if (!Number.isFinite(rate) || rate <= 0 || rate > 2000)
    throw usage(`--rate must be a number of messages per second from 0 to 2000, not ${flags.rate}`)
  const leaseMs = rehearsal && !given('leaseMs') ? REHEARSAL.leaseMs : flags.leaseMs
  const providerDownMs = rehearsal && !given('providerDownMs') ? REHEARSAL.providerDownMs : flags.providerDownMs
  const turnWaitMs = flags.turnWait ?? (rehearsal ? REHEARSAL.turnWaitMs : 30_000)
  const durationMs = flags.duration ?? null
  return { replicas, chats, rate, leaseMs, providerDownMs, turnWaitMs, durationMs, rehearsal }
}
type Settings = ReturnType<typeof demoSettings>

/** What the steps of one run share: where it prints, how, and what it runs with. */
interface Run {
  prefix: string
  json: boolean
  color?: boolean
  c: ReturnType<typeof makeColour>
  out(l: string): void
  err(l: string): void
  settings: Settings
  redis: DemoRedis
  contextName: string | null
  connection: string
}

/** The Demo on this Redis, with the library's read and write sides; the throwaway server stopped if it cannot be built. */
async function createDemo(run: Run): Promise<Demo> {
  const { settings: s, redis } = run
  try {
    return new Demo({
      url: redis.url,
      prefix: run.prefix,
      layout: redis.layout,
      replicas: s.replicas,
      chats: s.chats,
      rate: s.rate,
      leaseMs: s.leaseMs,
      providerDownMs: s.providerDownMs,
      turnWaitMs: s.turnWaitMs,
      rehearsal: s.rehearsal,
      connection: run.connection,
      redis: redis.throwaway,
      json: run.json,
      out: run.out,
      err: run.err,
      io: await loadIo(),
      write: await loadWriteSide(),
    })
  } catch (e) {
    await redis.throwaway?.stop()
    throw e
  }
}

/** Ctrl-C / SIGTERM: stop everything, by pid. A second one kills what is left at once. */
function stopOnSignals(demo: Demo) {
  let signalled: NodeJS.Signals | null = null
  let wake: () => void = () => {}
  const stopped = new Promise<void>((resolve) => (wake = resolve))
  const onSignal = (s: NodeJS.Signals) => {
    if (signalled) {
      for (const pid of demo.pids()) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone
        }
      }
      process.exit(130)
    }
    signalled = s
    wake()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return {
    stopped,
    wake: () => wake(),
    signalled: () => signalled !== null,
    off: () => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    },
  }
}
type Stop = ReturnType<typeof stopOnSignals>

/** What the demo started, once: one JSON object, or the lines that say how to rehearse on it. */
function printStart(run: Run, demo: Demo): void {
  const { out, c, settings: s, contextName, redis } = run
  const { url, throwaway } = redis
  const st = demo.state()
  const p = run.connection ? ` ${run.connection}` : ''
  if (run.json) {
    out(
      JSON.stringify({
        schemaVersion: SCHEMA_VERSION,
        kind: 'demo-start',
        ...st,
        url: maskUrl(url),
        pids: demo.pids(),
        context: contextName,
        rehearsal: s.rehearsal,
        leaseMs: s.leaseMs,
        providerDownMs: s.providerDownMs,
        turnWaitMs: s.turnWaitMs,
        rate: s.rate,
      }),
    )
    return
  }
  const where = throwaway ? `a throwaway redis-server at ${url} (pid ${throwaway.pid})` : maskUrl(url)
  out(
    `${c.bold('botmesh-coord demo')}${s.rehearsal ? ' (rehearsal)' : ''}: ${s.replicas} replicas on ${where}, prefix ${run.prefix}, lease ${formatMs(s.leaseMs)}, provider down ${formatMs(s.providerDownMs)}, turn wait ${formatMs(s.turnWaitMs)}, ${s.rate} msg/s over ${s.chats} chats`,
  )
  if (contextName)
    out(c.dim(`context ${contextName} written to ${configPath()}: every command below reaches this demo with --context ${contextName}`))
  for (const r of st.replicas) out(`  ${r.replicaId}  pid ${r.pid}  log ${r.log}`)
  out(
    c.dim(
      `rehearse from another terminal: botmesh-coord${p} demo hang r2 | kill r2 | freeze r2 ${formatMs(Math.max(8000, s.leaseMs + 10_000))} | start r2 | close-transport | open-transport | yield | stale-write r2 | deploy-flow faq`,
    ),
  )
  out(c.dim(`look with: botmesh-coord${p} replicas ls      Ctrl-C stops everything`))
}

/** The dashboard, or one summary line per second, until a signal or --duration; `done` tells whether the dashboard ended. */
async function showUntilStopped(run: Run, demo: Demo, stop: Stop, wantTui: boolean) {
  const { json, out, err, c } = run
  const { url, layout } = run.redis
  let tui = wantTui && !json && Boolean(process.stdout.isTTY)
  const dashboard = tui ? await loadDashboard() : null
  if (tui && !dashboard) {
    err('the dashboard could not be loaded: showing one summary line per second instead (--no-tui)')
    tui = false
  }
  if (run.settings.durationMs !== null) setTimeout(() => stop.wake(), run.settings.durationMs).unref()

  const view = { dashboard: dashboard !== null, done: false }
  if (dashboard) {
    await Promise.race([
      dashboard({
        url,
        prefix: run.prefix,
        layout,
        logFiles: demo.logs,
        color: run.color,
        demo: { control: (req) => demo.control(req) },
      }).finally(() => (view.done = true)),
      stop.stopped,
    ])
  } else {
    const timer = setInterval(() => {
      void demo.summary().then((s) => {
        if (stop.signalled()) return
        out(json ? JSON.stringify({ schemaVersion: SCHEMA_VERSION, ...s }) : summaryLine(s, c))
      })
    }, 1000)
    await stop.stopped
    clearInterval(timer)
  }
  return view
}

export async function runDemo(cmd: Command, flags: DemoFlags): Promise<number> {
  const g = globalOptions(cmd)
  const prefix = demoPrefix(cmd)
  const json = Boolean(g.json)
  const c = makeColour({ color: g.color })
  const out = (l: string) => process.stdout.write(`${l}\n`)
  const err = (l: string) => process.stderr.write(`${json ? l : c.dim(l)}\n`)
  const settings = demoSettings(cmd, flags)
  const redis = await demoRedis(cmd, g.layout, err)
  const run: Run = { prefix, json, color: g.color, c, out, err, settings, redis, ...demoConnection(prefix, redis) }
  const demo = await createDemo(run)
  const stop = stopOnSignals(demo)

  try {
    await demo.start()
  } catch (e) {
    await demo.stop()
    throw e
  }
  printStart(run, demo)
  const view = await showUntilStopped(run, demo, stop, flags.tui)

  if (!json) err(`stopping: ${demo.pids().map(String).join(' ')}`)
  const pids = demo.pids()
  await demo.stop()
  stop.off()
  const logs = demo.logs
  if (json) out(JSON.stringify({ schemaVersion: SCHEMA_VERSION, kind: 'demo-stop', stoppedPids: pids, logs }))
  else out(`stopped ${pids.length} processes (${pids.join(', ')}); logs kept in ${Object.values(logs)[0]?.replace(/\/[^/]+$/, '')}`)
  // Stopped by a signal or --duration while the dashboard still renders: it has no way to be closed
  // from outside yet, so end the process here (ink restores the terminal on exit).
  if (view.dashboard && !view.done) process.exit(EXIT.ok)
  return EXIT.ok
}

function formatMs(n: number): string {
  return n % 1000 === 0 ? `${n / 1000}s` : `${n}ms`
}
