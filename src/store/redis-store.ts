import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Redis } from 'ioredis'
import { RedisCoordinator } from '../coordinator/redis-coordinator.js'
import type { CoordinatorOptions } from '../coordinator/types.js'
import { OnePerStore, resolvedOptions } from '../coordinator/one-per-store.js'
import { SchedulerLeases } from './scheduler-leases.js'
import { ScriptRunner } from '../scripts/runner.js'
import {
  CHECKPOINT_CLEAR,
  CHECKPOINT_SET,
  HANDOVER_CLEAR,
  HANDOVER_SET,
  HANDOVER_TAKE,
  LOCK_ACQUIRE,
  LOCK_RELEASE,
  LOCK_RENEW,
} from '../scripts/registry.js'
import { closeClient, isCluster, resolveRedis, withTimeout, type RedisClient, type RedisConnectionOptions } from '../connection.js'
import { DEFAULTS } from '../defaults.js'
import { validateId, type KeyLayout, type RedisKey } from '../keys.js'
import type { Duration } from '../duration.js'
import { errorFromRedis } from '../errors/from-redis.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { decodeCheckpoint, decodeHandover, type FlowCheckpoint, type HandoverMarker } from '../state/decode.js'
import { plainJsonProblem } from './plain-json.js'
import {
  checkedCheckpoint,
  positive,
  type CheckpointInput,
  type CheckpointWrite,
  type FencedLock,
  type HandoverMarkerInput,
  type TakenHandoverMarker,
} from './inputs.js'
import { checkpointRead, lostHere, refusedWrite, type CheckpointRead, type CheckpointReadOptions } from './fenced-write.js'
import type { CoordinationStore } from './coordination-store.js'

export {
  checkedCheckpoint,
  positive,
  type CheckpointInput,
  type CheckpointWrite,
  type FencedLock,
  type HandoverMarkerInput,
  type TakenHandoverMarker,
} from './inputs.js'

/** Options of `store.coordinator()`: the coordinator's own, and two of the connection's (default: the store's idleKeyTtlMs). */
export type StoreCoordinatorOptions = CoordinatorOptions & { idleKeyTtlMs?: Duration; commandTimeoutMs?: Duration }

export interface RedisStoreOptions extends RedisConnectionOptions {
  /** Largest saved answer embedded in a checkpoint. Default 16 KiB. */
  maxAnswerBytes?: number
}

/**
 * Shared state for the replicas of one bot: fenced locks, compare-and-set checkpoints, handover
 * markers — and `coordinator()`, a RedisCoordinator on the same client and prefix.
 */
