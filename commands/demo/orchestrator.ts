/**
 * The running demo, composed of its jobs: the replica processes (./supervisor.ts), the traffic in front
 * of them (./traffic.ts), the control socket for the rehearsal sub-commands (./control-server.ts) and
 * the rehearsals themselves (./scenarios.ts). This module starts them in order, answers `demo status`,
 * builds the summary, and stops everything in order, leaving nothing running.
 */
import { KeyLayout, maskUrl, type CoordinationAdmin, type RedisClient, type StateReader } from '../lib.js'
import type { ControlReply, ControlRequest, DemoState } from './control.js'
import { ControlServer } from './control-server.js'
import { Scenarios } from './scenarios.js'
import { JOB_LOCK, PROVIDER, Supervisor, type ReplicaState } from './supervisor.js'
import { Traffic } from './traffic.js'
import type { DemoOptions } from './options.js'

export { JOB_LOCK, PROVIDER, replicaProgram } from './supervisor.js'
export type { DemoOptions } from './options.js'

export interface Summary {
  kind: 'demo-summary'
  t: string
  elapsedMs: number
  messages: { sent: number; handled: number; failed: number; lost: number; perSecond: number }
  replicas: Array<{
    replicaId: string
    pid: number | null
    state: ReplicaState
    incarnation: string | null
    handled: number
    failed: number
  }>
  provider: { name: string; leader: string | null; fence: number | null; standbys: string[] }
  lock: { key: string; holder: string | null; fence: number | null }
  leaseLosses: number
  handovers: { total: number; byOutcome: Record<string, number> }
  /** The replica that last answered each chat. */
  servedBy: Record<string, string>
}

export class Demo {
  private readonly opts: DemoOptions
  private readonly supervisor: Supervisor
  private readonly traffic: Traffic
  private readonly controlServer: ControlServer
  private readonly scenarios: Scenarios
  private readonly redis: RedisClient
  private readonly reader: StateReader
  private readonly admin: CoordinationAdmin
  private readonly startedAt = Date.now()
  private lastHandled = 0
  private stopping: Promise<void> | null = null

  constructor(opts: DemoOptions) {
    this.opts = opts
    this.supervisor = new Supervisor({ ...opts, onChange: () => this.writeState() })
    this.traffic = new Traffic(opts, this.supervisor.replicas)
    this.controlServer = new ControlServer({ prefix: opts.prefix, handle: (req) => this.control(req), err: opts.err })
    this.redis = opts.io.connect({ url: opts.url, layout: opts.layout, connectionName: 'botmesh-coord-demo' })
    this.redis.on('error', () => {})
    this.reader = new opts.io.StateReader(this.redis, new KeyLayout(opts.prefix, opts.layout), { timeoutMs: 2000 })
    this.admin = new opts.write.CoordinationAdmin({ redis: this.redis, prefix: opts.prefix, layout: opts.layout })
    this.scenarios = new Scenarios({
      opts,
      supervisor: this.supervisor,
      traffic: this.traffic,
      redis: this.redis,
      reader: this.reader,
      admin: this.admin,
      publish: () => this.writeState(),
    })
  }

  get logs(): Record<string, string> {
    return this.supervisor.logs
  }

  /** Start the control socket, the replicas and the traffic; resolves once every replica is ready. */
  async start(): Promise<void> {
    await this.controlServer.listen()
    await this.supervisor.startAll()
    this.writeState()
    this.traffic.start()
  }

  /** One rehearsal request (from the control socket, or the dashboard the demo runs). */
  async control(req: ControlRequest): Promise<ControlReply> {
    if (req.cmd === 'status') return { ok: true, message: 'running', state: this.state() }
    return this.scenarios.run(req)
  }

  /** A command line for the operator's second shell: it reaches this demo's Redis as pasted. */
  cli(rest: string): string {
    return this.scenarios.cli(rest)
  }

  state(): DemoState {
    const redis = this.opts.redis
    return {
      pid: process.pid,
      prefix: this.opts.prefix,
      url: maskUrl(this.opts.url),
      layout: this.opts.layout,
      socket: this.controlServer.paths.socket,
      startedAt: this.startedAt,
      redis: redis ? { pid: redis.pid, port: redis.port, dir: redis.dir } : null,
      replicas: this.supervisor.states(),
    }
  }

  private writeState(): void {
    if (this.stopping) return
    this.controlServer.publish(this.state())
  }

  // ---------------------------------------------------------------- summary

  async summary(): Promise<Summary> {
    const replicas = this.supervisor.all
    const handled = replicas.reduce((n, r) => n + r.handled, 0)
    const perSecond = handled - this.lastHandled
    this.lastHandled = handled
    const { provider, lock } = await this.leadAndLock()
    const { tally } = this.supervisor
    return {
      kind: 'demo-summary',
      t: new Date().toISOString(),
      elapsedMs: Date.now() - this.startedAt,
      messages: {
        sent: this.traffic.sent,
        handled,
        failed: replicas.reduce((n, r) => n + r.failed, 0),
        lost: replicas.reduce((n, r) => n + r.lost, 0),
        perSecond,
      },
      replicas: replicas.map((r) => ({
        replicaId: r.id,
        pid: r.child ? r.pid : null,
        state: r.state,
        incarnation: r.incarnation,
        handled: r.handled,
        failed: r.failed,
      })),
      provider,
      lock,
      leaseLosses: tally.leaseLosses,
      handovers: { total: Object.values(tally.handovers).reduce((a, b) => a + b, 0), byOutcome: { ...tally.handovers } },
      servedBy: { ...tally.servedBy },
    }
  }

  /** Who leads the provider and holds the job lock, by replica id; nobody when Redis did not answer. */
  private async leadAndLock(): Promise<Pick<Summary, 'provider' | 'lock'>> {
    let provider: Summary['provider'] = { name: PROVIDER, leader: null, fence: null, standbys: [] }
    let lock: Summary['lock'] = { key: JOB_LOCK, holder: null, fence: null }
    try {
      const [lead, lk] = await Promise.all([this.reader.lead(PROVIDER), this.reader.lock(JOB_LOCK)])
      if (lead) {
        provider = {
          name: PROVIDER,
          leader: lead.holder?.replicaId ?? null,
          fence: lead.holder ? lead.fence : null,
          standbys: lead.candidates.map((c) => c.replicaId).filter((id) => id !== lead.holder?.replicaId),
        }
      }
      if (lk?.holder) {
        // The lock records "host:pid" as its owner: name the replica with that pid.
        const pid = Number(lk.holder.owner.split(':').pop())
        const r = this.supervisor.all.find((x) => x.pid === pid)
        lock = { key: JOB_LOCK, holder: r?.id ?? lk.holder.owner, fence: lk.fence }
      }
    } catch {
      // Redis did not answer this second: the line shows '?'
    }
    return { provider, lock }
  }

  // ---------------------------------------------------------------- stop

  /** Stop everything this demo started, by pid; resolves when nothing is left running. */
  stop(): Promise<void> {
    this.stopping ??= this.doStop()
    return this.stopping
  }

  /** Every pid this demo has running now (replicas and its redis-server). */
  pids(): number[] {
    const pids = this.supervisor.pids()
    if (this.opts.redis) pids.push(this.opts.redis.pid)
    return pids
  }

  private async doStop(): Promise<void> {
    this.traffic.stop()
    this.controlServer.close()
    await this.supervisor.stopAll()
    await this.admin.close().catch(() => {})
    await this.scenarios.close()
    this.redis.disconnect()
    await this.opts.redis?.stop()
  }
}
