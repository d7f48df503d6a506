/**
 * The demo's replica processes: each one spawned detached with its own log file, followed over its IPC
 * channel, and stopped in order (SIGCONT, SIGTERM, SIGKILL after 6 s). It counts what the replicas
 * report (handled, failed, handovers, lease losses); it decides nothing from it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { DemoState } from './control.js'
import type { DemoOptions } from './options.js'

/** The names the replica program (./replica.ts) campaigns for and locks. */
export const PROVIDER = 'provider:demo'
export const JOB_LOCK = 'job:digest'

export type ReplicaState = 'starting' | 'running' | 'frozen' | 'dead' | 'stopped'

export interface Replica {
  id: string
  child: ChildProcess | null
  pid: number | null
  state: ReplicaState
  incarnation: string | null
  log: string
  handled: number
  failed: number
  /** Messages sent and not answered yet, oldest first (send times). */
  outstanding: number[]
  lost: number
  unfreezeTimer: NodeJS.Timeout | null
  /** Resolves the pending `demo start` reply once the replica reports ready. */
  onReady: (() => void) | null
  /** The fingerprint of each flow it runs (from its ready report). */
  fingerprints: Record<string, string>
  /** Resolves a pending `demo hang` once the replica reports its handler hung holding the turn. */
  onHung: ((chat: string, fence: number) => void) | null
}

/** What the replicas reported across all of them (the summary line's counters). */
export interface Tally {
  leaseLosses: number
  handovers: Record<string, number>
  /** The replica that last answered each chat. */
  servedBy: Record<string, string>
}

export type SupervisorOptions = Pick<
  DemoOptions,
  'url' | 'prefix' | 'layout' | 'replicas' | 'leaseMs' | 'providerDownMs' | 'rehearsal' | 'turnWaitMs' | 'err'
> & {
  /** A replica started, became ready or exited: the published state is stale. */
  onChange(): void
}

