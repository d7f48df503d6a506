import { Command, Option } from 'commander'
import { DEFAULT_URL, SCHEMA_VERSION, loadIo, loadWriteSide, maskUrl, type Layout } from '../lib.js'
import { checkPrefix, connectionWords, globalOptions, resolveTarget } from '../target.js'
import { configPath, readConfig, writeConfig } from '../config/contexts.js'
import { cliDuration, durationOption } from '../duration.js'
import { run } from '../run.js'
import { CliError, usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { makeColour } from '../output/colour.js'
import { request, type ControlReply, type ControlRequest } from './control.js'
import { Demo, PROVIDER, type Summary } from './orchestrator.js'
import { findOnPath, probeRedis, startThrowawayRedis, type ThrowawayRedis } from './redis-server.js'

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

/** The demo's prefix: `demo` unless --prefix / BOTMESH_PREFIX was given, or the prefix of the context --context names. */
function demoPrefix(cmd: Command): string {
  const source = cmd.getOptionValueSourceWithGlobals('prefix')
  if (source === 'cli' || source === 'env') return checkPrefix(globalOptions(cmd).prefix)
  const ctxSource = cmd.getOptionValueSourceWithGlobals('context')
  if (ctxSource === 'cli' || ctxSource === 'env') return resolveTarget(cmd).prefix
  return 'demo'
}

/** The context the demo writes for its own Redis and prefix, so that printed commands say `--context demo`. */
function demoContextName(prefix: string): string {
  return prefix === 'demo' ? 'demo' : `demo-${prefix.replace(/[^\w.-]/g, '_')}`
}

/**
 * Write (or update) the demo's context in the config file: the URL (without credentials), prefix and
 * layout. The current context is left as it is. Null when it cannot be written, or the URL carries
 * a password (a context stores where a password comes from, never the password).
 */
function writeDemoContext(name: string, url: string, prefix: string, layout: Layout): string | null {
  if (/^[a-z][a-z0-9+.-]*:\/\/[^@/]*@/i.test(url)) return null
  try {
    const config = readConfig()
    config.contexts[name] = { url, prefix, layout }
    writeConfig(config)
    return name
  } catch {
    return null
  }
}

function positiveInt(name: string, v: string, max = 1000): number {
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1 || n > max) throw usage(`--${name} must be a whole number from 1 to ${max}, not ${v}`)
  return n
}

