/**
 * What doctor keeps of the chats, leases and checkpoints it reads: counts and the first few examples,
 * folded batch by batch, never every row — a million chats cost their count, not their snapshots.
 * Fed the whole listing at once or one batch after another, in the same order, a fold ends the same.
 */
import type { ChatSnapshot, FlowCheckpoint, LeadSnapshot, LockSnapshot, ReplicaSnapshot } from '../decode.js'
import { LEASE_ORDER, lateLeases, leaseRows, staleTickets, zombieLeases, type LeaseRow, type StaleTicketRow } from '../views.js'
import {
  fingerprintMismatch,
  fingerprintsByFlow,
  staleCheckpointWrite,
  type DeployedFingerprints,
  type StaleCheckpointWrite,
} from '../checkpoint-incidents.js'

/** How many examples a finding names. */
export const EXAMPLES = 3

/** The first `k` items by `order` (among equal ones, the first added; without an order, the first added), and how many were added. */
export class Worst<T> {
  count = 0
  readonly items: T[] = []
  constructor(
    private readonly k = EXAMPLES,
    private readonly order?: (a: T, b: T) => number,
  ) {}

  add(x: T): void {
    this.count++
    const { items, k, order } = this
    if (!order) {
      if (items.length < k) items.push(x)
      return
    }
    if (items.length >= k && order(x, items[items.length - 1]!) >= 0) return
    let i = items.length
    while (i > 0 && order(x, items[i - 1]!) < 0) i--
    items.splice(i, 0, x)
    if (items.length > k) items.pop()
  }
}

/** A value that could not be decoded, by its key. */
export interface CorruptKey {
  rawKey: string
  error: string
}

/** The listings doctor reads, in the order their corrupt values are named. */
export const LISTED_KINDS = ['replica', 'chat', 'lead', 'lock', 'checkpoint', 'handover'] as const
export type ListedKind = (typeof LISTED_KINDS)[number]

/** Corrupt values of every listing, named in LISTED_KINDS order whatever order the listings were read in; keys scanned. */
export class CorruptFold {
  scanned = 0
  private readonly byKind = new Map<ListedKind, Worst<CorruptKey>>(LISTED_KINDS.map((k) => [k, new Worst<CorruptKey>()]))

  add(kind: ListedKind, corrupt: CorruptKey[], scanned = 0): void {
    const w = this.byKind.get(kind)!
    for (const c of corrupt) w.add(c)
    this.scanned += scanned
  }

  get count(): number {
    let n = 0
    for (const w of this.byKind.values()) n += w.count
    return n
  }

  /** The first EXAMPLES corrupt values. */
  get first(): CorruptKey[] {
    return [...this.byKind.values()].flatMap((w) => w.items).slice(0, EXAMPLES)
  }
}

/** A chat as the checkpoint checks need it: its turn's holders and fence, without its tickets. */
function slim(c: ChatSnapshot): ChatSnapshot {
  return { ...c, tickets: [], queued: 0 }
}

/** Stale tickets and unread queue tails of the chats; the chats' turns, by key, for the checkpoint checks. */
export class ChatFold {
  readonly stale = new Worst<StaleTicketRow>()
  /** Queues longer than the head a listing reads: how many, the longest head read, the tickets not read. */
  longQueues = 0
  headRead = 0
  notRead = 0
  private readonly byKey = new Map<string, ChatSnapshot>()

  constructor(
    private readonly replicas: ReplicaSnapshot[],
    private readonly nowMs: number,
  ) {}

  add(chats: ChatSnapshot[]): void {
    for (const t of staleTickets(chats, this.replicas, this.nowMs)) this.stale.add(t)
    for (const c of chats) {
      if (c.queued > c.tickets.length) {
        this.longQueues++
        this.headRead = Math.max(this.headRead, c.tickets.length)
        this.notRead += c.queued - c.tickets.length
      }
      this.byKey.set(c.key, slim(c))
    }
  }

  chat(key: string): ChatSnapshot | null {
    return this.byKey.get(key) ?? null
  }
}

/** Leases of every kind past their expiry, held by a replica without heartbeat, or renewed late: counts and the first by kind and key. */
export class LeaseFold {
  readonly expired = new Worst<LeaseRow>(EXAMPLES, LEASE_ORDER.kind)
  readonly zombies = new Worst<LeaseRow>(EXAMPLES, LEASE_ORDER.kind)
  readonly late = new Worst<LeaseRow>(EXAMPLES, LEASE_ORDER.kind)

  constructor(
    private readonly replicas: ReplicaSnapshot[],
    private readonly nowMs: number,
  ) {}

  add(src: { chats?: ChatSnapshot[]; leads?: LeadSnapshot[]; locks?: LockSnapshot[] }): void {
    const rows = leaseRows({ chats: src.chats ?? [], leads: src.leads ?? [], locks: src.locks ?? [], replicas: this.replicas }, this.nowMs)
    for (const r of rows) if (r.state === 'expired') this.expired.add(r)
    for (const r of zombieLeases(rows)) this.zombies.add(r)
    for (const r of lateLeases(rows)) this.late.add(r)
  }
}

/** Checkpoints written from outside their chat's turn, and the flow versions of the ephemeral ones. */
export class CheckpointFold {
  checked = 0
  readonly stale = new Worst<StaleCheckpointWrite>()
  /** With deployed fingerprints: mismatched ephemeral checkpoints, in all and per flow. */
  mismatched = 0
  readonly mismatchedPerFlow = new Map<string, number>()
  /** Without: the ephemeral checkpoints' fingerprints per flow, and how many of each. */
  readonly fingerprints = new Map<string, Map<string, number>>()

  constructor(private readonly deployed: DeployedFingerprints | null) {}

  add(cps: FlowCheckpoint[], chatOf: (key: string) => ChatSnapshot | null): void {
    this.checked += cps.length
    for (const cp of cps) {
      const w = staleCheckpointWrite(chatOf(cp.key), cp)
      if (w) this.stale.add(w)
    }
    if (this.deployed) {
      for (const cp of cps) {
        const m = fingerprintMismatch(cp, this.deployed)
        if (!m) continue
        this.mismatched++
        this.mismatchedPerFlow.set(m.flow, (this.mismatchedPerFlow.get(m.flow) ?? 0) + 1)
      }
      return
    }
    for (const [flow, fps] of fingerprintsByFlow(cps)) {
      const into = this.fingerprints.get(flow) ?? new Map<string, number>()
      for (const [fp, n] of fps) into.set(fp, (into.get(fp) ?? 0) + n)
      this.fingerprints.set(flow, into)
    }
  }
}
