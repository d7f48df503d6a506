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
  type TakenHandoverMarker,
} from '../store/inputs.js'
import {
  checkpointRead,
  lostHere,
  refusedWrite,
  type CheckpointRead,
  type CheckpointReadOptions,
  type FenceRefusal,
} from '../store/fenced-write.js'
import type { CoordinationStore } from '../store/coordination-store.js'
import { LeaseBackendBase } from '../store/scheduler-leases.js'
import type { LeadReply } from '../wire/types.js'
import { OnePerStore, resolvedOptions } from '../coordinator/one-per-store.js'
import type { Coordinator } from '../coordinator/coordinator.js'
import type { CoordinatorOptions } from '../coordinator/types.js'
import { MemoryCoordinator } from './memory-coordinator.js'
import { hubUnreachable, type MemoryCoordinationHub } from './memory-hub.js'

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

export class MemoryStore implements CoordinationStore {
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

  /** A scheduler's lease backend on the hub's leads, held under the store's coordinator (as `RedisStore.leases()`). */
  leases(options: { replicaId?: string } = {}): MemorySchedulerLeases {
    if (options.replicaId !== undefined) this.coordinator({ replicaId: options.replicaId })
    this.#leases ??= new MemorySchedulerLeases(this.hub, () => this.coordinator())
    return this.#leases
  }

  /** As a call to Redis while it is down: every operation rejects while `hub.unavailable`. */
  private reach(): void {
    if (this.hub.unavailable) throw hubUnreachable()
  }

  /** lua/includes/fenced.lua on the hub: a newer fence owns the chat, or the writer's grant expired unreleased. */
  private fenceRefusal(key: string, fence: number): FenceRefusal | null {
    const t = this.hub.chatTurn(key)
    if (t.fence > fence) return { status: 'fence-conflict', fence: t.fence }
    if (t.fence === fence && t.expired) return { status: 'lease-expired', fence }
    return null
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
    this.reach()
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
    this.reach()
    const lock = this.live(this.locks, key)
    if (!lock || lock.token !== token) return false
    this.locks.set(key, { value: lock, expiresAt: this.hub.now() + ttl })
    return true
  }

