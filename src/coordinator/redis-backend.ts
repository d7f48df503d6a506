import type { Redis } from 'ioredis'
import { KeyLayout, SCHEMA_VERSION, type RedisKey } from '../keys.js'
import { ScriptRunner } from '../scripts/runner.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { asError, errorFromRedis } from '../errors/from-redis.js'
import {
  closeClient,
  clusterIdentity,
  evictionWarnings,
  isCluster,
  keySlot,
  slotOwnerIn,
  watchServerChanges,
  withTimeout,
  batchWrites,
  type RedisClient,
  type ResolvedRedis,
} from '../connection.js'
import type { CoordinationBackend, WakeHandler, Warning } from './backend.js'
import { decodeWake } from '../wire/wake.js'
import { TurnKeys } from './turn-keys.js'
import { explainRefusal, publishCheck } from './permissions.js'
import type {
  BeatRecord,
  BeatReply,
  LeadReply,
  RenewItem,
  RenewReply,
  TurnReleaseReply,
  TurnReply,
  YieldRequestInput,
  YieldResult,
} from '../wire/types.js'
import {
  LEAD_ACQUIRE,
  LEAD_RELEASE,
  LEAD_TRANSPORT,
  LEAD_YIELD,
  LEASE_RENEW,
  LEASE_RENEW_MANY,
  REPLICA_BEAT,
  REPLICA_STOP,
  SCHEMA_INIT,
  TURN_ACQUIRE,
  TURN_RELEASE,
} from '../scripts/registry.js'

/** The client (closed on close() when ownsClient), key names and limits, as resolveRedis read them. */
export type RedisBackendOptions = ResolvedRedis

/** The Redis side of a coordinator: each method is one Lua script call (EVALSHA, NOSCRIPT fallback). */
export class RedisBackend implements CoordinationBackend {
  readonly kind = 'redis' as const
  readonly redis: RedisClient
  readonly keys: KeyLayout
  readonly scripts: ScriptRunner
  private readonly opts: RedisBackendOptions
  private subscriber: RedisClient | null = null
  private subscribed = false
  /** A beat answered already: a record missing at a later beat means the keys were flushed. */
  private beaten = false
  /** PUBLISH refused to this user (see ./permissions.ts): no replica is woken, waiters poll as without pushes. */
  private wakesRefused = false
  private readonly turnKeys: TurnKeys

  constructor(opts: RedisBackendOptions) {
    this.opts = opts
    this.redis = opts.redis
    this.keys = opts.keys
    this.scripts = new ScriptRunner(opts.redis, opts.commandTimeoutMs)
    this.turnKeys = new TurnKeys(opts.keys)
  }

