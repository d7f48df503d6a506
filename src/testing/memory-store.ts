/**
 * The in-memory counterpart of RedisStore, on a MemoryCoordinationHub: fenced locks, compare-and-set
 * checkpoints fenced by the chat's turn on the hub, ephemeral TTL and fingerprint, handover markers,
 * saved answers and the plain-JSON checks — so a bot's own tests cover checkpoints and handover
 * without Redis. Time is the hub's clock (Redis's TIME to the replicas); each method runs without
 * awaiting, as atomic as a script. The same store contract suite runs on it and on RedisStore.
 */
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { DEFAULTS } from '../defaults.js'
import type { Duration } from '../duration.js'
import { validateId } from '../keys.js'
import { CheckpointConflictError } from '../errors/checkpoint-conflict-error.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import type { FlowCheckpoint, HandoverMarker, Json } from '../state/decode.js'
import { plainJsonProblem } from '../store/plain-json.js'
import {
  checkedCheckpoint,
  positive,
  type CheckpointInput,
  type CheckpointWrite,
  type FencedLock,
  type HandoverMarkerInput,
} from '../store/redis-store.js'
import type { SchedulerLease } from '../store/scheduler-leases.js'
import { turnSuperseded } from '../coordinator/incarnations.js'
import { OnePerStore, resolvedOptions } from '../coordinator/one-per-store.js'
import { PROCESS_REPLICA_ID } from '../coordinator/coordinator.js'
import type { CoordinatorOptions } from '../coordinator/types.js'
import { MemoryCoordinator } from './memory-coordinator.js'
import type { MemoryCoordinationHub } from './memory-hub.js'

export interface MemoryStoreOptions {
  /** The hub its coordinator and the chats' turn fences live on (share it with the MemoryCoordinators). */
  hub: MemoryCoordinationHub
  /** Largest saved answer embedded in a checkpoint. Default 16 KiB. */
  maxAnswerBytes?: number
}

type Stored<T> = { value: T; expiresAt: number | null }

/** What Redis holds for the stores: per hub, so every MemoryStore on one hub (one per replica) shares it. */
interface SharedStoreState {
  locks: Map<string, Stored<{ token: string; fence: number; owner: string }>>
  checkpoints: Map<string, Stored<FlowCheckpoint>>
  markers: Map<string, Stored<HandoverMarker>>
}
const sharedState = new WeakMap<MemoryCoordinationHub, SharedStoreState>()