interface DemoFlags {
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

async function runDemo(cmd: Command, flags: DemoFlags): Promise<number> {
  const g = globalOptions(cmd)
  const prefix = demoPrefix(cmd)
  const json = Boolean(g.json)
  const c = makeColour({ color: g.color })
  const out = (l: string) => process.stdout.write(`${l}\n`)
  const err = (l: string) => process.stderr.write(`${json ? l : c.dim(l)}\n`)
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

  // Redis: the one --url / REDIS_URL (or --context, or the current context) names, if it answers;
  // with none of them, a throwaway redis-server of its own on a free loopback port — never whatever
  // happens to answer on 127.0.0.1:6379. The password (the URL's, --password-file, REDIS_PASSWORD,
  // the context's) reaches the replicas through their environment only.
  const target = resolveTarget(cmd)
  let url = target.url
  const urlSource = cmd.getOptionValueSourceWithGlobals('url')
  // A demo context (demo, demo-<prefix>) names a throwaway server of an earlier run: start a new one.
  const ownContext = target.context !== null && /^demo(-|$)/.test(target.context) && urlSource !== 'cli' && urlSource !== 'env'
  const explicit = !ownContext && (urlSource === 'cli' || urlSource === 'env' || url !== DEFAULT_URL || target.context !== null)
  let layout: Layout
  let throwaway: ThrowawayRedis | null = null
  if (explicit) {
    const probe = await probeRedis(url)
    if (!('layout' in probe)) {
      throw new CliError(`${probe.error}; without --url / REDIS_URL / --context the demo starts its own redis-server`, probe.code)
    }
    layout = g.layout === 'standalone' || g.layout === 'cluster' ? g.layout : probe.layout
  } else {
    const bin = findOnPath('redis-server')
    if (!bin) {
      throw new CliError(
        'no --url given and no redis-server on PATH to start one for the demo: install Redis (apt-get install -y redis-server, or brew install redis) or point --url at one',
        EXIT.unreachable,
      )
    }
    throwaway = await startThrowawayRedis(bin)
    url = throwaway.url
    layout = 'standalone'
    err(`no --url given: started a redis-server of its own at ${url} (pid ${throwaway.pid}, no persistence); it stops with the demo`)
  }

  // Printed commands reach this Redis as pasted: the context used, else one the demo writes (demo).
  let contextName = target.context
  if (!contextName || throwaway) contextName = writeDemoContext(demoContextName(prefix), maskUrl(url), prefix, layout)
  const connection = contextName ? `--context ${contextName}` : connectionWords({ url: maskUrl(url), prefix, context: null })

  let demo: Demo
  try {
    demo = new Demo({
      url,
      prefix,
      layout,
      replicas,
      chats,
      rate,
      leaseMs,
      providerDownMs,
      turnWaitMs,
      rehearsal,
      connection,
      redis: throwaway,
      json,
      out,
      err,
      io: await loadIo(),
      write: await loadWriteSide(),
    })
  } catch (e) {
    await throwaway?.stop()
    throw e
  }

  // Ctrl-C / SIGTERM: stop everything, by pid. A second one kills what is left at once.
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

  try {
    await demo.start()
  } catch (e) {
    await demo.stop()
    throw e
  }

  const st = demo.state()
  const p = connection ? ` ${connection}` : ''
  if (json) {
    out(
      JSON.stringify({
        schemaVersion: SCHEMA_VERSION,
        kind: 'demo-start',
        ...st,
        url: maskUrl(url),
        pids: demo.pids(),
        context: contextName,
        rehearsal,
        leaseMs,
        providerDownMs,
        turnWaitMs,
        rate,
      }),
    )
  } else {
    const where = throwaway ? `a throwaway redis-server at ${url} (pid ${throwaway.pid})` : maskUrl(url)
    out(
      `${c.bold('botmesh-coord demo')}${rehearsal ? ' (rehearsal)' : ''}: ${replicas} replicas on ${where}, prefix ${prefix}, lease ${formatMs(leaseMs)}, provider down ${formatMs(providerDownMs)}, turn wait ${formatMs(turnWaitMs)}, ${rate} msg/s over ${chats} chats`,
    )
    if (contextName)
      out(c.dim(`context ${contextName} written to ${configPath()}: every command below reaches this demo with --context ${contextName}`))
    for (const r of st.replicas) out(`  ${r.replicaId}  pid ${r.pid}  log ${r.log}`)
    out(
      c.dim(
        `rehearse from another terminal: botmesh-coord${p} demo hang r2 | kill r2 | freeze r2 ${formatMs(Math.max(8000, leaseMs + 10_000))} | start r2 | close-transport | open-transport | yield | stale-write r2 | deploy-flow faq`,
      ),
    )
    out(c.dim(`look with: botmesh-coord${p} replicas ls      Ctrl-C stops everything`))
  }

  let tui = flags.tui && !json && Boolean(process.stdout.isTTY)
  const dashboard = tui ? await loadDashboard() : null
  if (tui && !dashboard) {
    err('the dashboard could not be loaded: showing one summary line per second instead (--no-tui)')
    tui = false
  }
  if (durationMs !== null) setTimeout(() => wake(), durationMs).unref()

  let dashboardDone = false
  if (dashboard) {
    await Promise.race([
      dashboard({ url, prefix, layout, logFiles: demo.logs, color: g.color, demo: { control: (req) => demo.control(req) } }).finally(
        () => (dashboardDone = true),
      ),
      stopped,
    ])
  } else {
    const timer = setInterval(() => {
      void demo.summary().then((s) => {
        if (signalled) return
        out(json ? JSON.stringify({ schemaVersion: SCHEMA_VERSION, ...s }) : summaryLine(s, c))
      })
    }, 1000)
    await stopped
    clearInterval(timer)
  }

  if (!json) err(`stopping: ${demo.pids().map(String).join(' ')}`)
  const pids = demo.pids()
  await demo.stop()
  process.off('SIGINT', onSignal)
  process.off('SIGTERM', onSignal)
  const logs = demo.logs
  if (json) out(JSON.stringify({ schemaVersion: SCHEMA_VERSION, kind: 'demo-stop', stoppedPids: pids, logs }))
  else out(`stopped ${pids.length} processes (${pids.join(', ')}); logs kept in ${Object.values(logs)[0]?.replace(/\/[^/]+$/, '')}`)
  // Stopped by a signal or --duration while the dashboard still renders: it has no way to be closed
  // from outside yet, so end the process here (ink restores the terminal on exit).
  if (dashboard && !dashboardDone) process.exit(EXIT.ok)
  return EXIT.ok
}

function formatMs(n: number): string {
  return n % 1000 === 0 ? `${n / 1000}s` : `${n}ms`
}

/** A rehearsal sub-command: one request to the running demo, its answer on stdout. */
function rehearsal(
  name: string,
  description: string,
  example: string,
  build: (args: string[], opts: Record<string, string>) => ControlRequest,
): Command {
  const cmd: Command = new Command(name).description(description).addHelpText('after', `\nExample:\n  botmesh-coord demo ${example}`)
  return cmd.action(
    run(
      async (_ctx, ...args: unknown[]) => {
        const positional = args
          .slice(0, -1)
          .filter((a) => a !== undefined)
          .map(String) // commander passes the arguments, then the options
        const reply = await request(demoPrefix(cmd), build(positional, cmd.opts()))
        if (globalOptions(cmd).json)
          process.stdout.write(`${JSON.stringify({ schemaVersion: SCHEMA_VERSION, kind: `demo-${name}`, ...reply })}\n`)
        else if (reply.state) printStatus(reply)
        else process.stdout.write(`${reply.message}\n`)
        return reply.ok ? EXIT.ok : EXIT.conflict
      },
      { connect: false },
    ),
  )
}

function printStatus(reply: ControlReply): void {
  const s = reply.state!
  process.stdout.write(`demo pid ${s.pid}, prefix ${s.prefix}, ${s.url}${s.redis ? ` (throwaway redis-server pid ${s.redis.pid})` : ''}\n`)
  for (const r of s.replicas) process.stdout.write(`  ${r.replicaId}  ${r.state.padEnd(8)} pid ${r.pid ?? '-'}  log ${r.log}\n`)
}

/** `demo`: real replicas on a local Redis, the dashboard on them, and incident rehearsal. */
export function demoCommand(): Command {
  const demo: Command = new Command('demo')
    .description('run real replicas on a local Redis (started if none) with the dashboard: a first look, and incident rehearsal')
    .addOption(new Option('--replicas <n>', 'replica processes').default('3'))
    .addOption(new Option('--chats <n>', 'chats the traffic goes to (the first tenth are hot)').default('20'))
    .addOption(new Option('--rate <n>', 'inbound messages per second, over all replicas').default('10'))
    .addOption(
      durationOption('--lease-ms <duration>', 'lease length of every replica (failover time)', { min: 300, default: '5s', timer: true }),
    )
    .addOption(
      durationOption('--provider-down-ms <duration>', 'a leader whose transport stays closed this long yields', {
        min: 300,
        default: '5s',
        timer: true,
      }),
    )
    .addOption(
      durationOption('--turn-wait <duration>', "how long a replica's message waits for its chat's turn (turnWaitMs; default 30s)", {
        min: 500,
        timer: true,
      }),
    )
    .addOption(
      new Option(
        '--rehearsal',
        'settings slow enough to follow the runbook by hand: lease 30s, provider down 1m, 1 msg/s, turn wait 1m, checkpoints 1h, markers 2h',
      ),
    )
    .addOption(durationOption('--duration <duration>', 'stop by itself after this long (scripts), e.g. 40s', { min: 1 }))
    .addOption(new Option('--no-tui', 'no dashboard: one summary line per second (with --json: one JSON object per line)'))
    .addHelpText(
      'after',
      `
Examples:
  botmesh-coord demo
  botmesh-coord demo --rehearsal
  botmesh-coord demo --no-tui --lease-ms 3s --duration 40s
  botmesh-coord --url redis://127.0.0.1:6380 demo --replicas 5 --rate 50

Without --url / REDIS_URL / --context it starts a redis-server of its own on a free loopback port (no
persistence) and stops it on exit. The prefix is "demo" unless --prefix is given. It writes a context
(demo) so that the commands it prints reach it: --context demo. Rehearse from another terminal:
  botmesh-coord demo hang r2 [chat]       r2's handler of the chat's next message stops finishing while it holds the turn
  botmesh-coord demo kill r2              SIGKILL a replica: its leases expire, its chats move
  botmesh-coord demo freeze r2 8s         SIGSTOP for 8 s, then SIGCONT
  botmesh-coord demo start r2             start it again: same replicaId, new incarnation
  botmesh-coord demo close-transport      the leader's transport closes: it yields after --provider-down-ms
  botmesh-coord demo open-transport       it reopens (before the yield, nothing happens)
  botmesh-coord demo yield [--to r3]      an operator's yield request (CoordinationAdmin.requestYield)
  botmesh-coord demo stale-write r2       r2 writes a checkpoint without the turn's fence on a chat it does not hold
  botmesh-coord demo deploy-flow faq      a rolling deploy of a changed flow (old checkpoints: not resumed)
  botmesh-coord demo status               replicas, pids and log files of the running demo`,
    )
  demo.action(run(async (_ctx, flags: DemoFlags) => runDemo(demo, flags), { connect: false }))

  demo.addCommand(
    rehearsal('kill', 'SIGKILL a replica of the running demo', 'kill r2', ([replica]) => ({ cmd: 'kill', replica })).argument(
      '<replica>',
      'r1, r2, …',
    ),
  )
  demo.addCommand(
    rehearsal('freeze', 'SIGSTOP a replica for a while, then SIGCONT', 'freeze r2 8s', ([replica, duration]) => {
      const ms = cliDuration(duration!, 'duration', { min: 100, max: 3_600_000 })
      return { cmd: 'freeze', replica, seconds: ms / 1000 }
    })
      .argument('<replica>', 'r1, r2, …')
      .argument('<duration>', 'how long, e.g. 8s'),
  )
  demo.addCommand(
    rehearsal('start', 'start a stopped or killed replica again (new incarnation)', 'start r2 --flow-version 2', ([replica], o) => ({
      cmd: 'start',
      replica,
      ...(o.flowVersion ? { flowVersion: o.flowVersion } : {}),
    }))
      .argument('<replica>', 'r1, r2, …')
      .addOption(
        new Option(
          '--flow-version <v>',
          "run another version of the demo's flows (a rolling deploy of a changed flow: other fingerprints)",
        ),
      ),
  )
  demo.addCommand(
    rehearsal('close-transport', `close the transport of ${PROVIDER} on its leader`, 'close-transport', () => ({ cmd: 'close-transport' })),
  )
  demo.addCommand(rehearsal('open-transport', 'reopen a closed transport', 'open-transport', () => ({ cmd: 'open-transport' })))
  demo.addCommand(
    rehearsal('yield', `ask the leader of ${PROVIDER} to step down`, 'yield --to r3', (_a, o) => ({ cmd: 'yield', to: o.to })).addOption(
      new Option('--to <replica>', 'only this standby may take the lead'),
    ),
  )
  demo.addCommand(
    rehearsal(
      'hang',
      "a replica's handler of a chat's next message stops finishing while it holds the turn (released by chat release)",
      'hang r2 chat:1',
      ([replica, chat]) => ({ cmd: 'hang', replica, ...(chat ? { chat } : {}) }),
    )
      .argument('<replica>', 'r1, r2, …')
      .argument('[chat]', 'the chat (default chat:1, a hot one)'),
  )
  demo.addCommand(
    rehearsal(
      'stale-write',
      "a replica writes a checkpoint without the turn's fence, on a chat it does not hold (a runtime that does not pass turn.fence)",
      'stale-write r2',
      ([replica, chat]) => ({ cmd: 'stale-write', replica, ...(chat ? { chat } : {}) }),
    )
      .argument('<replica>', 'the writer: r1, r2, …')
      .argument('[chat]', 'the chat (default: one with a checkpoint the writer holds no part of)'),
  )
  demo.addCommand(
    rehearsal(
      'deploy-flow',
      'a rolling deploy of a changed flow: every replica restarts in turn running its next version (another fingerprint)',
      'deploy-flow faq',
      ([flow], o) => ({ cmd: 'deploy-flow', flow, ...(o.flowVersion ? { version: o.flowVersion } : {}) }),
    )
      .argument('<flow>', 'order or faq')
      .addOption(new Option('--flow-version <v>', "the flow's version deployed (default: the next one)")),
  )
  demo.addCommand(rehearsal('status', 'replicas, pids and log files of the running demo', 'status', () => ({ cmd: 'status' })))
  return demo
}
