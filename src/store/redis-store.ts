import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Redis } from 'ioredis'
import { RedisCoordinator } from '../coordinator/redis-coordinator.js'
import type { CoordinatorOptions } from '../coordinator/types.js'
import { OnePerStore, resolvedOptions } from '../coordinator/one-per-store.js'
import { turnSuperseded } from '../coordinator/incarnations.js'
import { PROCESS_REPLICA_ID } from '../coordinator/coordinator.js'
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
import { parseDuration, type Duration } from '../duration.js'
import { errorFromRedis } from '../errors/from-redis.js'
import { CheckpointConflictError } from '../errors/checkpoint-conflict-error.js'
import { InvalidCheckpointError } from '../errors/invalid-checkpoint-error.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { decodeCheckpoint, decodeHandover, type FlowCheckpoint, type HandoverMarker, type Json } from '../state/decode.js'
import { plainJsonProblem } from './plain-json.js'

/** Options of `store.coordinator()`: the coordinator's own, and two of the connection's (default: the store's idleKeyTtlMs). */
export type StoreCoordinatorOptions = CoordinatorOptions & { idleKeyTtlMs?: Duration; commandTimeoutMs?: Duration }

export interface RedisStoreOptions extends RedisConnectionOptions {
  /** Largest saved answer embedded in a checkpoint. Default 16 KiB. */
  maxAnswerBytes?: number
}

/** What a replica writes as a checkpoint; the store adds revision and updatedAt. */
export interface CheckpointInput {
  flow: string
  step: string | number
  /** Plain JSON only (no class instances, functions, Dates): it must survive the trip unchanged. */
  state: Json
  /** Who writes, with the writer's chat-turn fence: the store refuses it once the chat has a newer fence. */
  owner?: { replicaId: string; incarnation: string; fence?: number | null }
  /** A forward checkpoint of a non-persistent flow: expires ttlMs (default 5 min) after its last write. */
  ephemeral?: { ttlMs?: Duration; fingerprint: string }
  /**
   * The inbound answer of a suspended step. One larger than maxAnswerBytes as JSON is not embedded:
   * the checkpoint is written without it (`writeCheckpoint` says so) and the step asks again.
   */
  answer?: Json
}

/** What `writeCheckpoint` did. */
export interface CheckpointWrite {
  revision: number
  /** The saved answer: embedded, left out (larger than maxAnswerBytes — the step asks again), or none given. */
  answer: 'embedded' | 'omitted' | 'none'
  /** Its size as JSON (bytes); 0 when none was given. */
  answerBytes: number
}

export interface FencedLock {
  token: string
  fence: number
}

export interface HandoverMarkerInput {
  /** The async conversation's name. */
  name: string
  replicaId: string
  incarnation: string
  /** Remove the marker by itself this long after its last write (the conversation's timeout). Default 5 min. */
  ttlMs?: Duration
  data?: Json
}

/**
 * Shared state for the replicas of one bot: fenced locks, compare-and-set checkpoints, handover
 * markers — and `coordinator()`, a RedisCoordinator on the same client and prefix.
 */