export class MemoryStore {
  readonly hub: MemoryCoordinationHub
  readonly maxAnswerBytes: number
  private readonly locks: SharedStoreState['locks']
  private readonly checkpoints: SharedStoreState['checkpoints']
  private readonly markers: SharedStoreState['markers']
  readonly #coordinator = new OnePerStore<MemoryCoordinator, CoordinatorOptions>(
    (options) => new MemoryCoordinator({ ...options, hub: this.hub }),
    (c) => resolvedOptions(c),
  )
  #leases: MemorySchedulerLeases | null = null

  constructor(options: MemoryStoreOptions) {
    this.hub = options.hub
    this.maxAnswerBytes = options.maxAnswerBytes ?? DEFAULTS.maxAnswerBytes
    let shared = sharedState.get(this.hub)
    if (!shared) sharedState.set(this.hub, (shared = { locks: new Map(), checkpoints: new Map(), markers: new Map() }))
    this.locks = shared.locks
    this.checkpoints = shared.checkpoints
    this.markers = shared.markers
  }

  /** The store's one MemoryCoordinator on its hub (the same instance on later calls, as RedisStore's). */
  coordinator(options: CoordinatorOptions = {}): MemoryCoordinator {
    return this.#coordinator.get(options)
  }

  /** A scheduler's lease backend on the hub's leads (as `RedisStore.leases()`). */
  leases(options: { replicaId?: string } = {}): MemorySchedulerLeases {
    const replicaId = options.replicaId ?? PROCESS_REPLICA_ID
    if (this.#leases && this.#leases.replicaId !== replicaId) {
      throw new ConfigurationError(
        `store.leases(): replicaId ${replicaId} differs from the store's lease backend (${this.#leases.replicaId})`,
      )
    }
    this.#leases ??= new MemorySchedulerLeases(this.hub, replicaId)
    return this.#leases
  }

  private live<T>(map: Map<string, Stored<T>>, key: string): T | null {
    const e = map.get(key)
    if (!e) return null
    if (e.expiresAt !== null && e.expiresAt <= this.hub.now()) {
      map.delete(key)
      return null
    }
    return e.value
  }

  // ------------------------------------------------------------ fenced locks

  async acquireLockFenced(key: string, ttlMs: Duration, options: { owner?: string } = {}): Promise<FencedLock | null> {
    validateId(key, 'lock key')
    const ttl = positive(ttlMs, 'ttlMs')
    if (this.live(this.locks, key)) return null
    const token = randomBytes(16).toString('hex')
    const fence = this.hub.nextFence()
    this.locks.set(key, {
      value: { token, fence, owner: options.owner ?? `${hostname()}:${process.pid}` },
      expiresAt: this.hub.now() + ttl,
    })
    return { token, fence }
  }

  async renewLock(key: string, token: string, ttlMs: Duration): Promise<boolean> {
    validateId(key, 'lock key')
    const ttl = positive(ttlMs, 'ttlMs')
    const lock = this.live(this.locks, key)
    if (!lock || lock.token !== token) return false
    this.locks.set(key, { value: lock, expiresAt: this.hub.now() + ttl })
    return true
  }

  async releaseLock(key: string, token: string): Promise<boolean> {
    validateId(key, 'lock key')
    const lock = this.live(this.locks, key)
    if (!lock || lock.token !== token) return false
    this.locks.delete(key)
    return true
  }

  /** Who holds a lock (the `owner` given to acquireLockFenced), or null. */
  lockOwner(key: string): string | null {
    return this.live(this.locks, key)?.owner ?? null
  }

  // ------------------------------------------------------------ checkpoints

  async getCheckpoint(key: string): Promise<FlowCheckpoint | null> {
    validateId(key, 'checkpoint key')
    const cp = this.live(this.checkpoints, key)
    return cp ? structuredClone(cp) : null
  }

  async setCheckpointIf(key: string, checkpoint: CheckpointInput, expectedRevision: number | null): Promise<number> {
    return (await this.writeCheckpoint(key, checkpoint, expectedRevision)).revision
  }

  async writeCheckpoint(key: string, checkpoint: CheckpointInput, expectedRevision: number | null): Promise<CheckpointWrite> {
    const { answer, ttl } = checkedCheckpoint(key, checkpoint, this.maxAnswerBytes)
    const owner = checkpoint.owner
    const fence = owner?.fence ?? null
    const refuse = (err: CheckpointConflictError): never => {
      if (owner?.incarnation) turnSuperseded(owner.incarnation, key, fence)
      throw err
    }
    const cur = this.live(this.checkpoints, key)
    if (fence !== null) {
      const chatFence = this.hub.chatFence(key)
      if (chatFence > fence) refuse(new CheckpointConflictError(key, 'fence', { fence: chatFence }))
      const of = cur?.owner?.fence ?? null
      if (of !== null && of > fence) refuse(new CheckpointConflictError(key, 'fence', { fence: of }))
    }
    if ((cur?.revision ?? null) !== expectedRevision)
      refuse(new CheckpointConflictError(key, 'revision', { revision: cur?.revision ?? null }))
    const embedded = answer.answer === 'embedded'
    const revision = this.hub.nextFence()
    const now = this.hub.now()
    this.checkpoints.set(key, {
      value: {
        key,
        flow: checkpoint.flow,
        step: String(checkpoint.step),
        state: structuredClone(checkpoint.state),
        revision,
        owner: owner ? { replicaId: owner.replicaId, incarnation: owner.incarnation, fence } : null,
        updatedAt: now,
        ephemeral: ttl === null ? null : { ttlMs: ttl, fingerprint: checkpoint.ephemeral!.fingerprint },
        answer: embedded ? structuredClone(checkpoint.answer as Json) : null,
        answerBytes: embedded ? answer.answerBytes : 0,
      },
      expiresAt: ttl === null ? null : now + ttl,
    })
    return { revision, answer: answer.answer, answerBytes: answer.answerBytes }
  }

  async clearCheckpointIf(key: string, revision: number, options: { fence?: number | null } = {}): Promise<boolean> {
    validateId(key, 'checkpoint key')
    const fence = options.fence ?? null
    if (fence !== null && this.hub.chatFence(key) > fence) return false
    if (this.live(this.checkpoints, key)?.revision !== revision) return false
    this.checkpoints.delete(key)
    return true
  }

  async checkpointTtl(key: string): Promise<number | null> {
    validateId(key, 'checkpoint key')
    if (!this.live(this.checkpoints, key)) return null
    const exp = this.checkpoints.get(key)?.expiresAt ?? null
    return exp === null ? null : exp - this.hub.now()
  }

  // ------------------------------------------------------------ handover markers

  async setHandoverMarker(key: string, marker: HandoverMarkerInput): Promise<void> {
    validateId(key, 'chat key')
    validateId(marker.name, 'conversation name')
    const problem = marker.data === undefined ? null : plainJsonProblem(marker.data, 'data')
    if (problem) throw new ConfigurationError(`handover marker ${JSON.stringify(key)}: ${problem}`)
    const ttl = positive(marker.ttlMs ?? DEFAULTS.handoverTtlMs, 'ttlMs')
    const now = this.hub.now()
    const prev = this.live(this.markers, key)
    const since = prev && prev.name === marker.name && prev.incarnation === marker.incarnation ? prev.since : now
    this.markers.set(key, {
      value: {
        key,
        name: marker.name,
        replicaId: marker.replicaId,
        incarnation: marker.incarnation,
        since,
        updatedAt: now,
        data: marker.data === undefined ? null : structuredClone(marker.data),
      },
      expiresAt: now + ttl,
    })
  }

  async getHandoverMarker(key: string): Promise<HandoverMarker | null> {
    validateId(key, 'chat key')
    const m = this.live(this.markers, key)
    return m ? structuredClone(m) : null
  }

  async clearHandoverMarker(key: string, options: { incarnation?: string } = {}): Promise<boolean> {
    validateId(key, 'chat key')
    const m = this.live(this.markers, key)
    if (!m || (options.incarnation !== undefined && m.incarnation !== options.incarnation)) return false
    this.markers.delete(key)
    return true
  }

  async takeHandoverMarker(key: string): Promise<HandoverMarker | null> {
    const m = await this.getHandoverMarker(key)
    if (m) this.markers.delete(key)
    return m
  }

  /** Milliseconds until a handover marker expires by itself (null: absent). */
  markerTtl(key: string): number | null {
    if (!this.live(this.markers, key)) return null
    return this.markers.get(key)!.expiresAt! - this.hub.now()
  }

  /** Nothing to close (RedisStore closes its connection). */
  async close(): Promise<void> {}
}

/** `MemoryStore.leases()`: a scheduler's leases on the hub's leads, as RedisStore's on Redis's. */
export class MemorySchedulerLeases {
  readonly incarnation = randomBytes(8).toString('hex')
  constructor(
    private readonly hub: MemoryCoordinationHub,
    readonly replicaId: string,
  ) {}

  async acquire(name: string, ttlMs: Duration): Promise<SchedulerLease | null> {
    const r = this.hub.leadAcquire(validateId(name, 'lease name'), this.replicaId, this.incarnation, positive(ttlMs, 'ttlMs'), false)
    return r.status === 'granted' ? { name, fence: r.fence } : null
  }

  async renew(name: string, fence: number, ttlMs: Duration): Promise<boolean> {
    return this.hub.renew({ kind: 'lead', key: validateId(name, 'lease name'), fence }, this.incarnation, positive(ttlMs, 'ttlMs')).ok
  }

  async release(name: string, fence: number): Promise<boolean> {
    return this.hub.leadRelease(validateId(name, 'lease name'), this.incarnation, fence)
  }
}