  async releaseLock(key: string, token: string): Promise<boolean> {
    validateId(key, 'lock key')
    this.reach()
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

  async getCheckpoint(key: string): Promise<FlowCheckpoint | null>
  async getCheckpoint(key: string, options: CheckpointReadOptions): Promise<CheckpointRead | null>
  async getCheckpoint(key: string, options: CheckpointReadOptions = {}): Promise<FlowCheckpoint | CheckpointRead | null> {
    validateId(key, 'checkpoint key')
    this.reach()
    const cp = this.live(this.checkpoints, key)
    return checkpointRead(cp ? structuredClone(cp) : null, options)
  }

  async setCheckpointIf(key: string, checkpoint: CheckpointInput, expectedRevision: number | null): Promise<number> {
    return (await this.writeCheckpoint(key, checkpoint, expectedRevision)).revision
  }

  async writeCheckpoint(key: string, checkpoint: CheckpointInput, expectedRevision: number | null): Promise<CheckpointWrite> {
    const { answer, ttl } = checkedCheckpoint(key, checkpoint, this.maxAnswerBytes)
    const owner = checkpoint.owner
    const fence = owner?.fence ?? null
    const writer = { incarnation: owner?.incarnation, fence }
    if (lostHere(owner?.incarnation, key, fence)) throw refusedWrite(key, 'checkpoint', writer, { status: 'lease-expired', fence: fence! })
    this.reach()
    const cur = this.live(this.checkpoints, key)
    if (fence !== null) {
      const refused = this.fenceRefusal(key, fence)
      if (refused) throw refusedWrite(key, 'checkpoint', writer, refused)
      const of = cur?.owner?.fence ?? null
      if (of !== null && of > fence) throw refusedWrite(key, 'checkpoint', writer, { status: 'fence-conflict', fence: of })
    }
    if ((cur?.revision ?? null) !== expectedRevision) {
      throw refusedWrite(key, 'checkpoint', writer, { status: 'revision-conflict', revision: cur?.revision ?? null })
    }
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

  async clearCheckpointIf(key: string, revision: number, options: { fence?: number | null; incarnation?: string } = {}): Promise<boolean> {
    validateId(key, 'checkpoint key')
    const fence = options.fence ?? null
    if (lostHere(options.incarnation, key, fence)) return false
    this.reach()
    if (fence !== null && this.fenceRefusal(key, fence)) return false
    if (this.live(this.checkpoints, key)?.revision !== revision) return false
    this.checkpoints.delete(key)
    return true
  }

  async checkpointTtl(key: string): Promise<number | null> {
    validateId(key, 'checkpoint key')
    this.reach()
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
    const fence = marker.fence ?? null
    const writer = { incarnation: marker.incarnation, fence }
    if (lostHere(marker.incarnation, key, fence))
      throw refusedWrite(key, 'handover-marker', writer, { status: 'lease-expired', fence: fence! })
    this.reach()
    const prev = this.live(this.markers, key)
    if (fence !== null) {
      const refused = this.fenceRefusal(key, fence)
      if (refused) throw refusedWrite(key, 'handover-marker', writer, refused)
      if (prev?.fence != null && prev.fence > fence)
        throw refusedWrite(key, 'handover-marker', writer, { status: 'fence-conflict', fence: prev.fence })
    }
    const now = this.hub.now()
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
        fence,
      },
      expiresAt: now + ttl,
    })
  }

  async getHandoverMarker(key: string): Promise<HandoverMarker | null> {
    validateId(key, 'chat key')
    this.reach()
    const m = this.live(this.markers, key)
    return m ? structuredClone(m) : null
  }

  async clearHandoverMarker(key: string, options: { incarnation?: string; fence?: number | null } = {}): Promise<boolean> {
    validateId(key, 'chat key')
    const fence = options.fence ?? null
    if (lostHere(options.incarnation, key, fence)) return false
    this.reach()
    const m = this.live(this.markers, key)
    if (!m || (options.incarnation !== undefined && m.incarnation !== options.incarnation)) return false
    if (fence !== null && (this.fenceRefusal(key, fence) || (m.fence !== null && m.fence > fence))) return false
    this.markers.delete(key)
    return true
  }

  async takeHandoverMarker(key: string, options: { unless?: string } = {}): Promise<TakenHandoverMarker | null> {
    const m = await this.getHandoverMarker(key)
    if (!m) return null
    const taken = options.unless === undefined || m.incarnation !== options.unless
    if (taken) this.markers.delete(key)
    return { ...m, taken }
  }

  /** Milliseconds until a handover marker expires by itself (null: absent). */
  markerTtl(key: string): number | null {
    if (!this.live(this.markers, key)) return null
    return this.markers.get(key)!.expiresAt! - this.hub.now()
  }

  /** Stops the coordinator that `leases()` started, as RedisStore's close() does (there is no connection to close). */
  async close(): Promise<void> {
    await this.#leases?.stopStarted()
  }
}

/** `MemoryStore.leases()`: a scheduler's leases on the hub's leads, as RedisStore's on Redis's. */
export class MemorySchedulerLeases extends LeaseBackendBase {
  /** @internal Made by `store.leases()`. */
  constructor(
    private readonly hub: MemoryCoordinationHub,
    owner: () => Coordinator,
  ) {
    super(owner)
  }

  private reach(): void {
    if (this.hub.unavailable) throw hubUnreachable()
  }

  protected async leadAcquire(name: string, replicaId: string, incarnation: string, ttlMs: number): Promise<LeadReply> {
    this.reach()
    return this.hub.leadAcquire(name, replicaId, incarnation, ttlMs, false)
  }

  protected async leadRenew(name: string, incarnation: string, fence: number, ttlMs: number): Promise<boolean> {
    this.reach()
    return this.hub.renew({ kind: 'lead', key: name, fence }, incarnation, ttlMs).ok
  }

  protected async leadRelease(name: string, incarnation: string, fence: number): Promise<boolean> {
    this.reach()
    return this.hub.leadRelease(name, incarnation, fence)
  }
}
