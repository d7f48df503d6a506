import type { Redis } from 'ioredis'
import { KeyLayout, SCHEMA_VERSION } from '../keys.js'
import { ScriptRunner } from '../scripts/runner.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { CorruptStateError } from '../errors/corrupt-state-error.js'
import { errorFromRedis } from '../errors/from-redis.js'
import { isCluster, masters, withTimeout, type RedisClient, type ResolvedRedis } from '../connection.js'
import type { CoordinationBackend, WakeHandler, Warning } from './backend.js'
import type {
  BeatRecord,
  BeatReply,
  LeadReply,
  PushedGrant,
  RenewItem,
  RenewReply,
  TurnReply,
  YieldRequestInput,
  YieldResult,
} from '../wire/types.js'

/** The client (closed on close() when ownsClient), key names and limits, as resolveRedis read them. */
export type RedisBackendOptions = ResolvedRedis

type Raw = Array<string | number | null>

const num = (v: unknown): number => (v === null || v === undefined ? NaN : Number(v))

/** The Redis side of a coordinator: each method is one Lua script call (EVALSHA, NOSCRIPT fallback). */
export class RedisBackend implements CoordinationBackend {
  readonly kind = 'redis' as const
  readonly redis: RedisClient
  readonly keys: KeyLayout
  readonly scripts: ScriptRunner
  private readonly opts: RedisBackendOptions
  private subscriber: RedisClient | null = null
  private subscribed = false

  constructor(opts: RedisBackendOptions) {
    this.opts = opts
    this.redis = opts.redis
    this.keys = opts.keys
    this.scripts = new ScriptRunner(opts.redis, opts.commandTimeoutMs)
  }

  async init(): Promise<Warning[]> {
    const warnings: Warning[] = []
    const [version, layout] = await this.scripts.run<[string, string]>(
      'schema-init-1',
      [this.keys.schema],
      [SCHEMA_VERSION, this.keys.layout],
    )
    if (Number(version) > SCHEMA_VERSION) {
      throw new ConfigurationError(
        `prefix ${this.keys.prefix} holds schema ${version}, newer than this release understands (${SCHEMA_VERSION}): upgrade botmesh-coord`,
      )
    }
    if (layout !== this.keys.layout) {
      warnings.push({
        code: 'layout-mismatch',
        message: `prefix ${this.keys.prefix} was first written with the '${layout}' layout, this replica uses '${this.keys.layout}': replicas with different layouts do not see each other's keys`,
      })
    }
    warnings.push(...(await evictionWarnings(this.redis)))
    return warnings
  }

  /**
   * How long a poll, a renewal or a lead attempt may take: almost a lease, not commandTimeoutMs. A
   * replica on a slow link (round trips above commandTimeoutMs but below leaseMs) then still works;
   * with the short bound each call would time out on the client while Redis still ran it — granting,
   * extending and blocking the chat for others while the replica never saw the grant.
   */
  private leaseCallTimeout(leaseMs: number): number {
    return Math.max(this.opts.commandTimeoutMs, Math.floor(leaseMs * 0.9))
  }

  async turnAcquire(
    key: string,
    replicaId: string,
    incarnation: string,
    leaseMs: number,
    ticket: number | null,
    requestId: string,
  ): Promise<TurnReply> {
    const k = this.keys.chat(key)
    const r = await this.scripts.run<Raw>(
      'turn-acquire-2',
      [k.state, k.queue],
      [
        replicaId,
        incarnation,
        leaseMs,
        this.opts.idleKeyTtlMs,
        ticket === null ? '' : String(ticket),
        this.keys.wakeChannelPrefix,
        requestId,
      ],
      this.leaseCallTimeout(leaseMs),
    )
    return decodeTurnReply(k.state, r)
  }

  async turnRelease(key: string, incarnation: string, ticket: number, leaseMs: number, requestId = ''): Promise<0 | 1 | 2> {
    const k = this.keys.chat(key)
    const r = await this.scripts.run<number>(
      'turn-release-2',
      [k.state, k.queue],
      [incarnation, String(ticket), leaseMs, this.opts.idleKeyTtlMs, this.keys.wakeChannelPrefix, requestId],
    )
    return r as 0 | 1 | 2
  }

  async leadAcquire(name: string, replicaId: string, incarnation: string, leaseMs: number, stand: boolean): Promise<LeadReply> {
    const key = this.keys.lead(name)
    const r = await this.scripts.run<Raw>(
      'lead-acquire-1',
      [key],
      [replicaId, incarnation, leaseMs, this.opts.idleKeyTtlMs, stand ? '1' : ''],
      this.leaseCallTimeout(leaseMs),
    )
    return decodeLeadReply(key, r)
  }

  async leadRelease(name: string, incarnation: string, fence: number | null, leaseMs: number): Promise<0 | 1> {
    const r = await this.scripts.run<number>(
      'lead-release-1',
      [this.keys.lead(name)],
      [incarnation, fence === null ? '' : String(fence), leaseMs, this.opts.idleKeyTtlMs, this.keys.wakeChannelPrefix],
    )
    return r === 1 ? 1 : 0
  }

