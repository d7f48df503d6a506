import type { Holder, LeadReply, RenewItem, RenewReply, YieldRequestInput, YieldResult } from '../wire/types.js'
import type { HubCore } from './memory-core.js'

interface LeadRecord {
  holder: (Holder & { exp: number; since: number; transportDown?: { since: number; yieldsAt: number } }) | null
  fence: number
  last: Holder | null
  previous: Holder | null
  releasedAt: number | null
  handoverMs: number | null
  yieldRequest: { by: string; target: string | null; exp: number; at: number } | null
  candidates: Map<string, { replicaId: string; deadline: number }>
}

/**
 * The leads of a MemoryCoordinationHub: what the lead hashes hold on Redis, and what lead-acquire-1,
 * lead-release-1, lead-transport-1, lead-yield-1 and lease-renew-1 do with them. Each method body runs
 * without awaiting, as atomic as a Lua script.
 */
export class MemoryLeads {
  private readonly leads = new Map<string, LeadRecord>()

  constructor(private readonly core: HubCore) {}

  private now(): number {
    return this.core.now()
  }

  /** A lead as a reader of Redis sees it: holder, fence, pending yield request, standing replicas. */
  leadState(
    name: string,
  ): { holder: Holder | null; fence: number; yieldRequest: { by: string; target: string | null } | null; candidates: string[] } | null {
    const l = this.leads.get(name)
    if (!l) return null
    return {
      holder: l.holder ? { replicaId: l.holder.replicaId, incarnation: l.holder.incarnation } : null,
      fence: l.fence,
      yieldRequest: l.yieldRequest ? { by: l.yieldRequest.by, target: l.yieldRequest.target } : null,
      candidates: [...this.liveCandidates(l).values()].map((c) => c.replicaId),
    }
  }

  private lead(name: string): LeadRecord {
    let l = this.leads.get(name)
    if (!l) {
      l = {
        holder: null,
        fence: 0,
        last: null,
        previous: null,
        releasedAt: null,
        handoverMs: null,
        yieldRequest: null,
        candidates: new Map(),
      }
      this.leads.set(name, l)
    }
    return l
  }

  private liveCandidates(l: LeadRecord): Map<string, { replicaId: string; deadline: number }> {
    const now = this.now()
    for (const [inc, c] of l.candidates) if (c.deadline <= now) l.candidates.delete(inc)
    return l.candidates
  }

  leadAcquire(name: string, replicaId: string, incarnation: string, leaseMs: number, stand: boolean): LeadReply {
    const now = this.now()
    const l = this.lead(name)
    const standby = () => {
      if (stand) l.candidates.set(incarnation, { replicaId, deadline: now + leaseMs })
    }
    if (l.holder && l.holder.exp > now) {
      if (l.holder.incarnation === incarnation) {
        l.holder.exp = now + leaseMs
        return { status: 'mine', fence: l.fence, previousHolder: l.previous }
      }
      standby()
      return {
        status: 'held',
        holder: { replicaId: l.holder.replicaId, incarnation: l.holder.incarnation },
        fence: l.fence,
        msLeft: l.holder.exp - now,
      }
    }
    if (l.holder) {
      l.releasedAt = l.holder.exp
      l.holder = null
    }
    const y = l.yieldRequest
    if (
      y &&
      y.target &&
      y.exp > now &&
      y.target !== replicaId &&
      [...this.liveCandidates(l).values()].some((c) => c.replicaId === y.target)
    ) {
      standby()
      return { status: 'reserved', target: y.target, msLeft: y.exp - now }
    }
    l.previous = l.last
    l.fence = this.core.nextFence()
    l.holder = { replicaId, incarnation, exp: now + leaseMs, since: now }
    l.last = { replicaId, incarnation }
    l.handoverMs = l.releasedAt === null ? null : now - l.releasedAt
    l.releasedAt = null
    l.yieldRequest = null
    l.candidates.delete(incarnation)
    return { status: 'granted', fence: l.fence, previousHolder: l.previous }
  }

  leadRelease(name: string, incarnation: string, fence: number | null): boolean {
    const l = this.leads.get(name)
    if (!l) return false
    l.candidates.delete(incarnation)
    if (fence === null || !l.holder || l.holder.incarnation !== incarnation || l.fence !== fence) return false
    l.holder = null
    l.releasedAt = this.now()
    for (const inc of this.liveCandidates(l).keys()) this.core.wake(inc, 'lead', name, null)
    return true
  }

  /** lead-transport-1: the leader's transport down (since, yields at) or up, while it holds the lead with that fence. */
  leadTransport(name: string, incarnation: string, fence: number, down: boolean, yieldAfterMs: number): boolean {
    const now = this.now()
    const l = this.leads.get(name)
    if (!l?.holder || l.holder.incarnation !== incarnation || l.fence !== fence || l.holder.exp <= now) return false
    l.holder.transportDown = down ? { since: l.holder.transportDown?.since ?? now, yieldsAt: now + yieldAfterMs } : undefined
    return true
  }

  requestYield(name: string, req: YieldRequestInput): YieldResult {
    const now = this.now()
    const l = this.leads.get(name)
    if (!l?.holder || l.holder.exp <= now) return { status: 'no-leader' }
    if (req.ifFence !== null && l.fence !== req.ifFence) return { status: 'fence-changed', fence: l.fence }
    if (req.target && ![...this.liveCandidates(l).values()].some((c) => c.replicaId === req.target)) {
      return { status: 'target-not-standing' }
    }
    l.yieldRequest = { by: req.by, target: req.target, exp: now + req.ttlMs, at: now }
    this.core.wake(l.holder.incarnation, 'lead', name, null)
    return { status: 'requested', leader: { replicaId: l.holder.replicaId, incarnation: l.holder.incarnation }, fence: l.fence }
  }

  /** lease-renew-1 of a lead: extended while (incarnation, fence) holds it; a pending yield request is reported. */
  renew(item: RenewItem, incarnation: string, leaseMs: number): RenewReply {
    const l = this.leads.get(item.key)
    const now = this.now()
    if (!l?.holder || l.holder.incarnation !== incarnation || l.fence !== item.fence) return { ok: false, reason: 'revoked' }
    if (l.holder.exp <= now) return { ok: false, reason: 'expired' }
    l.holder.exp = now + leaseMs
    const y = l.yieldRequest
    return { ok: true, yieldRequest: y && y.exp > now ? { by: y.by, target: y.target } : null }
  }
}
