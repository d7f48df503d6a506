/**
 * What every store (RedisStore, MemoryStore) does around a fenced write — a checkpoint or handover
 * marker set or clear with the writer's chat-turn fence: the check in this process before the write
 * (has the writer's coordinator declared that turn lost?), and the error a refusal becomes.
 */
import { turnDeclaredLost, turnSuperseded } from '../coordinator/incarnations.js'
import { CheckpointConflictError } from '../errors/checkpoint-conflict-error.js'
import type { FlowCheckpoint } from '../state/decode.js'

/** Why a fenced write was refused: a newer fence owns the chat, or the writer's turn ended. */
export type FenceRefusal = { status: 'fence-conflict'; fence: number } | { status: 'lease-expired'; fence: number }

/**
 * Was the writer's turn declared lost by its coordinator, running in this process? Its write is then
 * refused without reaching the shared state: the coordinator threw LeaseLostError and emitted
 * `coordination:lease-lost`, and nothing written under that turn may land after that — even when
 * Redis has not expired it yet (a coordinator drops a lease renewMarginMs before Redis would).
 */
export function lostHere(incarnation: string | null | undefined, key: string, fence: number | null): boolean {
  return Boolean(incarnation) && fence !== null && turnDeclaredLost(incarnation!, key, fence)
}

/**
 * A refused fenced write (or compare-and-set) as the error the caller gets. It is a lost turn
 * everywhere: when the writer's coordinator runs in this process, its turn on that chat (with that
 * fence or older) is lost there too.
 */
export function refusedWrite(
  key: string,
  write: 'checkpoint' | 'handover-marker',
  owner: { incarnation?: string | null; fence: number | null },
  r: FenceRefusal | { status: 'revision-conflict'; revision: number | null },
): CheckpointConflictError {
  if (owner.incarnation) turnSuperseded(owner.incarnation, key, owner.fence)
  if (r.status === 'revision-conflict') return new CheckpointConflictError(key, 'revision', { revision: r.revision }, write)
  return new CheckpointConflictError(key, r.status === 'fence-conflict' ? 'fence' : 'lease', { fence: r.fence }, write)
}

/** How `getCheckpoint(key, { fingerprint })` names the flow versions whose checkpoints it may resume. */
export interface CheckpointReadOptions {
  /**
   * The flow fingerprints this replica resumes: the running version's, and during a rolling deploy
   * the previous one's (`[current, previous]`). The read then says, as `compatible`, whether the
   * checkpoint is one of them.
   */
  fingerprint?: string | readonly string[]
}

/** A checkpoint read with fingerprints given: `compatible` is false for an ephemeral one of another flow version. */
export type CheckpointRead = FlowCheckpoint & {
  /**
   * Persistent (no fingerprint to match), or ephemeral with one of the fingerprints given. False: a
   * forward checkpoint of another version of the flow — not to be resumed (handover outcome 'changed').
   */
  compatible: boolean
}

/** The checkpoint as `getCheckpoint` answers it: unchanged without fingerprints, with `compatible` with them. */
export function checkpointRead(cp: FlowCheckpoint | null, options: CheckpointReadOptions): FlowCheckpoint | CheckpointRead | null {
  if (cp === null || options.fingerprint === undefined) return cp
  const accepted: readonly string[] = typeof options.fingerprint === 'string' ? [options.fingerprint] : options.fingerprint
  return { ...cp, compatible: cp.ephemeral === null || accepted.includes(cp.ephemeral.fingerprint) }
}