  async init(): Promise<Warning[]> {
    const warnings: Warning[] = []
    const { version, layout } = await this.scripts.call(
      SCHEMA_INIT,
      { schema: this.keys.schema },
      { version: SCHEMA_VERSION, layout: this.keys.layout },
    )
    if (version > SCHEMA_VERSION) {
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
    const publish = await publishCheck(this.redis, this.keys, this.opts.commandTimeoutMs)
    this.wakesRefused = publish !== null
    return publish ? [...warnings, publish] : warnings
  }

  explainRefusal(err: unknown): Promise<unknown> {
    return explainRefusal(err, this.redis, this.keys, this.opts.commandTimeoutMs)
  }

  /** A poll, renewal or lead attempt may take almost a lease: a shorter bound times out calls Redis still runs (unseen grants). */
  private leaseCallTimeout(leaseMs: number): number {
    return Math.max(this.opts.commandTimeoutMs, Math.floor(leaseMs * 0.9))
  }

  // The turn calls are not async functions: each would add a promise and its ticks to every turn.
  turnAcquire(
    key: string,
    replicaId: string,
    incarnation: string,
    leaseMs: number,
    ticket: number | null,
    requestId: string,
    epoch = '',
  ): Promise<TurnReply> {
    return this.scripts.call(
      TURN_ACQUIRE,
      this.turnKeys.of(key),
      {
        replicaId,
        incarnation,
        leaseMs,
        idleTtlMs: this.opts.idleKeyTtlMs,
        ticket,
        wakeChannelPrefix: this.keys.wakeChannelPrefix,
        requestId,
        epoch,
      },
      this.leaseCallTimeout(leaseMs),
    )
  }

  turnRelease(
    key: string,
    incarnation: string,
    ticket: number | null,
    leaseMs: number,
    requestId = '',
    unserved = false,
    lastWaiter = false,
    queued = false,
  ): Promise<TurnReleaseReply> {
    return this.scripts.call(TURN_RELEASE, this.turnKeys.of(key), {
      incarnation,
      ticket,
      leaseMs,
      idleTtlMs: this.opts.idleKeyTtlMs,
      wakeChannelPrefix: this.keys.wakeChannelPrefix,
      requestId,
      unserved,
      lastWaiter,
      queued,
    })
  }

  async leadAcquire(name: string, replicaId: string, incarnation: string, leaseMs: number, stand: boolean): Promise<LeadReply> {
    return this.scripts.call(
      LEAD_ACQUIRE,
      { lead: this.keys.lead(name) },
      { replicaId, incarnation, leaseMs, idleTtlMs: this.opts.idleKeyTtlMs, stand },
      this.leaseCallTimeout(leaseMs),
    )
  }

  async leadRelease(name: string, incarnation: string, fence: number | null, leaseMs: number): Promise<boolean> {
    return this.scripts.call(
      LEAD_RELEASE,
      { lead: this.keys.lead(name) },
      { incarnation, fence, leaseMs, idleTtlMs: this.opts.idleKeyTtlMs, wakeChannelPrefix: this.keys.wakeChannelPrefix },
    )
  }

  async leadTransport(name: string, incarnation: string, fence: number, down: boolean, yieldAfterMs: number): Promise<boolean> {
    return this.scripts.call(LEAD_TRANSPORT, { lead: this.keys.lead(name) }, { incarnation, fence, down, yieldAfterMs })
  }
  async requestYield(name: string, req: YieldRequestInput): Promise<YieldResult> {
    return this.scripts.call(
      LEAD_YIELD,
      { lead: this.keys.lead(name) },
      { by: req.by, target: req.target, ttlMs: req.ttlMs, ifFence: req.ifFence, wakeChannelPrefix: this.keys.wakeChannelPrefix },
    )
  }

  private leaseKey(item: { kind: 'chat' | 'lead'; key: string }): RedisKey {
    return item.kind === 'chat' ? this.turnKeys.of(item.key).state : this.keys.lead(item.key)
  }

  async renew(items: RenewItem[], incarnation: string, leaseMs: number): Promise<Array<RenewReply | Error>> {
    const args = { incarnation, leaseMs, idleTtlMs: this.opts.idleKeyTtlMs }
    const timeout = this.leaseCallTimeout(leaseMs)
    // One server holds every key: one script renews them all (the renewer sends 500 at a time).
    if (!isCluster(this.redis)) {
      const keys = items.map((i) => this.leaseKey(i))
      const many = await this.scripts
        .callMany(
          LEASE_RENEW_MANY,
          keys,
          args,
          items.map((i) => String(i.fence)),
          timeout,
        )
        .catch(asError)
      return many instanceof Error ? items.map(() => many) : many
    }
    // A cluster: one script per lease, sent together: one write per node, replies in order.
    batchWrites(this.redis)
    const one = (i: RenewItem) => this.scripts.call(LEASE_RENEW, { lease: this.leaseKey(i) }, { ...args, fence: i.fence }, timeout)
    return Promise.all(items.map((i) => one(i).catch(asError)))
  }

  async beat(replicaId: string, incarnation: string, leaseMs: number, record: BeatRecord): Promise<BeatReply> {
    // The wall clock goes with the beat when it is sent, not while the client reconnects: a beat that
    // waited in the offline queue would show the wait as clock skew (doctor's clock-skew check).
    await this.ready()
    const { recordMissing, ...reply } = await this.scripts.call(
      REPLICA_BEAT,
      { replica: this.keys.replica(replicaId), index: this.keys.replicaIndex },
      { replicaId, incarnation, leaseMs, info: record.info, stats: record.stats, leases: record.leases, wallClockMs: Date.now() },
    )
    // This replica's record gone between two beats: the keys were flushed (FLUSHALL, a restart
    // without persistence). The schema record went with them: write it again, or the prefix reads as
    // one no replica ever started. Best effort: the next such beat tries again.
    if (recordMissing && this.beaten) {
      await this.scripts
        .call(SCHEMA_INIT, { schema: this.keys.schema }, { version: SCHEMA_VERSION, layout: this.keys.layout })
        .catch(() => {})
    }
    this.beaten = true
    return reply
  }

  /** Resolves once the client is connected and ready (at once when it is), or after commandTimeoutMs. */
  private ready(): Promise<void> {
    const client = this.redis
    if (client.status === 'ready') return Promise.resolve()
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        client.off('ready', done)
        resolve()
      }
      const timer = setTimeout(done, this.opts.commandTimeoutMs)
      client.once('ready', done)
    })
  }

  async replicaStop(replicaId: string, incarnation: string): Promise<void> {
    await this.scripts.call(
      REPLICA_STOP,
      { replica: this.keys.replica(replicaId), index: this.keys.replicaIndex },
      { incarnation, replicaId },
    )
  }

  async subscribe(incarnation: string, onWake: WakeHandler, onPushGap: () => void = () => {}): Promise<() => Promise<void>> {
    const sub: RedisClient = isCluster(this.redis) ? this.redis.duplicate() : (this.redis as Redis).duplicate()
    this.subscriber = sub
    sub.on('error', () => {}) // reconnects by itself; polling is the safety net meanwhile
    const channel = this.keys.wakeChannel(incarnation)
    sub.on('message', (ch: string, message: string) => {
      if (ch !== channel) return
      const wake = decodeWake(this.keys, message)
      if (wake) onWake(wake.kind, wake.key, wake.ticket, wake.grant)
    })
    // ioredis re-subscribes after a reconnect; until then, waiters poll with backoff. Pushes sent
    // meanwhile are lost: keepers poll when it drops, and again once the subscription is confirmed.
    sub.on('close', () => {
      const was = this.subscribed
      this.subscribed = false
      if (was && this.subscriber === sub) onPushGap()
    })
    sub.on('ready', () => {
      if (this.subscriber !== sub) return
      this.subscribed = true
      // SUBSCRIBE again (a no-op if ioredis's own re-subscription came first): its reply says we listen.
      withTimeout(sub.subscribe(channel), this.opts.commandTimeoutMs, 'SUBSCRIBE').then(
        () => this.subscriber === sub && onPushGap(),
        () => {},
      )
    })
    try {
      await withTimeout(sub.subscribe(channel), this.opts.commandTimeoutMs, 'SUBSCRIBE')
      this.subscribed = true
    } catch (err) {
      await closeClient(sub, 0)
      this.subscriber = null
      throw errorFromRedis(err, undefined)
    }
    return async () => {
      if (this.subscriber !== sub) return
      this.subscriber = null
      this.subscribed = false
      await closeClient(sub, this.opts.commandTimeoutMs)
    }
  }

  pushReady(): boolean {
    return !this.wakesRefused && this.subscribed && this.subscriber !== null
  }

  async serverIdentity(leaseMs?: number): Promise<string | null> {
    // Asked with the renewals: as patient as they are, or a busy Redis would make renewals untrusted.
    const timeout = leaseMs ? this.leaseCallTimeout(leaseMs) : this.opts.commandTimeoutMs
    try {
      // Per master on a Cluster, with the slots each serves (a change then names the master, and
      // reaches only the leases in its slots); one run_id otherwise.
      if (isCluster(this.redis)) return await clusterIdentity(this.redis, timeout)
      const info = await withTimeout((this.redis as Redis).info('server'), timeout, 'INFO')
      return /run_id:([0-9a-f]+)/.exec(info)?.[1] ?? '?'
    } catch (err) {
      if (/NOPERM/.test(String((err as Error)?.message))) return null
      throw errorFromRedis(err, undefined)
    }
  }

  /** On a Cluster: the master (`host:port=run_id`) that serves the lease's slot in `identity`. */
  ownerIn(identity: string, lease: { kind: 'chat' | 'lead'; key: string }): string | null {
    if (!isCluster(this.redis)) return null
    return slotOwnerIn(identity, keySlot(this.leaseKey(lease)))
  }

  watchServer(onChange: () => void): () => void {
    return watchServerChanges(this.redis, onChange)
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

  get stopBudgetMs(): number {
    return 2 * this.opts.commandTimeoutMs
  }

  async close(): Promise<void> {
    const sub = this.subscriber
    this.subscriber = null
    await Promise.all([
      sub && closeClient(sub, this.opts.commandTimeoutMs),
      this.opts.ownsClient && closeClient(this.redis, this.opts.commandTimeoutMs),
    ])
  }

  crash(): void {
    this.subscriber?.disconnect()
    this.subscriber = null
    this.subscribed = false
    if (this.opts.ownsClient) this.redis.disconnect()
  }
}