export class RedisStore {
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
   * ttlMs)`, `release(name, fence)` on the same fenced leads as `coordinator.tryLead()`. One per store;
   * `replicaId` (default: the process's) is what operators see as the holder.
   */
  leases(options: { replicaId?: string } = {}): SchedulerLeases {
    const replicaId = options.replicaId ?? PROCESS_REPLICA_ID
    if (this.#leases && this.#leases.replicaId !== replicaId) {
      throw new ConfigurationError(
        `store.leases(): replicaId ${replicaId} differs from the store's lease backend (${this.#leases.replicaId})`,
      )
    }
    this.#leases ??= new SchedulerLeases(this.scripts, this.keys, this.idleTtl, replicaId)
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

  async getCheckpoint(key: string): Promise<FlowCheckpoint | null> {
    const rawKey = this.keys.chat(validateId(key, 'checkpoint key')).checkpoint
    const h = await this.read(rawKey, () => this.client.hgetall(rawKey))
    if (!h || Object.keys(h).length === 0) return null
    return decodeCheckpoint(key, rawKey, h)
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
    if (owner?.incarnation) turnSuperseded(owner.incarnation, key, fence)
    if (r.status === 'fence-conflict') throw new CheckpointConflictError(key, 'fence', { fence: r.fence })
    throw new CheckpointConflictError(key, 'revision', { revision: r.revision })
  }

  /**
   * Delete a checkpoint if its revision is still `revision`; false leaves a newer owner's checkpoint.
   * With `fence` (the clearer's turn fence), also false once the chat has a newer fence: a replica
   * that lost the chat cannot delete what its new owner resumed from. A turn holder should always pass
   * it: unfenced, the late clear of a holder whose lease expired (a slow link, a pause) still matches
   * the revision the next holder has just read, deletes it, and that holder's write is then refused
   * as superseded. Unfenced is for a process that holds no turn of the chat (a clean-up job).
   */
  async clearCheckpointIf(key: string, revision: number, options: { fence?: number | null } = {}): Promise<boolean> {
    const k = this.keys.chat(validateId(key, 'checkpoint key'))
    const fence = options.fence ?? null
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

  /** Leave a marker while an async conversation waits (one write when it first waits). */
  async setHandoverMarker(key: string, marker: HandoverMarkerInput): Promise<void> {
    const rawKey = this.keys.chat(validateId(key, 'chat key')).handover
    validateId(marker.name, 'conversation name')
    const problem = marker.data === undefined ? null : plainJsonProblem(marker.data, 'data')
    if (problem) throw new ConfigurationError(`handover marker ${JSON.stringify(key)}: ${problem}`)
    await this.scripts.call(
      HANDOVER_SET,
      { marker: rawKey },
      {
        name: marker.name,
        replicaId: marker.replicaId,
        incarnation: marker.incarnation,
        ttlMs: positive(marker.ttlMs ?? DEFAULTS.handoverTtlMs, 'ttlMs'),
        data: marker.data,
      },
    )
  }

  async getHandoverMarker(key: string): Promise<HandoverMarker | null> {
    const rawKey = this.keys.chat(validateId(key, 'chat key')).handover
    const h = await this.read(rawKey, () => this.client.hgetall(rawKey))
    if (!h || Object.keys(h).length === 0) return null
    return decodeHandover(key, rawKey, h)
  }

  /** Remove the marker (the second write). With `incarnation`, only if that incarnation wrote it. */
  async clearHandoverMarker(key: string, options: { incarnation?: string } = {}): Promise<boolean> {
    const rawKey = this.keys.chat(validateId(key, 'chat key')).handover
    return this.scripts.call(HANDOVER_CLEAR, { marker: rawKey }, { incarnation: options.incarnation ?? null })
  }

  /**
   * Read and remove the marker in one step: the new owner applies its fallback exactly once. When the
   * connection dropped during the call and the resent take found none, CoordinationUnavailableError:
   * the first run may have taken it (and what it read is lost with the reply).
   */
  async takeHandoverMarker(key: string): Promise<HandoverMarker | null> {
    const rawKey = this.keys.chat(validateId(key, 'chat key')).handover
    const h = await this.scripts.call(HANDOVER_TAKE, { marker: rawKey }, {})
    return h === null ? null : decodeHandover(key, rawKey, h)
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

  /** Close the connection the store opened (not a client you passed in). */
  async close(): Promise<void> {
    if (!this.ownsClient) return
    await closeClient(this.redis, this.timeoutMs)
  }

  get isCluster(): boolean {
    return isCluster(this.redis)
  }
}

/**
 * A checkpoint to write, checked (any store): flow, step, plain-JSON state; what becomes of its saved
 * answer; its ephemeral TTL (null: persistent).
 */
export function checkedCheckpoint(
  key: string,
  checkpoint: CheckpointInput,
  maxAnswerBytes: number,
): { answer: Omit<CheckpointWrite, 'revision'>; ttl: number | null } {
  validateId(key, 'checkpoint key')
  if (!checkpoint || typeof checkpoint.flow !== 'string' || !checkpoint.flow) {
    throw new InvalidCheckpointError(key, 'flow must be a non-empty string')
  }
  if (typeof checkpoint.step !== 'string' && typeof checkpoint.step !== 'number') {
    throw new InvalidCheckpointError(key, 'step must be a string or a number')
  }
  const problem = plainJsonProblem(checkpoint.state, 'state')
  if (problem) throw new InvalidCheckpointError(key, `${problem}; checkpoint state must be plain JSON`)
  const answer = savedAnswer(key, checkpoint.answer, maxAnswerBytes)
  const ttl = checkpoint.ephemeral ? positive(checkpoint.ephemeral.ttlMs ?? DEFAULTS.ephemeralTtlMs, 'ephemeral.ttlMs') : null
  return { answer, ttl }
}

/** What becomes of a checkpoint's saved answer: plain JSON is required; above `max` bytes it is left out. */
function savedAnswer(key: string, answer: Json | undefined, max: number): Omit<CheckpointWrite, 'revision'> {
  if (answer === undefined) return { answer: 'none', answerBytes: 0 }
  const p = plainJsonProblem(answer, 'answer')
  if (p) throw new InvalidCheckpointError(key, `${p}; the saved answer must be plain JSON`)
  const answerBytes = Buffer.byteLength(JSON.stringify(answer))
  return { answer: answerBytes > max ? 'omitted' : 'embedded', answerBytes }
}

/** A duration of at least 1 ms, or ConfigurationError naming `what`. */
export function positive(v: Duration, what: string): number {
  const ms = parseDuration(v, what)
  if (ms < 1) throw new ConfigurationError(`${what} must be at least 1 ms`)
  return ms
}
