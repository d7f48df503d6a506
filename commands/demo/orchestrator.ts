/**
 * The running demo: replica processes, the load balancer in front of them, the control socket for the
 * rehearsal sub-commands, the summary, and an orderly stop that leaves nothing running.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  KeyLayout,
  formatDuration,
  maskUrl,
  type CoordinationAdmin,
  type Io,
  type Layout,
  type RedisClient,
  type StateReader,
  type WriteSide,
} from '../lib.js'
import { LoadBalancer } from './balancer.js'
import { demoPaths, isAlive, type ControlReply, type ControlRequest, type DemoState } from './control.js'

export const PROVIDER = 'provider:demo'
export const JOB_LOCK = 'job:digest'

export interface DemoOptions {
  url: string
  prefix: string
  layout: Layout
  replicas: number
  chats: number
  rate: number
  leaseMs: number
  providerDownMs: number
  /** Rehearsal settings: the replicas keep waits, checkpoints and markers long enough to follow the runbook by hand. */
  rehearsal?: boolean
  /** How long a replica's message waits for its chat's turn (turnWaitMs). */
  turnWaitMs: number
  /** How a printed command reaches this demo's Redis (`--context demo`, or `--url … --prefix …`). */
  connection: string
  /** The throwaway redis-server, when the demo started one. */
  redis: { pid: number; port: number; dir: string; stop(): Promise<void> } | null
  json: boolean
  /** The library's read and write sides (lib.ts loadIo(), loadWriteSide()). */
  io: Io
  write: WriteSide
  out(line: string): void
  err(line: string): void
}

type ReplicaState = 'starting' | 'running' | 'frozen' | 'dead' | 'stopped'

interface Replica {
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

export class Demo {
  private readonly opts: DemoOptions
  private readonly replicas = new Map<string, Replica>()
  private readonly balancer: LoadBalancer
  private readonly paths: { state: string; socket: string }
  private readonly logDir: string
  private readonly program: string
  private readonly redis: RedisClient
  private readonly reader: StateReader
  private readonly admin: CoordinationAdmin
  private store: InstanceType<WriteSide['RedisStore']> | null = null
  private server: Server | null = null
  private trafficTimer: NodeJS.Timeout | null = null
  private readonly startedAt = Date.now()
  private sent = 0
  private leaseLosses = 0
  private readonly handovers: Record<string, number> = {}
  private readonly servedBy: Record<string, string> = {}
  private lastHandled = 0
  private stopping: Promise<void> | null = null
  /** Flows deployed in another version (`demo deploy-flow`): every replica started from then on runs them. */
  private readonly deploys: Record<string, string> = {}