  async requestYield(name: string, req: YieldRequestInput): Promise<YieldResult> {
    const key = this.keys.lead(name)
    const r = await this.scripts.run<Raw>(
      'lead-yield-1',
      [key],
      [req.by, req.target ?? '', req.ttlMs, req.ifFence === null ? '' : String(req.ifFence), this.keys.wakeChannelPrefix],
    )
    switch (r[0]) {
      case 1:
        return { status: 'requested', leader: { replicaId: String(r[1]), incarnation: String(r[2]) }, fence: num(r[3]) }
      case 0:
        return { status: 'no-leader' }
      case -1:
        return { status: 'fence-changed', fence: num(r[1]) }
      case -2:
        return { status: 'target-not-standing' }
      default:
        throw new CorruptStateError(key, `unexpected script status ${String(r[0])}`)
    }
  }

  leaseKey(item: { kind: 'chat' | 'lead'; key: string }): string {
    return item.kind === 'chat' ? this.keys.chat(item.key).state : this.keys.lead(item.key)
  }

  async renew(items: RenewItem[], incarnation: string, leaseMs: number): Promise<Array<RenewReply | Error>> {
    // Sent together: one write per connection (and per node on a cluster), replies in order.
    return Promise.all(
      items.map(async (item): Promise<RenewReply | Error> => {
        try {
          const r = await this.scripts.run<Raw>(
            'lease-renew-1',
            [this.leaseKey(item)],
            [incarnation, String(item.fence), leaseMs, this.opts.idleKeyTtlMs],
            this.leaseCallTimeout(leaseMs),
          )
          if (r[0] === 1) {
            return { ok: true, yieldRequest: r[1] ? { by: String(r[1]), target: r[2] ? String(r[2]) : null } : null }
          }
          return { ok: false, reason: r[1] === 'expired' ? 'expired' : 'revoked' }
        } catch (err) {
          return err instanceof Error ? err : new Error(String(err))
        }
      }),
    )
  }

  async beat(replicaId: string, incarnation: string, leaseMs: number, record: BeatRecord): Promise<BeatReply> {
    const r = await this.scripts.run<Raw>(
      'replica-beat-2',
      [this.keys.replica(replicaId), this.keys.replicaIndex],
      [
        replicaId,
        incarnation,
        leaseMs,
        JSON.stringify(record.info),
        JSON.stringify(record.stats),
        JSON.stringify(record.leases),
        String(Date.now()),
      ],
    )
    if (r[0] === -1) return { evicted: true, otherIncarnation: null, serverTimeMs: NaN }
    return { evicted: false, otherIncarnation: r[1] ? String(r[1]) : null, serverTimeMs: num(r[2]) }
  }

  async replicaStop(replicaId: string, incarnation: string): Promise<void> {
    await this.scripts.run('replica-stop-2', [this.keys.replica(replicaId), this.keys.replicaIndex], [incarnation, replicaId])
  }

  async subscribe(incarnation: string, onWake: WakeHandler): Promise<() => Promise<void>> {
    const sub: RedisClient = isCluster(this.redis) ? this.redis.duplicate() : (this.redis as Redis).duplicate()
    this.subscriber = sub
    sub.on('error', () => {}) // reconnects by itself; polling is the safety net meanwhile
    const channel = this.keys.wakeChannel(incarnation)
    sub.on('message', (ch: string, message: string) => {
      if (ch !== channel) return
      const wake = decodeWake(this.keys, message)
      if (wake) onWake(wake.kind, wake.key, wake.ticket, wake.grant)
    })
    // ioredis re-subscribes after a reconnect; until then, waiters poll with backoff.
    sub.on('close', () => (this.subscribed = false))
    sub.on('ready', () => {
      if (this.subscriber === sub) this.subscribed = true
    })
    try {
      await sub.subscribe(channel)
      this.subscribed = true
    } catch (err) {
      sub.disconnect()
      this.subscriber = null
      throw errorFromRedis(err, undefined)
    }
    return async () => {
      if (this.subscriber !== sub) return
      this.subscriber = null
      this.subscribed = false
      await sub.quit().catch(() => sub.disconnect())
    }
  }

  pushReady(): boolean {
    return this.subscribed && this.subscriber !== null
  }

  async serverIdentity(leaseMs?: number): Promise<string | null> {
    // Asked with the renewals: as patient as they are, or a busy Redis would make renewals untrusted.
    const timeout = leaseMs ? this.leaseCallTimeout(leaseMs) : this.opts.commandTimeoutMs
    try {
      const ids = await Promise.all(
        masters(this.redis).map(async (node) => {
          const info = await withTimeout(node.info('server'), timeout, 'INFO')
          return /run_id:([0-9a-f]+)/.exec(info)?.[1] ?? '?'
        }),
      )
      return ids.sort().join(',')
    } catch (err) {
      if (/NOPERM/.test(String((err as Error)?.message))) return null
      throw errorFromRedis(err, undefined)
    }
  }

