import { LeaseLostError } from './lease-lost-error.js'

/**
 * A compare-and-set checkpoint write was refused. It is a LeaseLostError with reason 'superseded':
 * the runtime ends the conversation as a lost turn. `conflict` says why: the revision was not the
 * expected one ('revision'), or a newer turn fence owns the chat ('fence').
 */
export class CheckpointConflictError extends LeaseLostError {
  readonly conflict: 'revision' | 'fence'
  readonly currentRevision: number | null
  readonly currentFence: number | null
  constructor(key: string, conflict: 'revision' | 'fence', current: { revision?: number | null; fence?: number | null }) {
    super(
      key,
      'superseded',
      conflict === 'fence'
        ? `checkpoint write on ${JSON.stringify(key)} refused: the chat has a newer fence (${current.fence})`
        : `checkpoint write on ${JSON.stringify(key)} refused: revision is ${current.revision ?? 'absent'}, not the expected one`,
    )
    this.conflict = conflict
    this.currentRevision = current.revision ?? null
    this.currentFence = current.fence ?? null
  }
}
