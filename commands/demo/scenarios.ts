/**
 * The rehearsals `demo kill|freeze|start|close-transport|open-transport|yield|hang|stale-write|deploy-flow`
 * run from another terminal: each takes one control request, does its fault to the running demo, and
 * answers one line that says what it did and, where the runbook has one, the command that shows or
 * fixes it.
 */
import { formatDuration, type CoordinationAdmin, type RedisClient, type StateReader, type WriteSide } from '../lib.js'
import type { ControlReply, ControlRequest } from './control.js'
import type { DemoOptions } from './options.js'
import { PROVIDER, type Replica, type Supervisor } from './supervisor.js'
import type { Traffic } from './traffic.js'

type Scenario = (req: ControlRequest) => Promise<ControlReply>

export interface ScenarioDeps {
  opts: Pick<DemoOptions, 'prefix' | 'layout' | 'leaseMs' | 'providerDownMs' | 'turnWaitMs' | 'connection' | 'write'>
  supervisor: Supervisor
  traffic: Traffic
  redis: RedisClient
  reader: StateReader
  admin: CoordinationAdmin
  /** The replicas' states changed: publish them. */
  publish(): void
}

const notRunning = (r: Replica): ControlReply => ({ ok: false, message: `${r.id} is not running (${r.state})` })

export class Scenarios {
  private readonly d: ScenarioDeps
  private store: InstanceType<WriteSide['RedisStore']> | null = null
  private readonly scenarios: Record<Exclude<ControlRequest['cmd'], 'status'>, Scenario> = {
    kill: (req) => this.kill(req),
    freeze: (req) => this.freeze(req),
    start: (req) => this.start(req),
    'close-transport': () => this.closeTransport(),
    'open-transport': () => this.openTransport(),
    yield: (req) => this.yield(req),
    hang: (req) => this.hang(req),
    'stale-write': (req) => this.staleWrite(req),
    'deploy-flow': (req) => this.deployFlow(req),
  }

  constructor(deps: ScenarioDeps) {
    this.d = deps
  }

  async run(req: ControlRequest): Promise<ControlReply> {
    if (!Object.hasOwn(this.scenarios, req.cmd)) {
      return { ok: false, message: `unknown request ${JSON.stringify((req as { cmd?: unknown }).cmd)}` }
    }
    return this.scenarios[req.cmd as keyof typeof this.scenarios](req)
  }

  /** A command line for the operator's second shell: it reaches this demo's Redis as pasted. */
  cli(rest: string): string {
    return `botmesh-coord ${this.d.opts.connection ? `${this.d.opts.connection} ` : ''}${rest}`
  }

  async close(): Promise<void> {
    await this.store?.close().catch(() => {})
  }

  private async kill(req: ControlRequest): Promise<ControlReply> {
    const r = this.d.supervisor.replica(req.replica)
    if (!r.child || !r.pid) return notRunning(r)
    process.kill(r.pid, 'SIGKILL')
    return {
      ok: true,
      message: `killed ${r.id} (pid ${r.pid}) with SIGKILL: its leases expire within ${formatDuration(this.d.opts.leaseMs)}`,
    }
  }