  constructor(opts: DemoOptions) {
    this.opts = opts
    this.balancer = new LoadBalancer(opts.chats)
    this.paths = demoPaths(opts.prefix)
    this.program = replicaProgram()
    if (!existsSync(this.program)) throw new Error(`${this.program} is missing: build first (npm run build)`)
    this.logDir = mkdtempSync(join(tmpdir(), `botmesh-coord-demo-logs-`))
    this.redis = opts.io.connect({ url: opts.url, layout: opts.layout, connectionName: 'botmesh-coord-demo' })
    this.redis.on('error', () => {})
    this.reader = new opts.io.StateReader(this.redis, new KeyLayout(opts.prefix, opts.layout), { timeoutMs: 2000 })
    this.admin = new opts.write.CoordinationAdmin({ redis: this.redis, prefix: opts.prefix, layout: opts.layout })
    for (let i = 1; i <= opts.replicas; i++) {
      const id = `r${i}`
      this.replicas.set(id, {
        id,
        child: null,
        pid: null,
        state: 'stopped',
        incarnation: null,
        log: join(this.logDir, `${id}.log`),
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

  get logs(): Record<string, string> {
    return Object.fromEntries([...this.replicas.values()].map((r) => [r.id, r.log]))
  }

  /** Start the replicas, the control socket and the traffic; resolves once every replica is ready. */
  async start(): Promise<void> {
    await this.listen()
    await Promise.all([...this.replicas.values()].map((r) => this.spawnReplica(r)))
    this.writeState()
    const interval = 50
    let credit = 0
    this.trafficTimer = setInterval(() => {
      credit += (this.opts.rate * interval) / 1000
      for (; credit >= 1; credit--) this.deliver()
    }, interval)
  }

  // ---------------------------------------------------------------- replicas

  private spawnReplica(r: Replica, flowVersion?: string): Promise<void> {
    const fd = openSync(r.log, 'a')
    const o = this.opts
    // Detached (its own process group): Ctrl-C reaches the demo only, which stops replicas in order.
    // The URL (it may carry a password) goes through the environment, never on a command line that
    // `ps` shows to every user of the machine.
    const child = spawn(
      process.execPath,
      [
        this.program,
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
        ...(Object.keys(this.deploys).length
          ? [
              '--deploy',
              Object.entries(this.deploys)
                .map(([f, v]) => `${f}@${v}`)
                .join(','),
            ]
          : []),
      ],
      { stdio: ['ignore', fd, fd, 'ipc'], detached: true, env: { ...process.env, NO_COLOR: '1', REDIS_URL: o.url } },
    )
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
    child.on('message', (m: Record<string, unknown>) => this.onReplicaMessage(r, m))
    child.on('error', () => {})
    child.on('exit', (code, signal) => {
      if (r.child !== child) return
      if (r.unfreezeTimer) clearTimeout(r.unfreezeTimer)
      r.unfreezeTimer = null
      r.lost += r.outstanding.length // a message waiting on a replica that dies is lost (no durability here)
      r.outstanding = []
      r.state = this.stopping ? 'stopped' : 'dead'
      r.child = null
      r.onReady?.()
      if (!this.stopping) this.opts.err(`${r.id} (pid ${r.pid}) exited${signal ? ` on ${signal}` : ` with code ${code}`}`)
      this.writeState()
    })
    return ready
  }

  private onReplicaMessage(r: Replica, m: Record<string, unknown>): void {
    switch (m.type) {
      case 'ready':
        r.incarnation = String(m.incarnation)
        r.fingerprints = (m.fingerprints as Record<string, string> | undefined) ?? {}
        if (r.state === 'starting') r.state = 'running'
        r.onReady?.()
        r.onReady = null
        this.writeState()
        break
      case 'handled':
        r.outstanding.shift()
        if (m.ok) {
          r.handled++
          this.servedBy[String(m.chat)] = r.id
        } else r.failed++
        break
      case 'handover': {
        const o = String(m.outcome)
        this.handovers[o] = (this.handovers[o] ?? 0) + 1
        break
      }
      case 'lease-lost':
        this.leaseLosses++
        break
      case 'hung':
        r.onHung?.(String(m.chat), Number(m.fence))
        break
    }
  }

  /** Healthy for the load balancer: running, and not sitting on messages for longer than a lease. */
  private healthy(): string[] {
    const now = Date.now()
    const ids: string[] = []
    for (const r of this.replicas.values()) {
      if (r.state !== 'running' || !r.child?.connected) continue
      const oldest = r.outstanding[0]
      if (oldest !== undefined && now - oldest > this.opts.leaseMs + 2000) continue // a failing health check
      ids.push(r.id)
    }
    return ids
  }

  private deliver(): void {
    const msg = this.balancer.next()
    const id = this.balancer.route(msg.chat, this.healthy())
    this.sent++
    if (!id) return
    const r = this.replicas.get(id)!
    r.outstanding.push(Date.now())
    r.child!.send({ type: 'message', ...msg }, undefined, undefined, () => {})
  }

  // ---------------------------------------------------------------- rehearsal

  private replica(id: string | undefined): Replica {
    const r = id ? this.replicas.get(id) : undefined
    if (!r) throw new Error(`no replica ${JSON.stringify(id)} (the demo runs ${[...this.replicas.keys()].join(', ')})`)
    return r
  }

  private async leader(): Promise<{ replica: Replica; fence: number | null } | null> {
    const lead = await this.reader.lead(PROVIDER)
    const id = lead?.holder?.replicaId
    const r = id ? this.replicas.get(id) : undefined
    return r ? { replica: r, fence: lead!.fence } : null
  }

  async control(req: ControlRequest): Promise<ControlReply> {
    switch (req.cmd) {
      case 'status':
        return { ok: true, message: 'running', state: this.state() }
      case 'kill': {
        const r = this.replica(req.replica)
        if (!r.child || !r.pid) return { ok: false, message: `${r.id} is not running (${r.state})` }
        process.kill(r.pid, 'SIGKILL')
        return {
          ok: true,
          message: `killed ${r.id} (pid ${r.pid}) with SIGKILL: its leases expire within ${formatDuration(this.opts.leaseMs)}`,
        }
      }
      case 'freeze': {
        const r = this.replica(req.replica)
        const seconds = Number(req.seconds)
        if (!r.child || !r.pid || r.state !== 'running') return { ok: false, message: `${r.id} is not running (${r.state})` }
        process.kill(r.pid, 'SIGSTOP')
        r.state = 'frozen'
        const pid = r.pid
        r.unfreezeTimer = setTimeout(() => {
          r.unfreezeTimer = null
          if (r.pid !== pid || r.state !== 'frozen') return
          try {
            process.kill(pid, 'SIGCONT')
          } catch {
            // gone
          }
          r.state = 'running'
          this.writeState()
        }, seconds * 1000)
        this.writeState()
        const note =
          seconds * 1000 > this.opts.leaseMs * 0.9
            ? 'longer than the lease: it drops its turns and leads when it wakes'
            : 'within the lease'
        return { ok: true, message: `froze ${r.id} (pid ${pid}) for ${formatDuration(seconds * 1000)} (${note})` }
      }
      case 'start': {
        const r = this.replica(req.replica)
        if (r.child) return { ok: false, message: `${r.id} is already running (pid ${r.pid})` }
        await this.spawnReplica(r, req.flowVersion)
        this.writeState()
        return {
          ok: true,
          message: `started ${r.id} again (pid ${r.pid}, incarnation ${r.incarnation ?? '?'}${req.flowVersion ? `, flow version ${req.flowVersion}` : ''}): a new incarnation inherits nothing`,
        }
      }
      case 'close-transport': {
        const l = await this.leader()
        if (!l || !l.replica.child) return { ok: false, message: `nobody leads ${PROVIDER} right now` }
        l.replica.child.send({ type: 'transport', open: false })
        return {
          ok: true,
          message: `closed the transport on ${l.replica.id} (leader of ${PROVIDER}, fence ${l.fence}): it yields after ${formatDuration(this.opts.providerDownMs)} unless reopened (demo open-transport)`,
        }
      }
      case 'open-transport': {
        for (const r of this.replicas.values()) r.child?.send({ type: 'transport', open: true })
        return { ok: true, message: 'reopened the transport (wherever it was closed)' }
      }
      case 'yield': {
        // Pinned to the leader seen here: a leader that changed meanwhile is left alone.
        const seen = await this.reader.lead(PROVIDER)
        const res = await this.admin.requestYield(PROVIDER, {
          by: 'botmesh-coord demo',
          target: req.to ?? null,
          ifFence: seen?.holder ? seen.fence : null,
        })
        if (res.status === 'requested') {
          return {
            ok: true,
            message: `asked ${res.leader.replicaId} (fence ${res.fence}) to yield ${PROVIDER}${req.to ? ` to ${req.to}` : ''}`,
          }
        }
        const why = {
          'no-leader': `nobody leads ${PROVIDER} right now`,
          'target-not-standing': `${req.to} is not a standby of ${PROVIDER} (is it the leader already, or not running?)`,
          'fence-changed': `the leader of ${PROVIDER} changed meanwhile`,
        }[res.status]
        return { ok: false, message: `yield not requested: ${why}` }
      }
      case 'hang':
        return this.hang(req)
      case 'stale-write':
        return this.staleWrite(req)
      case 'deploy-flow':
        return this.deployFlow(req)
      default:
        return { ok: false, message: `unknown request ${JSON.stringify((req as { cmd?: unknown }).cmd)}` }
    }
  }

  /**
   * `demo stale-write r2 [chat]`: r2 writes a chat's checkpoint without the turn's fence — as a runtime
   * that does not pass `turn.fence` to setCheckpointIf — on a chat it holds no part of (another replica
   * holds it or held its last turns), so Redis cannot refuse it. By default a chat with a checkpoint
   * that r2 never touched, out of the hot ones (so it stays until the operator looks).
   */
  private async staleWrite(req: ControlRequest): Promise<ControlReply> {
    const r = this.replica(req.replica)
    if (!r.incarnation || r.state !== 'running') return { ok: false, message: `${r.id} is not running (${r.state})` }
    const p = this.opts.prefix
    const key = req.chat ?? (await this.untouchedChat(r.id))
    if (!key) return { ok: false, message: `no chat with a checkpoint that ${r.id} holds no part of yet: let the demo run a few seconds` }
    const d = await this.reader.chat(key)
    const cp = d.checkpoint
    this.store ??= new this.opts.write.RedisStore({ redis: this.redis, prefix: p, layout: this.opts.layout })
    const revision = await this.store.setCheckpointIf(
      key,
      {
        flow: cp?.flow ?? 'faq',
        step: cp?.step ?? 'Which topic?',
        state: cp?.state ?? {},
        owner: { replicaId: r.id, incarnation: r.incarnation },
        ...(cp?.ephemeral ? { ephemeral: cp.ephemeral } : {}),
      },
      cp?.revision ?? null,
    )
    const holder = d.chat?.holder
      ? `${d.chat.holder.replicaId} holds its turn`
      : `${d.chat?.lastHolder?.replicaId ?? 'nobody'} held its last turn`
    return {
      ok: true,
      message:
        `${r.id} wrote the checkpoint of ${key} without the turn's fence (revision ${revision}) while ${holder}. ` +
        `Diagnose: ${this.cli(`chat inspect ${key} --explain`)} (or doctor). ` +
        `Fix: ${this.cli(`checkpoint rm ${key} --if-revision ${revision}`)}`,
    }
  }

  /** A command line for the operator's second shell: it reaches this demo's Redis as pasted. */
  cli(rest: string): string {
    return `botmesh-coord ${this.opts.connection ? `${this.opts.connection} ` : ''}${rest}`
  }

  /**
   * `demo hang r1 [chat]`: the replica's handler of the chat's next message stops finishing while it
   * holds the turn (by default a hot chat, so messages queue behind it). The demo sends that message to
   * the replica itself, waits until the replica holds the turn, and prints how to see and release it.
   */
  private async hang(req: ControlRequest): Promise<ControlReply> {
    const r = this.replica(req.replica)
    if (!r.child || r.state !== 'running') return { ok: false, message: `${r.id} is not running (${r.state})` }
    const chat = req.chat ?? 'chat:1'
    const hung = new Promise<number | null>((resolve) => {
      const t = setTimeout(() => resolve(null), 10_000)
      r.onHung = (c, fence) => {
        if (c !== chat) return
        clearTimeout(t)
        r.onHung = null
        resolve(fence)
      }
    })
    r.child.send({ type: 'hang', chat })
    const msg = this.balancer.message(chat)
    this.sent++
    r.outstanding.push(Date.now())
    r.child.send({ type: 'message', ...msg }, undefined, undefined, () => {})
    const fence = await hung
    if (fence === null)
      return { ok: false, message: `${r.id} did not get the turn of ${chat} within 10s (is it stuck behind another holder?)` }
    return {
      ok: true,
      message:
        `${r.id} holds the turn of ${chat} (fence ${fence}) and its handler stops finishing: it renews the turn, so it never clears by itself; ` +
        `the chat's next messages queue behind it. Diagnose: ${this.cli(`chat inspect ${chat} --explain --turn-wait ${formatDuration(this.turnWaitMs())}`)} ` +
        `(the runbook's stuck chat: from ${formatDuration(this.turnWaitMs() / 2)} on, with messages waiting, it flags the holder and names the fix that releases it)`,
    }
  }

  /** The replicas' turnWaitMs: a turn held over half of it while messages wait is flagged by --explain. */
  turnWaitMs(): number {
    return this.opts.turnWaitMs
  }

  /** A chat with a checkpoint whose holder and last two holders are other replicas than `replicaId`, coldest first. */
  private async untouchedChat(replicaId: string): Promise<string | null> {
    const [chats, cps] = await Promise.all([this.reader.chats(), this.reader.checkpoints()])
    const withCp = new Set(cps.items.map((c) => c.key))
    const n = (k: string) => Number(/^chat:(\d+)$/.exec(k)?.[1] ?? 0)
    const ok = chats.items.filter((c) => {
      const who = [c.holder, c.previousHolder, c.lastHolder].filter((h) => h !== null)
      return withCp.has(c.key) && who.length > 0 && who.every((h) => h.replicaId !== replicaId)
    })
    ok.sort((a, b) => Number(n(a.key) <= this.balancer.hot) - Number(n(b.key) <= this.balancer.hot) || n(b.key) - n(a.key))
    return ok[0]?.key ?? null
  }

  /**
   * `demo deploy-flow faq`: a rolling deploy of a changed flow — each running replica in turn stops in
   * order and starts again running the flow's next version (another fingerprint). Checkpoints the old
   * version wrote are not resumed (`changed`) when their chat's next message comes.
   */
  private async deployFlow(req: ControlRequest): Promise<ControlReply> {
    const flow = req.flow ?? ''
    const running = [...this.replicas.values()].filter((r) => r.child && r.state === 'running')
    const known = new Set(running.flatMap((r) => Object.keys(r.fingerprints)))
    if (!known.has(flow)) return { ok: false, message: `no flow ${JSON.stringify(flow)} (the demo runs ${[...known].join(', ')})` }
    const before = running[0]?.fingerprints[flow] ?? '?'
    const version = req.version ?? String(Number(this.deploys[flow] ?? '1') + 1)
    this.deploys[flow] = version
    for (const r of running) {
      await this.stopReplica(r)
      await this.spawnReplica(r)
    }
    this.writeState()
    const after = running[0]?.fingerprints[flow] ?? '?'
    return {
      ok: true,
      message:
        `deployed ${flow} version ${version} on ${running.map((r) => r.id).join(', ')} (rolling restart): fingerprint ${before} → ${after}. ` +
        `Checkpoints of the old version are not resumed (changed): ${this.cli(`checkpoints ls --fingerprint ${flow}=${after} --mismatched`)}`,
    }
  }

  private async listen(): Promise<void> {
    const other = (() => {
      try {
        return JSON.parse(readFileSync(this.paths.state, 'utf8')) as DemoState
      } catch {
        return null
      }
    })()
    if (other && other.pid !== process.pid && isAlive(other.pid)) {
      throw new Error(`a demo is already running with prefix ${this.opts.prefix} (pid ${other.pid}); stop it first or use another --prefix`)
    }
    rmSync(this.paths.socket, { force: true }) // a stale socket of a demo that was killed
    this.server = createServer((sock: Socket) => {
      let buf = ''
      sock.on('error', () => {})
      sock.on('data', (d) => {
        buf += d.toString()
        const nl = buf.indexOf('\n')
        if (nl < 0) return
        let req: ControlRequest
        try {
          req = JSON.parse(buf.slice(0, nl)) as ControlRequest
        } catch {
          return void sock.end(`${JSON.stringify({ ok: false, message: 'not JSON' })}\n`)
        }
        this.control(req)
          .catch((err: unknown) => ({ ok: false, message: err instanceof Error ? err.message : String(err) }))
          .then((reply) => {
            if (reply.ok && req.cmd !== 'status') this.opts.err(`control: ${reply.message}`)
            sock.end(`${JSON.stringify(reply)}\n`)
          })
      })
    })
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject)
      this.server!.listen(this.paths.socket, () => resolve())
    })
  }

  state(): DemoState {
    return {
      pid: process.pid,
      prefix: this.opts.prefix,
      url: maskUrl(this.opts.url),
      layout: this.opts.layout,
      socket: this.paths.socket,
      startedAt: this.startedAt,
      redis: this.opts.redis ? { pid: this.opts.redis.pid, port: this.opts.redis.port, dir: this.opts.redis.dir } : null,
      replicas: [...this.replicas.values()].map((r) => ({
        replicaId: r.id,
        pid: r.child ? r.pid : null,
        state: r.state,
        log: r.log,
        incarnation: r.incarnation,
      })),
    }
  }

  private writeState(): void {
    if (this.stopping) return
    try {
      writeFileSync(this.paths.state, JSON.stringify(this.state(), null, 2))
    } catch {
      // best effort
    }
  }

  // ---------------------------------------------------------------- summary

  async summary(): Promise<Summary> {
    const handled = [...this.replicas.values()].reduce((n, r) => n + r.handled, 0)
    const perSecond = handled - this.lastHandled
    this.lastHandled = handled
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
        const r = [...this.replicas.values()].find((x) => x.pid === pid)
        lock = { key: JOB_LOCK, holder: r?.id ?? lk.holder.owner, fence: lk.fence }
      }
    } catch {
      // Redis did not answer this second: the line shows '?'
    }
    return {
      kind: 'demo-summary',
      t: new Date().toISOString(),
      elapsedMs: Date.now() - this.startedAt,
      messages: {
        sent: this.sent,
        handled,
        failed: [...this.replicas.values()].reduce((n, r) => n + r.failed, 0),
        lost: [...this.replicas.values()].reduce((n, r) => n + r.lost, 0),
        perSecond,
      },
      replicas: [...this.replicas.values()].map((r) => ({
        replicaId: r.id,
        pid: r.child ? r.pid : null,
        state: r.state,
        incarnation: r.incarnation,
        handled: r.handled,
        failed: r.failed,
      })),
      provider,
      lock,
      leaseLosses: this.leaseLosses,
      handovers: { total: Object.values(this.handovers).reduce((a, b) => a + b, 0), byOutcome: { ...this.handovers } },
      servedBy: { ...this.servedBy },
    }
  }

  // ---------------------------------------------------------------- stop

  /** Stop everything this demo started, by pid; resolves when nothing is left running. */
  stop(): Promise<void> {
    this.stopping ??= this.doStop()
    return this.stopping
  }

  /** Every pid this demo has running now (replicas and its redis-server). */
  pids(): number[] {
    const pids = [...this.replicas.values()].filter((r) => r.child && r.pid).map((r) => r.pid!)
    if (this.opts.redis) pids.push(this.opts.redis.pid)
    return pids
  }

  private async doStop(): Promise<void> {
    if (this.trafficTimer) clearInterval(this.trafficTimer)
    this.server?.close()
    rmSync(this.paths.socket, { force: true })
    rmSync(this.paths.state, { force: true })
    await Promise.all([...this.replicas.values()].map((r) => this.stopReplica(r)))
    await this.admin.close().catch(() => {})
    await this.store?.close().catch(() => {})
    this.redis.disconnect()
    await this.opts.redis?.stop()
  }

  private async stopReplica(r: Replica): Promise<void> {
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
