/**
 * The rows of `leases ls` and the dashboard's leases: every lease of every kind — a chat's turn, a
 * lead, a lock — with its holder's health, and the filters and orders of the listing.
 */
import type { Holder } from '../../wire/types.js'
import type { ChatSnapshot, LeadSnapshot, LeaseKindLabel, LockSnapshot, ReplicaSnapshot } from '../decode.js'
import { leadKind } from '../decode.js'
import { LEAD_WORDS, TURN_WORDS, leaseHealth, lockHealth, type LeaseState } from '../health/lease.js'
import { ageMs, liveness } from '../health/liveness.js'
import { byNum, byText, flat } from './shared.js'

export interface LeaseRow {
  kind: LeaseKindLabel
  /** The runtime's name: chat key, lead name or lock key. */
  key: string
  /** The holder; for a lock, the live replica whose host:pid matches its owner (else null). */
  replicaId: string | null
  incarnation: string | null
  /** Locks only: `host:pid` of the process that took it. */
  owner: string | null
  fence: number | null
  /** Until Redis expires the lease (negative: expired, not yet taken over). */
  expiresInMs: number
  /** ok, late (renewal overdue past the margin), expired, dead or stale holder (health.ts decides). */
  state: LeaseState
  reason: string
  /** Since the holder last renewed (null for locks: a renewal is not recorded). */
  lastRenewalAgoMs: number | null
  /** The holder's renewal interval, and how far its last renewal is past it (null: unknown). */
  renewMs: number | null
  renewalOverdueMs: number | null
  /** Since the grant. */
  heldForMs: number | null
  /** Is the holder's incarnation beating? null: unknown (a lock whose owner is no replica). */
  holderAlive: boolean | null
}

export interface LeaseSources {
  chats: ChatSnapshot[]
  leads: LeadSnapshot[]
  locks: LockSnapshot[]
  replicas: ReplicaSnapshot[]
}

/**
 * The lease row of one record at a time (null: nothing held), against one reading of the live
 * replicas and Redis's now: what leaseRows builds, and what a listing builds as its scan goes.
 */
export function leaseRowMaker(replicas: ReplicaSnapshot[], nowMs: number) {
  const live = liveness(replicas, nowMs)
  // A chat turn or a lead: held by a replica, renewed by it.
  const replicaLease = (
    kind: LeaseKindLabel,
    key: string,
    fence: number | null,
    h: Holder & { expiresAtMs: number; lastRenewalMs: number },
    grantedAtMs: number,
  ): LeaseRow => {
    const health = leaseHealth(h, live, nowMs, kind === 'chat' ? TURN_WORDS : LEAD_WORDS)
    const r = live.replica(h.replicaId)
    return {
      kind,
      key,
      replicaId: r ? r.replicaId : h.replicaId,
      incarnation: r?.incarnation === h.incarnation ? r.incarnation : h.incarnation,
      owner: null,
      fence,
      expiresInMs: health.expiresInMs,
      state: health.state,
      reason: flat(health.reason),
      lastRenewalAgoMs: health.lastRenewalAgoMs,
      renewMs: health.renewMs,
      renewalOverdueMs: health.renewalOverdueMs,
      heldForMs: grantedAtMs ? ageMs(nowMs, grantedAtMs) : null,
      holderAlive: health.holderAlive,
    }
  }
  return {
    chat: (c: ChatSnapshot): LeaseRow | null => (c.holder ? replicaLease('chat', c.key, c.fence, c.holder, c.holder.grantedAtMs) : null),
    lead: (l: LeadSnapshot): LeaseRow | null =>
      l.holder ? replicaLease(leadKind(l.key), l.key, l.fence, l.holder, l.holder.sinceMs) : null,
    lock: (k: LockSnapshot): LeaseRow | null => {
      if (!k.holder) return null
      const r = live.byOwner(k.holder.owner)
      const health = lockHealth(k.holder, live, nowMs)
      return {
        kind: 'lock',
        key: k.key,
        replicaId: r?.replicaId ?? null,
        incarnation: r?.incarnation ?? null,
        owner: k.holder.owner,
        fence: k.fence,
        expiresInMs: health.expiresInMs,
        state: health.state,
        reason: health.reason,
        lastRenewalAgoMs: null,
        renewMs: null,
        renewalOverdueMs: null,
        heldForMs: k.holder.acquiredAtMs ? ageMs(nowMs, k.holder.acquiredAtMs) : null,
        holderAlive: health.holderAlive,
      }
    },
  }
}

export function leaseRows(src: LeaseSources, nowMs: number): LeaseRow[] {
  const make = leaseRowMaker(src.replicas, nowMs)
  const rows: LeaseRow[] = []
  const add = (r: LeaseRow | null) => {
    if (r) rows.push(r)
  }
  for (const c of src.chats) add(make.chat(c))
  for (const l of src.leads) add(make.lead(l))
  for (const k of src.locks) add(make.lock(k))
  return sortLeases(rows, 'kind')
}

export const LEASE_KINDS: readonly LeaseKindLabel[] = ['chat', 'provider', 'scheduler', 'lead', 'lock']
export const LEASE_SORTS = ['kind', 'key', 'replica', 'fence', 'expires', 'renewal', 'held'] as const
export type LeaseSort = (typeof LEASE_SORTS)[number]

export interface LeaseFilter {
  kinds?: LeaseKindLabel[]
  replicaId?: string
  /** Only leases that expire within this many ms (expired ones included). */
  expiringWithinMs?: number
  /** Only leases whose holder's heartbeat is gone (or is another incarnation). */
  stale?: boolean
}

export function filterLeases(rows: LeaseRow[], f: LeaseFilter): LeaseRow[] {
  return rows.filter(
    (r) =>
      (!f.kinds?.length || f.kinds.includes(r.kind)) &&
      (f.replicaId === undefined || r.replicaId === f.replicaId) &&
      (f.expiringWithinMs === undefined || r.expiresInMs <= f.expiringWithinMs) &&
      (!f.stale || r.holderAlive === false),
  )
}

const kindOrder = (k: LeaseKindLabel) => LEASE_KINDS.indexOf(k)

/** The orders of a lease listing: `--sort` of `leases ls`, and the dashboard's. */
export const LEASE_ORDER: Record<LeaseSort, (a: LeaseRow, b: LeaseRow) => number> = {
  kind: (a, b) => (a.kind === b.kind ? byText(a.key, b.key) : kindOrder(a.kind) - kindOrder(b.kind) || byText(a.key, b.key)),
  key: (a, b) => byText(a.key, b.key),
  replica: (a, b) => byText(a.replicaId, b.replicaId) || byText(a.key, b.key),
  fence: (a, b) => byNum(a.fence, b.fence),
  expires: (a, b) => a.expiresInMs - b.expiresInMs,
  renewal: (a, b) => byNum(b.lastRenewalAgoMs, a.lastRenewalAgoMs),
  held: (a, b) => byNum(b.heldForMs, a.heldForMs),
}

export function sortLeases(rows: LeaseRow[], by: LeaseSort): LeaseRow[] {
  return [...rows].sort(LEASE_ORDER[by])
}
