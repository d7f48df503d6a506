/**
 * The rows of `checkpoints ls` (and a chat's checkpoint in `chat inspect`): who wrote it, under which
 * fence, and — given the deployed flows' fingerprints — whether the runtime will resume it.
 */
import type { FlowCheckpoint, ReplicaSnapshot } from '../decode.js'
import { fingerprintMismatch, type DeployedFingerprints } from '../checkpoint-incidents.js'
import { liveness } from '../health/liveness.js'
import { byText } from './shared.js'

export interface CheckpointRow {
  kind: 'checkpoint'
  key: string
  flow: string
  step: string
  revision: number
  /** The writer. */
  replicaId: string | null
  incarnation: string | null
  /** The writer's chat-turn fence (null: an unfenced write). */
  fence: number | null
  ownerAlive: boolean
  updatedAgoMs: number | null
  ephemeral: boolean
  ttlMs: number | null
  /** Ephemeral checkpoints: until Redis drops it (null for persistent ones). */
  expiresInMs: number | null
  fingerprint: string | null
  answerBytes: number
  /** The length of the stored state and answer, measured by a listing instead of read (null: read whole, or not measured). */
  dataBytes: number | null
  /** The deployed fingerprint of its flow, when the operator gave it (--fingerprint flow=fp). */
  deployedFingerprint: string | null
  /** `changed`: an ephemeral checkpoint of another flow version, which the runtime will not resume; null otherwise or unchecked. */
  fallback: 'changed' | null
}

export function checkpointRow(
  cp: FlowCheckpoint,
  nowMs: number,
  replicas: ReplicaSnapshot[],
  pttlMs?: number | null,
  deployed: DeployedFingerprints = {},
): CheckpointRow {
  const live = liveness(replicas, nowMs)
  const eph = cp.ephemeral
  const mismatch = fingerprintMismatch(cp, deployed)
  return {
    kind: 'checkpoint',
    key: cp.key,
    flow: cp.flow,
    step: cp.step,
    revision: cp.revision,
    replicaId: cp.owner?.replicaId ?? null,
    incarnation: cp.owner?.incarnation ?? null,
    fence: cp.owner?.fence ?? null,
    ownerAlive: cp.owner ? live.isAlive(cp.owner) : false,
    updatedAgoMs: cp.updatedAt ? nowMs - cp.updatedAt : null,
    ephemeral: Boolean(eph),
    ttlMs: eph?.ttlMs ?? null,
    expiresInMs: eph ? (pttlMs ?? (cp.updatedAt ? cp.updatedAt + eph.ttlMs - nowMs : null)) : null,
    fingerprint: eph?.fingerprint ?? null,
    answerBytes: cp.answerBytes,
    dataBytes: cp.dataBytes ?? null,
    deployedFingerprint: eph && Object.prototype.hasOwnProperty.call(deployed, cp.flow) ? deployed[cp.flow]! : null,
    fallback: mismatch ? mismatch.fallback : null,
  }
}

/** Which checkpoints a listing or a bulk clean-up takes. */
export interface CheckpointFilter {
  ephemeral?: boolean
  persistent?: boolean
  flow?: string
  /** Only ephemeral checkpoints whose flow fingerprint is not this one (written by another flow version). */
  fingerprintNot?: string
  /** Only those whose last write is at least this old. */
  olderThanMs?: number
  /** Only those whose writer (that incarnation) has no live heartbeat. */
  ownerDead?: boolean
  /** The deployed flows' fingerprints: each row says whether the runtime will resume it. */
  deployed?: DeployedFingerprints
  /** Only ephemeral checkpoints of another version of a deployed flow (needs `deployed`). */
  mismatched?: boolean
}

export function checkpointRows(
  cps: FlowCheckpoint[],
  replicas: ReplicaSnapshot[],
  nowMs: number,
  filter: CheckpointFilter = {},
): CheckpointRow[] {
  return cps
    .filter(
      (c) =>
        (!filter.ephemeral || c.ephemeral !== null) &&
        (!filter.persistent || c.ephemeral === null) &&
        (filter.flow === undefined || c.flow === filter.flow) &&
        (filter.fingerprintNot === undefined || (c.ephemeral !== null && c.ephemeral.fingerprint !== filter.fingerprintNot)) &&
        (filter.olderThanMs === undefined || (c.updatedAt > 0 && nowMs - c.updatedAt >= filter.olderThanMs)),
    )
    .map((c) => checkpointRow(c, nowMs, replicas, undefined, filter.deployed))
    .filter((r) => !filter.ownerDead || (r.replicaId !== null && !r.ownerAlive))
    .filter((r) => !filter.mismatched || r.fallback !== null)
    .sort((a, b) => byText(a.key, b.key))
}
