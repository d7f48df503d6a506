/**
 * The rows of `handover ls`, and one handover marker whole (`handover inspect`, a chat's marker in
 * `chat inspect`): whose async conversation waits, and what the next replica to take the chat does.
 */
import type { HandoverMarker, Json, ReplicaSnapshot } from '../decode.js'
import { liveness, type HolderStatus } from '../health/liveness.js'
import { byText } from './shared.js'

export interface HandoverRow {
  kind: 'handover'
  key: string
  /** The async conversation's name. */
  name: string
  replicaId: string
  incarnation: string
  ownerAlive: boolean
  waitingForMs: number | null
  updatedAgoMs: number | null
}

export function handoverRow(m: HandoverMarker, nowMs: number, replicas: ReplicaSnapshot[]): HandoverRow {
  const live = liveness(replicas, nowMs)
  return {
    kind: 'handover',
    key: m.key,
    name: m.name,
    replicaId: m.replicaId,
    incarnation: m.incarnation,
    ownerAlive: live.isAlive(m),
    waitingForMs: m.since ? nowMs - m.since : null,
    updatedAgoMs: m.updatedAt ? nowMs - m.updatedAt : null,
  }
}

export function handoverRows(markers: HandoverMarker[], replicas: ReplicaSnapshot[], nowMs: number): HandoverRow[] {
  return markers.map((m) => handoverRow(m, nowMs, replicas)).sort((a, b) => byText(a.key, b.key))
}

/** One handover marker whole (`handover inspect`, the dashboard's chat detail). */
export interface HandoverView extends HandoverRow {
  /** 'alive' | 'dead' (no heartbeat) | 'stale' (its replica restarted: a new incarnation), by the health model. */
  ownerStatus: HolderStatus
  /** Redis ms since its conversation waits (what `handover rm` is conditioned on, with the incarnation). */
  since: number
  /** Until Redis drops it by itself (null: no TTL). */
  expiresInMs: number | null
  /** Bytes of its data as stored (JSON). */
  dataBytes: number
  data: Json
  /** What the replica that takes the chat next will do with it, in words. */
  next: string
}

export function handoverView(m: HandoverMarker, nowMs: number, replicas: ReplicaSnapshot[], pttlMs: number | null): HandoverView {
  const status = liveness(replicas, nowMs).status(m)
  const row = handoverRow(m, nowMs, replicas)
  const fallback = `takes this marker and applies the handover fallback the bot configures for ${JSON.stringify(m.name)} (notify, restart, custom or drop)`
  return {
    ...row,
    ownerStatus: status,
    since: m.since,
    expiresInMs: pttlMs,
    dataBytes: m.data === null ? 0 : new TextEncoder().encode(JSON.stringify(m.data)).length,
    data: m.data,
    next:
      status === 'alive'
        ? `${m.replicaId} holds the conversation in memory and goes on with it when it gets the chat's next message; a replica that gets it instead ${fallback}`
        : `the conversation is gone with ${status === 'stale' ? `the earlier process of ${m.replicaId}` : m.replicaId}: the next replica to take the chat ${fallback}`,
  }
}