export class RedisStore implements CoordinationStore {
  readonly redis: RedisClient
  readonly keys: KeyLayout
  readonly maxAnswerBytes: number
  private readonly scripts: ScriptRunner
  private readonly ownsClient: boolean
  private readonly eventsMaxLen: number
  private readonly timeoutMs: number
  private readonly idleTtl: number
  readonly #coordinator = new OnePerStore<RedisCoordinator, StoreCoordinatorOptions>(
    (options) =>
      new RedisCoordinator({
        idleKeyTtlMs: this.idleTtl,
        ...options,
        redis: this.redis,
        prefix: this.keys.prefix,
        layout: this.keys.layout,
        eventsMaxLen: this.eventsMaxLen,
      }),
    (c) => resolvedOptions(c, { idleKeyTtlMs: c.idleKeyTtlMs, commandTimeoutMs: c.commandTimeoutMs }),
  )

  constructor(options: RedisStoreOptions = {}) {
    const { redis, keys, ownsClient, commandTimeoutMs, idleKeyTtlMs, eventsMaxLen } = resolveRedis(options)
    this.redis = redis
    this.keys = keys
    this.ownsClient = ownsClient
    this.timeoutMs = commandTimeoutMs
    this.idleTtl = idleKeyTtlMs
    this.eventsMaxLen = eventsMaxLen
    this.maxAnswerBytes = options.maxAnswerBytes ?? DEFAULTS.maxAnswerBytes
    this.scripts = new ScriptRunner(redis, this.timeoutMs)
  }

  /**
   * The store's coordinator: on this store's client, prefix, layout and `idleKeyTtlMs`. Made on the
   * first call; later calls return the same instance (options they give must agree with it, or
   * ConfigurationError names the option), a stopped one is replaced. Stop it before closing the store.
   */
  coordinator(options: StoreCoordinatorOptions = {}): RedisCoordinator {
    return this.#coordinator.get(options)
  }

  /**
   * A lease backend for a scheduler (`scheduler.lease`): `acquire(name, ttlMs)`, `renew(name, fence,
   * ttlMs)`, `release(name, fence)` on the same fenced leads as `coordinator.tryLead()`, held under
   * the store's coordinator — its replicaId, incarnation and heartbeat (an acquire starts it if it has
   * not started). One per store. `replicaId` is the coordinator's: given, it must agree with it (or
   * it makes the coordinator with it, on the first call), like `store.coordinator({ replicaId })`.
   */
  leases(options: { replicaId?: string } = {}): SchedulerLeases {
    if (options.replicaId !== undefined) this.coordinator({ replicaId: options.replicaId })
    this.#leases ??= new SchedulerLeases(this.scripts, this.keys, this.idleTtl, () => this.coordinator())
    return this.#leases
  }

  #leases: SchedulerLeases | null = null

  // ------------------------------------------------------------ fenced locks

  /**
   * Take a lock for ttlMs: `{ token, fence }` (the fence grows on every acquisition, forever), or null.
   * `owner` is what operators see in `locks ls` (default `host:pid`; a replicaId is a good choice).
   */
  async acquireLockFenced(key: string, ttlMs: Duration, options: { owner?: string } = {}): Promise<FencedLock | null> {
    const k = this.keys.lock(validateId(key, 'lock key'))
    const ttl = positive(ttlMs, 'ttlMs')
    const token = randomBytes(16).toString('hex')
    const owner = options.owner ?? `${hostname()}:${process.pid}`
    const fence = await this.scripts.call(LOCK_ACQUIRE, { lock: k }, { token, ttlMs: ttl, owner, idleTtlMs: this.idleTtl })
    return fence === null ? null : { token, fence }
  }

  /** Extend a lock held with `token`; false when it is no longer held (expired or taken). */
  async renewLock(key: string, token: string, ttlMs: Duration): Promise<boolean> {
    const k = this.keys.lock(validateId(key, 'lock key'))
    return this.scripts.call(LOCK_RENEW, { lock: k }, { token, ttlMs: positive(ttlMs, 'ttlMs'), idleTtlMs: this.idleTtl })
  }

  /**
   * Release a lock held with `token`; false when it was not (any more) held with it. True after a
   * dropped connection whose resent release found nothing: not held with the token either way.
   */
  async releaseLock(key: string, token: string): Promise<boolean> {
    const k = this.keys.lock(validateId(key, 'lock key'))
    return this.scripts.call(LOCK_RELEASE, { lock: k }, { token })
  }

  // ------------------------------------------------------------ checkpoints

  /**
   * The chat's checkpoint, or null. With `fingerprint` (one, or a list: `[current, previous]` during a
   * rolling deploy), it also says whether it is `compatible`: persistent, or ephemeral with one of them.
   */
  async getCheckpoint(key: string): Promise<FlowCheckpoint | null>
  async getCheckpoint(key: string, options: CheckpointReadOptions): Promise<CheckpointRead | null>
  async getCheckpoint(key: string, options: CheckpointReadOptions = {}): Promise<FlowCheckpoint | CheckpointRead | null> {
    const rawKey = this.keys.chat(validateId(key, 'checkpoint key')).checkpoint
    const h = await this.read(rawKey, () => this.client.hgetall(rawKey))
    if (!h || Object.keys(h).length === 0) return null
    return checkpointRead(decodeCheckpoint(key, rawKey, h), options)
  }

  /**
   * Compare-and-set a checkpoint: written only if its revision is `expectedRevision` (null: only if
   * none exists) and, when `checkpoint.owner.fence` is given, only if the chat has no newer turn fence.
   * Resolves with the new revision; rejects with CheckpointConflictError (a LeaseLostError, reason
   * 'superseded') when refused, and InvalidCheckpointError for state that is not plain JSON.
   */
  async setCheckpointIf(key: string, checkpoint: CheckpointInput, expectedRevision: number | null): Promise<number> {
    return (await this.writeCheckpoint(key, checkpoint, expectedRevision)).revision
  }

  /** `setCheckpointIf`, telling also what became of the saved answer (embedded, or left out as too large). */
  async writeCheckpoint(key: string, checkpoint: CheckpointInput, expectedRevision: number | null): Promise<CheckpointWrite> {
    const { answer, ttl } = checkedCheckpoint(key, checkpoint, this.maxAnswerBytes)
    const embedded = answer.answer === 'embedded'
    const answerBytes = embedded ? answer.answerBytes : 0
    const owner = checkpoint.owner
    const fence = owner?.fence ?? null
    const writer = { incarnation: owner?.incarnation, fence }
    if (lostHere(owner?.incarnation, key, fence)) throw refusedWrite(key, 'checkpoint', writer, { status: 'lease-expired', fence: fence! })
    const k = this.keys.chat(key)
    const data = JSON.stringify({ state: checkpoint.state, ...(embedded ? { answer: checkpoint.answer } : {}) })
    const r = await this.scripts.call(
      CHECKPOINT_SET,
      { checkpoint: k.checkpoint, state: k.state },
      {
        expectedRevision,
        flow: checkpoint.flow,
        step: String(checkpoint.step),
        data,
        ownerReplicaId: owner?.replicaId ?? null,
        ownerIncarnation: owner?.incarnation ?? null,
        ownerFence: fence,
        ttlMs: ttl,
        fingerprint: checkpoint.ephemeral?.fingerprint ?? null,
        answerBytes,
        writeId: randomBytes(8).toString('hex'),
      },
    )
    if (r.status === 'written') return { revision: r.revision, answer: answer.answer, answerBytes: answer.answerBytes }
    // A refused write is a lost turn (seed): lost in the writer's coordinator too, if it runs here.
    throw refusedWrite(key, 'checkpoint', writer, r)
  }

  /**
   * Delete a checkpoint if its revision is still `revision`; false leaves a newer owner's checkpoint.
   * With `fence` (the clearer's turn fence), also false once the chat has a newer fence: a replica
   * that lost the chat cannot delete what its new owner resumed from. A turn holder should always pass
   * it: unfenced, the late clear of a holder whose lease expired (a slow link, a pause) still matches
   * the revision the next holder has just read, deletes it, and that holder's write is then refused
   * as superseded. Unfenced is for a process that holds no turn of the chat (a clean-up job). A
   * fenced clear is also false once that turn ended: its lease expired in Redis, or — `incarnation`
   * given, the clearer's coordinator running here — that coordinator declared it lost.
   */
  async clearCheckpointIf(key: string, revision: number, options: { fence?: number | null; incarnation?: string } = {}): Promise<boolean> {
    const k = this.keys.chat(validateId(key, 'checkpoint key'))
    const fence = options.fence ?? null
    if (lostHere(options.incarnation, key, fence)) return false
    const r = await this.scripts.call(CHECKPOINT_CLEAR, { checkpoint: k.checkpoint, state: k.state }, { revision, fence })
    return r === 'cleared'
  }

  /** Milliseconds until an ephemeral checkpoint expires (null: persistent or absent). */
  async checkpointTtl(key: string): Promise<number | null> {
    const rawKey = this.keys.chat(validateId(key, 'checkpoint key')).checkpoint
    const ms = await this.read(rawKey, () => this.client.pttl(rawKey))
    return typeof ms === 'number' && ms >= 0 ? ms : null
  }

  // ------------------------------------------------------------ handover markers

  /**
   * Leave a marker while an async conversation waits (one write when it first waits). With `fence`
   * (the writer's turn fence) it is refused, as a fenced checkpoint write is, with
   * CheckpointConflictError (`write: 'handover-marker'`): once the chat has a newer fence or holds a
   * marker written under a newer one (`conflict: 'fence'`), or once the writer's turn ended — expired
   * in Redis, or declared lost by its coordinator in this process (`conflict: 'lease'`).
   */
  async setHandoverMarker(key: string, marker: HandoverMarkerInput): Promise<void> {
    const k = this.keys.chat(validateId(key, 'chat key'))
    validateId(marker.name, 'conversation name')
    const problem = marker.data === undefined ? null : plainJsonProblem(marker.data, 'data')
    if (problem) throw new ConfigurationError(`handover marker ${JSON.stringify(key)}: ${problem}`)
    const ttlMs = positive(marker.ttlMs ?? DEFAULTS.handoverTtlMs, 'ttlMs')
    const fence = marker.fence ?? null
    const writer = { incarnation: marker.incarnation, fence }
    if (lostHere(marker.incarnation, key, fence))
      throw refusedWrite(key, 'handover-marker', writer, { status: 'lease-expired', fence: fence! })
    const r = await this.scripts.call(
      HANDOVER_SET,
      { marker: k.handover, state: k.state },
      { name: marker.name, replicaId: marker.replicaId, incarnation: marker.incarnation, ttlMs, data: marker.data, fence },
    )
    if (r.status !== 'written') throw refusedWrite(key, 'handover-marker', writer, r)
  }

  async getHandoverMarker(key: string): Promise<HandoverMarker | null> {
    const rawKey = this.keys.chat(validateId(key, 'chat key')).handover
    const h = await this.read(rawKey, () => this.client.hgetall(rawKey))
    if (!h || Object.keys(h).length === 0) return null
    return decodeHandover(key, rawKey, h)
  }

  /**
   * Remove the marker (the second write). With `incarnation`, only if that incarnation wrote it. With
   * `fence` (the clearer's turn fence), false — nothing removed — once the chat has a newer fence, the
   * marker was written under a newer one, or the clearer's turn ended (as `setHandoverMarker`).
   */
  async clearHandoverMarker(key: string, options: { incarnation?: string; fence?: number | null } = {}): Promise<boolean> {
    const k = this.keys.chat(validateId(key, 'chat key'))
    const fence = options.fence ?? null
    if (lostHere(options.incarnation, key, fence)) return false
    const r = await this.scripts.call(
      HANDOVER_CLEAR,
      { marker: k.handover, state: k.state },
      { incarnation: options.incarnation ?? null, fence },
    )
    return r === 'cleared'
  }

  /**
   * Read and remove the marker in one step: the new owner applies its fallback exactly once. With
   * `unless` (an incarnation, usually the caller's own), a marker that incarnation wrote is left in
   * place and answered with `taken: false` — a replica does not consume its own marker. When the
   * connection dropped during the call and the resent take found none, CoordinationUnavailableError:
   * the first run may have taken it (and what it read is lost with the reply).
   */
  async takeHandoverMarker(key: string, options: { unless?: string } = {}): Promise<TakenHandoverMarker | null> {
    const rawKey = this.keys.chat(validateId(key, 'chat key')).handover
    const r = await this.scripts.call(HANDOVER_TAKE, { marker: rawKey }, { unless: options.unless ?? null })
    return r === null ? null : { ...decodeHandover(key, rawKey, r.fields), taken: r.taken }
  }

  // ------------------------------------------------------------

  /** Single-key reads: a Cluster routes them by key itself, so both clients serve as one surface. */
  private get client(): Redis {
    return this.redis as Redis
  }

  private async read<T>(rawKey: RedisKey, f: () => Promise<T>): Promise<T> {
    try {
      return await withTimeout(f(), this.timeoutMs, 'read')
    } catch (err) {
      throw errorFromRedis(err, rawKey)
    }
  }

  /**
   * Close the connection the store opened (not a client you passed in). The coordinator that
   * `leases()` started is stopped first; one you started yourself you stop before.
   */
  async close(): Promise<void> {
    await this.#leases?.stopStarted()
    if (!this.ownsClient) return
    await closeClient(this.redis, this.timeoutMs)
  }

  get isCluster(): boolean {
    return isCluster(this.redis)
  }
}
