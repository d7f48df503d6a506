/**
 * What a bot runtime types its store against: RedisStore (Redis, standalone or Cluster) and
 * MemoryStore (the in-process hub, `botmesh-coord/testing`) both implement it, and one contract suite
 * checks that they behave alike.
 */
import type { Coordinator } from '../coordinator/coordinator.js'
import type { CoordinatorOptions } from '../coordinator/types.js'
import type { Duration } from '../duration.js'
import type { FlowCheckpoint, HandoverMarker } from '../state/decode.js'
import type { CheckpointRead, CheckpointReadOptions } from './fenced-write.js'
import type { CheckpointInput, CheckpointWrite, FencedLock, HandoverMarkerInput, TakenHandoverMarker } from './inputs.js'
import type { SchedulerLeaseBackend } from './scheduler-leases.js'

export interface CoordinationStore {
  /** Largest saved answer embedded in a checkpoint. */
  readonly maxAnswerBytes: number
  /** The store's one coordinator (the same instance on every call; a stopped one is replaced). */
  coordinator(options?: CoordinatorOptions): Coordinator
  /** A scheduler's lease backend on fenced leads, held under the store's coordinator. */
  leases(options?: { replicaId?: string }): SchedulerLeaseBackend

  acquireLockFenced(key: string, ttlMs: Duration, options?: { owner?: string }): Promise<FencedLock | null>
  renewLock(key: string, token: string, ttlMs: Duration): Promise<boolean>
  releaseLock(key: string, token: string): Promise<boolean>

  getCheckpoint(key: string): Promise<FlowCheckpoint | null>
  getCheckpoint(key: string, options: CheckpointReadOptions): Promise<CheckpointRead | null>
  setCheckpointIf(key: string, checkpoint: CheckpointInput, expectedRevision: number | null): Promise<number>
  writeCheckpoint(key: string, checkpoint: CheckpointInput, expectedRevision: number | null): Promise<CheckpointWrite>
  clearCheckpointIf(key: string, revision: number, options?: { fence?: number | null; incarnation?: string }): Promise<boolean>
  /** Milliseconds until an ephemeral checkpoint expires (null: persistent or absent). */
  checkpointTtl(key: string): Promise<number | null>

  setHandoverMarker(key: string, marker: HandoverMarkerInput): Promise<void>
  getHandoverMarker(key: string): Promise<HandoverMarker | null>
  clearHandoverMarker(key: string, options?: { incarnation?: string; fence?: number | null }): Promise<boolean>
  takeHandoverMarker(key: string, options?: { unless?: string }): Promise<TakenHandoverMarker | null>

  close(): Promise<void>
}