  /** SIGSTOP now, SIGCONT after `seconds` (unless the replica was stopped or restarted meanwhile). */
  private async freeze(req: ControlRequest): Promise<ControlReply> {
    const r = this.d.supervisor.replica(req.replica)
    const seconds = Number(req.seconds)
    if (!r.child || !r.pid || r.state !== 'running') return notRunning(r)
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
      this.d.publish()
    }, seconds * 1000)
    this.d.publish()
    const note =
      seconds * 1000 > this.d.opts.leaseMs * 0.9 ? 'longer than the lease: it drops its turns and leads when it wakes' : 'within the lease'
    return { ok: true, message: `froze ${r.id} (pid ${pid}) for ${formatDuration(seconds * 1000)} (${note})` }
  }

  private async start(req: ControlRequest): Promise<ControlReply> {
    const r = this.d.supervisor.replica(req.replica)
    if (r.child) return { ok: false, message: `${r.id} is already running (pid ${r.pid})` }
    await this.d.supervisor.spawn(r, req.flowVersion)
    this.d.publish()
    return {
      ok: true,
      message: `started ${r.id} again (pid ${r.pid}, incarnation ${r.incarnation ?? '?'}${req.flowVersion ? `, flow version ${req.flowVersion}` : ''}): a new incarnation inherits nothing`,
    }
  }

  private async closeTransport(): Promise<ControlReply> {
    const l = await this.leader()
    if (!l || !l.replica.child) return { ok: false, message: `nobody leads ${PROVIDER} right now` }
    l.replica.child.send({ type: 'transport', open: false })
    return {
      ok: true,
      message: `closed the transport on ${l.replica.id} (leader of ${PROVIDER}, fence ${l.fence}): it yields after ${formatDuration(this.d.opts.providerDownMs)} unless reopened (demo open-transport)`,
    }
  }

  private async openTransport(): Promise<ControlReply> {
    for (const r of this.d.supervisor.all) r.child?.send({ type: 'transport', open: true })
    return { ok: true, message: 'reopened the transport (wherever it was closed)' }
  }

  private async yield(req: ControlRequest): Promise<ControlReply> {
    // Pinned to the leader seen here: a leader that changed meanwhile is left alone.
    const seen = await this.d.reader.lead(PROVIDER)
    const res = await this.d.admin.requestYield(PROVIDER, {
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

  private async leader(): Promise<{ replica: Replica; fence: number | null } | null> {
    const lead = await this.d.reader.lead(PROVIDER)
    const id = lead?.holder?.replicaId
    const r = id ? this.d.supervisor.replicas.get(id) : undefined
    return r ? { replica: r, fence: lead!.fence } : null
  }

  /**
   * `demo hang r1 [chat]`: the replica's handler of the chat's next message stops finishing while it
   * holds the turn (by default a hot chat, so messages queue behind it). The demo sends that message to
   * the replica itself, waits until the replica holds the turn, and prints how to see and release it.
   */
  private async hang(req: ControlRequest): Promise<ControlReply> {
    const r = this.d.supervisor.replica(req.replica)
    if (!r.child || r.state !== 'running') return notRunning(r)
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
    this.d.traffic.sendTo(r, chat)
    const fence = await hung
    if (fence === null)
      return { ok: false, message: `${r.id} did not get the turn of ${chat} within 10s (is it stuck behind another holder?)` }
    // The replicas' turnWaitMs: a turn held over half of it while messages wait is flagged by --explain.
    const turnWaitMs = this.d.opts.turnWaitMs
    return {
      ok: true,
      message:
        `${r.id} holds the turn of ${chat} (fence ${fence}) and its handler stops finishing: it renews the turn, so it never clears by itself; ` +
        `the chat's next messages queue behind it. Diagnose: ${this.cli(`chat inspect ${chat} --explain --turn-wait ${formatDuration(turnWaitMs)}`)} ` +
        `(the runbook's stuck chat: from ${formatDuration(turnWaitMs / 2)} on, with messages waiting, it flags the holder and names the fix that releases it)`,
    }
  }

  /**
   * `demo stale-write r2 [chat]`: r2 writes a chat's checkpoint without the turn's fence — as a runtime
   * that does not pass `turn.fence` to setCheckpointIf — on a chat it holds no part of (another replica
   * holds it or held its last turns), so Redis cannot refuse it. By default a chat with a checkpoint
   * that r2 never touched, out of the hot ones (so it stays until the operator looks).
   */
  private async staleWrite(req: ControlRequest): Promise<ControlReply> {
    const r = this.d.supervisor.replica(req.replica)
    if (!r.incarnation || r.state !== 'running') return notRunning(r)
    const { prefix, layout, write } = this.d.opts
    const key = req.chat ?? (await this.untouchedChat(r.id))
    if (!key) return { ok: false, message: `no chat with a checkpoint that ${r.id} holds no part of yet: let the demo run a few seconds` }
    const d = await this.d.reader.chat(key)
    const cp = d.checkpoint
    this.store ??= new write.RedisStore({ redis: this.d.redis, prefix, layout })
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

  /** A chat with a checkpoint whose holder and last two holders are other replicas than `replicaId`, coldest first. */
  private async untouchedChat(replicaId: string): Promise<string | null> {
    const [chats, cps] = await Promise.all([this.d.reader.chats(), this.d.reader.checkpoints()])
    const withCp = new Set(cps.items.map((c) => c.key))
    const n = (k: string) => Number(/^chat:(\d+)$/.exec(k)?.[1] ?? 0)
    const hot = this.d.traffic.balancer.hot
    const ok = chats.items.filter((c) => {
      const who = [c.holder, c.previousHolder, c.lastHolder].filter((h) => h !== null)
      return withCp.has(c.key) && who.length > 0 && who.every((h) => h.replicaId !== replicaId)
    })
    ok.sort((a, b) => Number(n(a.key) <= hot) - Number(n(b.key) <= hot) || n(b.key) - n(a.key))
    return ok[0]?.key ?? null
  }

  /**
   * `demo deploy-flow faq`: a rolling deploy of a changed flow — each running replica in turn stops in
   * order and starts again running the flow's next version (another fingerprint). Checkpoints the old
   * version wrote are not resumed (`changed`) when their chat's next message comes.
   */
  private async deployFlow(req: ControlRequest): Promise<ControlReply> {
    const { supervisor } = this.d
    const flow = req.flow ?? ''
    const running = supervisor.all.filter((r) => r.child && r.state === 'running')
    const known = new Set(running.flatMap((r) => Object.keys(r.fingerprints)))
    if (!known.has(flow)) return { ok: false, message: `no flow ${JSON.stringify(flow)} (the demo runs ${[...known].join(', ')})` }
    const before = running[0]?.fingerprints[flow] ?? '?'
    const version = req.version ?? String(Number(supervisor.deploys[flow] ?? '1') + 1)
    supervisor.deploys[flow] = version
    for (const r of running) {
      await supervisor.stop(r)
      await supervisor.spawn(r)
    }
    this.d.publish()
    const after = running[0]?.fingerprints[flow] ?? '?'
    return {
      ok: true,
      message:
        `deployed ${flow} version ${version} on ${running.map((r) => r.id).join(', ')} (rolling restart): fingerprint ${before} → ${after}. ` +
        `Checkpoints of the old version are not resumed (changed): ${this.cli(`checkpoints ls --fingerprint ${flow}=${after} --mismatched`)}`,
    }
  }
}
