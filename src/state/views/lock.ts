/** The rows of `locks ls`: who holds each lock (its owner's host:pid, a live replica's when one matches) and since when. */
import type { LockSnapshot, ReplicaSnapshot } from '../decode.js'
import { liveness } from '../health/liveness.js'
import { byText } from './shared.js'

export interface LockRow {
  kind: 'lock'
  key: string
  /** The live replica whose host:pid is the owner, when there is one. */
  replicaId: string | null
  incarnation: string | null
  owner: string | null
  fence: number | null
  held: boolean
  expiresInMs: number | null
  heldForMs: number | null
  holderAlive: boolean | null
  releasedAgoMs: number | null
}

export function lockRows(locks: LockSnapshot[], replicas: ReplicaSnapshot[], nowMs: number): LockRow[] {
  const live = liveness(replicas, nowMs)
  return locks
    .map((k): LockRow => {
      const r = k.holder ? live.byOwner(k.holder.owner) : null
      return {
        kind: 'lock',
        key: k.key,
        replicaId: r?.replicaId ?? null,
        incarnation: r?.incarnation ?? null,
        owner: k.holder?.owner ?? null,
        fence: k.fence,
        held: Boolean(k.holder && k.holder.expiresAtMs > nowMs),
        expiresInMs: k.holder ? k.holder.expiresAtMs - nowMs : null,
        heldForMs: k.holder?.acquiredAtMs ? nowMs - k.holder.acquiredAtMs : null,
        holderAlive: k.holder ? (r ? true : null) : null,
        releasedAgoMs: k.releasedAtMs ? nowMs - k.releasedAtMs : null,
      }
    })
    .sort((a, b) => byText(a.key, b.key))
}
