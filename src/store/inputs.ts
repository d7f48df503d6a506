/**
 * What a replica hands a store (RedisStore, MemoryStore) to write — checkpoints, handover markers —
 * and the checks every store makes on it before anything is written.
 */
import { DEFAULTS } from '../defaults.js'
import { validateId } from '../keys.js'
import { parseDuration, type Duration } from '../duration.js'
import { InvalidCheckpointError } from '../errors/invalid-checkpoint-error.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import type { HandoverMarker, Json } from '../state/decode.js'
import { plainJsonProblem } from './plain-json.js'

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
  /**
   * The writer's chat-turn fence: the write is refused (CheckpointConflictError) once the chat has a
   * newer fence, or a marker written under a newer one is there, or the writer's turn ended — as a
   * fenced checkpoint write is. Without it the marker is written whoever holds the chat.
   */
  fence?: number | null
}

/** What `takeHandoverMarker` answers: the marker, and whether it was taken (false: left in place, its `unless`'s own). */
export type TakenHandoverMarker = HandoverMarker & { taken: boolean }

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