  async appendEvent(event: Record<string, unknown>): Promise<void> {
    await this.redis.xadd(
      this.keys.events,
      'MAXLEN',
      '~',
      String(this.opts.eventsMaxLen),
      '*',
      'e',
      JSON.stringify({ at: Date.now(), ...event }),
    )
  }

  async close(): Promise<void> {
    if (this.subscriber) {
      const s = this.subscriber
      this.subscriber = null
      await s.quit().catch(() => s.disconnect())
    }
    if (this.opts.ownsClient) await this.redis.quit().catch(() => this.redis.disconnect())
  }

  crash(): void {
    this.subscriber?.disconnect()
    this.subscriber = null
    this.subscribed = false
    if (this.opts.ownsClient) this.redis.disconnect()
  }
}

/**
 * A wake message is a grant as JSON (`{t, f, l, k, p, pi}`, from grant_next), `<ticket>|<raw chat
 * state key>` (poll now: e.g. an operator dropped the ticket), `-|<raw chat state key>` (an operator
 * revoked the turn: renew now to learn it) or `-|<raw lead key>` (a lead event).
 */
export function decodeWake(
  keys: KeyLayout,
  message: string,
): { kind: 'chat' | 'lead'; key: string; ticket: number | null; grant?: PushedGrant } | null {
  if (message.startsWith('{')) {
    try {
      const m = JSON.parse(message) as { t?: string; f?: string; l?: number; k?: string; p?: string; pi?: string }
      const parsed = keys.parse(String(m.k))
      const ticket = Number(m.t)
      const fence = Number(m.f)
      if (parsed?.kind !== 'chat' || !Number.isInteger(ticket) || !Number.isFinite(fence)) return null
      return {
        kind: 'chat',
        key: parsed.id,
        ticket,
        grant: {
          fence,
          previousHolder: m.p ? { replicaId: m.p, incarnation: m.pi ?? '' } : null,
          leaseMs: Number(m.l) || 0,
        },
      }
    } catch {
      return null
    }
  }
  const bar = message.indexOf('|')
  if (bar < 0) return null
  const parsed = keys.parse(message.slice(bar + 1))
  if (!parsed) return null
  if (parsed.kind === 'chat') {
    if (message.startsWith('-|')) return { kind: 'chat', key: parsed.id, ticket: null } // check what you hold
    const ticket = Number(message.slice(0, bar))
    return Number.isInteger(ticket) ? { kind: 'chat', key: parsed.id, ticket } : null
  }
  if (parsed.kind === 'lead') return { kind: 'lead', key: parsed.id, ticket: null }
  return null
}

export function decodeLeadReply(key: string, r: Raw): LeadReply {
  if (!Array.isArray(r)) throw new CorruptStateError(key, 'unexpected script reply')
  switch (r[0]) {
    case 1:
      return {
        status: 'granted',
        fence: num(r[1]),
        previousHolder: r[2] ? { replicaId: String(r[2]), incarnation: String(r[3] ?? '') } : null,
      }
    case 2:
      return { status: 'mine', fence: num(r[1]) }
    case 0:
      return { status: 'held', holder: { replicaId: String(r[1]), incarnation: String(r[2]) }, fence: num(r[3]), msLeft: num(r[4]) }
    case -1:
      return { status: 'reserved', target: String(r[1]), msLeft: num(r[2]) }
    default:
      throw new CorruptStateError(key, `unexpected script status ${String(r[0])}`)
  }
}

export function decodeTurnReply(stateKey: string, r: Raw): TurnReply {
  if (!Array.isArray(r)) throw new CorruptStateError(stateKey, 'unexpected script reply')
  switch (r[0]) {
    case 1:
      return {
        status: 'granted',
        ticket: num(r[1]),
        fence: num(r[2]),
        previousHolder: r[3] ? { replicaId: String(r[3]), incarnation: String(r[4] ?? '') } : null,
      }
    case 0:
      return {
        status: 'queued',
        ticket: num(r[1]),
        position: num(r[2]),
        holder: r[3] ? { replicaId: String(r[3]), incarnation: String(r[4] ?? ''), fence: num(r[5]) } : null,
      }
    case -1:
      return { status: 'dropped' }
    case -2:
      return { status: 'expired', ticket: num(r[1]) }
    default:
      throw new CorruptStateError(stateKey, `unexpected script status ${String(r[0])}`)
  }
}

/** maxmemory-policy other than noeviction can silently evict lease keys. Checked on every master. */
export async function evictionWarnings(client: RedisClient): Promise<Warning[]> {
  const out: Warning[] = []
  const nodes: Redis[] = isCluster(client) ? masters(client) : [client as Redis]
  for (const node of nodes) {
    try {
      const r = (await node.config('GET', 'maxmemory-policy')) as string[]
      const policy = r[1]
      if (policy && policy !== 'noeviction') {
        out.push({
          code: 'eviction-policy',
          message: `Redis ${node.options.host}:${node.options.port} has maxmemory-policy ${policy}: it may evict lease keys; set it to noeviction`,
        })
      }
    } catch {
      // CONFIG may be refused to an ACL user: nothing to say then
    }
  }
  return out
}
