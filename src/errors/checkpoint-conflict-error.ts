import { LeaseLostError } from './lease-lost-error.js'

/**
 * A compare-and-set checkpoint write, or a fenced handover marker write, was refused. It is a
 * LeaseLostError with reason 'superseded': the runtime ends the conversation as a lost turn.
 * `conflict` says why: the revision was not the expected one ('revision'), a newer turn fence owns
 * the chat ('fence'), or the writer's own turn had ended — its lease expired in Redis, or its
 * coordinator in this process had declared it lost ('lease'). `write` says what was refused.
 */
export class CheckpointConflictError extends LeaseLostError {
  readonly conflict: 'revision' | 'fence' | 'lease'
  readonly write: 'checkpoint' | 'handover-marker'
  readonly currentRevision: number | null
  readonly currentFence: number | null
  constructor(
    key: string,
    conflict: 'revision' | 'fence' | 'lease',
    current: { revision?: number | null; fence?: number | null },
    write: 'checkpoint' | 'handover-marker' = 'checkpoint',
  ) {
    const what = `${write === 'checkpoint' ? 'checkpoint' : 'handover marker'} write on ${JSON.stringify(key)} refused`
    super(
      key,
      'superseded',
      conflict === 'fence'
        ? `${what}: the chat has a newer fence (${current.fence})`
        : conflict === 'lease'
          ? `${what}: the writer's turn (fence ${current.fence}) has ended (its lease expired or was lost)`
          : `${what}: revision is ${current.revision ?? 'absent'}, not the expected one`,
    )
    this.conflict = conflict
    this.write = write
    this.currentRevision = current.revision ?? null
    this.currentFence = current.fence ?? null
  }
}