/** The package root (where package.json names botmesh-coord), from wherever this code was bundled. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 6; i++) {
    try {
      if ((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name === 'botmesh-coord') return dir
    } catch {
      // not here
    }
    dir = dirname(dir)
  }
  throw new Error('cannot find the botmesh-coord package folder')
}

export function replicaProgram(): string {
  return join(packageRoot(), 'dist', 'commands', 'demo', 'replica.js')
}

export class Supervisor {
  readonly replicas = new Map<string, Replica>()
  readonly tally: Tally = { leaseLosses: 0, handovers: {}, servedBy: {} }
  /** Flows deployed in another version (`demo deploy-flow`): every replica started from then on runs them. */
  readonly deploys: Record<string, string> = {}
  private readonly opts: SupervisorOptions
  private readonly program: string
  private stopping = false

  constructor(opts: SupervisorOptions) {
    this.opts = opts
    this.program = replicaProgram()
    if (!existsSync(this.program)) throw new Error(`${this.program} is missing: build first (npm run build)`)
    const logDir = mkdtempSync(join(tmpdir(), `botmesh-coord-demo-logs-`))
    for (let i = 1; i <= opts.replicas; i++) {
      const id = `r${i}`
      this.replicas.set(id, {
        id,
        child: null,
        pid: null,
        state: 'stopped',
        incarnation: null,
        log: join(logDir, `${id}.log`),
        handled: 0,
        failed: 0,
        outstanding: [],
        lost: 0,
        unfreezeTimer: null,
        onReady: null,
        fingerprints: {},
        onHung: null,
      })
    }
  }

  get all(): Replica[] {
    return [...this.replicas.values()]
  }

  get logs(): Record<string, string> {
    return Object.fromEntries(this.all.map((r) => [r.id, r.log]))
  }

  replica(id: string | undefined): Replica {
    const r = id ? this.replicas.get(id) : undefined
    if (!r) throw new Error(`no replica ${JSON.stringify(id)} (the demo runs ${[...this.replicas.keys()].join(', ')})`)
    return r
  }

  /** Start every replica; resolves once each is ready (or 10 s passed). */
  async startAll(): Promise<void> {
    await Promise.all(this.all.map((r) => this.spawn(r)))
  }

  /** Every pid of a replica running now. */
  pids(): number[] {
    return this.all.filter((r) => r.child && r.pid).map((r) => r.pid!)
  }

  states(): DemoState['replicas'] {
    return this.all.map((r) => ({ replicaId: r.id, pid: r.child ? r.pid : null, state: r.state, log: r.log, incarnation: r.incarnation }))
  }

  /** Start the replica's process; resolves once it reports ready (or exits, or 10 s passed). */
  spawn(r: Replica, flowVersion?: string): Promise<void> {
    const fd = openSync(r.log, 'a')
    // Detached (its own process group): Ctrl-C reaches the demo only, which stops replicas in order.
    // The URL (it may carry a password) goes through the environment, never on a command line that
    // `ps` shows to every user of the machine.
    const child = spawn(process.execPath, [this.program, ...this.args(r, flowVersion)], {
      stdio: ['ignore', fd, fd, 'ipc'],
      detached: true,
      env: { ...process.env, NO_COLOR: '1', REDIS_URL: this.opts.url },
    })
    closeSync(fd)
    r.child = child
    r.pid = child.pid ?? null
    r.state = 'starting'
    r.incarnation = null
    r.outstanding = []
    const ready = new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 10_000)
      r.onReady = () => (clearTimeout(t), resolve())
    })
    child.on('message', (m: Record<string, unknown>) => this.onMessage(r, m))
    child.on('error', () => {})
    child.on('exit', (code, signal) => this.onExit(r, child, code, signal))
    return ready
  }

  private args(r: Replica, flowVersion: string | undefined): string[] {
    const o = this.opts
    const deploys = Object.entries(this.deploys)
      .map(([f, v]) => `${f}@${v}`)
      .join(',')
    return [
      '--prefix',
      o.prefix,
      '--layout',
      o.layout,
      '--replica-id',
      r.id,
      '--lease-ms',
      String(o.leaseMs),
      '--provider-down-ms',
      String(o.providerDownMs),
      ...(flowVersion ? ['--flow-version', flowVersion] : []),
      ...(o.rehearsal ? ['--rehearsal'] : []),
      '--turn-wait-ms',
      String(o.turnWaitMs),
      ...(deploys ? ['--deploy', deploys] : []),
    ]
  }

  private onExit(r: Replica, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (r.child !== child) return
    if (r.unfreezeTimer) clearTimeout(r.unfreezeTimer)
    r.unfreezeTimer = null
    r.lost += r.outstanding.length // a message waiting on a replica that dies is lost (no durability here)
    r.outstanding = []
    r.state = this.stopping ? 'stopped' : 'dead'
    r.child = null
    r.onReady?.()
    if (!this.stopping) this.opts.err(`${r.id} (pid ${r.pid}) exited${signal ? ` on ${signal}` : ` with code ${code}`}`)
    this.opts.onChange()
  }

  private onMessage(r: Replica, m: Record<string, unknown>): void {
    switch (m.type) {
      case 'ready':
        r.incarnation = String(m.incarnation)
        r.fingerprints = (m.fingerprints as Record<string, string> | undefined) ?? {}
        if (r.state === 'starting') r.state = 'running'
        r.onReady?.()
        r.onReady = null
        this.opts.onChange()
        break
      case 'handled':
        r.outstanding.shift()
        if (m.ok) {
          r.handled++
          this.tally.servedBy[String(m.chat)] = r.id
        } else r.failed++
        break
      case 'handover': {
        const o = String(m.outcome)
        this.tally.handovers[o] = (this.tally.handovers[o] ?? 0) + 1
        break
      }
      case 'lease-lost':
        this.tally.leaseLosses++
        break
      case 'hung':
        r.onHung?.(String(m.chat), Number(m.fence))
        break
    }
  }

  /** Stop every replica in order: the ones that exit from now on are stopped, not dead. */
  async stopAll(): Promise<void> {
    this.stopping = true
    await Promise.all(this.all.map((r) => this.stop(r)))
  }

  /** Stop the replica in order; SIGKILL when it has not exited within 6 s. */
  async stop(r: Replica): Promise<void> {
    const child = r.child
    if (r.unfreezeTimer) clearTimeout(r.unfreezeTimer)
    if (!child || !r.pid) return
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve()
      else child.once('exit', () => resolve())
    })
    const signal = (s: NodeJS.Signals) => {
      try {
        process.kill(r.pid!, s)
      } catch {
        // already gone
      }
    }
    signal('SIGCONT') // a frozen replica would not act on SIGTERM until continued
    signal('SIGTERM') // orderly: coordinator.stop() releases its turns and leads
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 6000).unref())
    if ((await Promise.race([exited, timeout])) === 'timeout') {
      signal('SIGKILL')
      await exited
    }
  }
}
