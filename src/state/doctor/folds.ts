/**
 * What doctor keeps of the chats, leases and checkpoints it reads: counts and the first few examples,
 * folded batch by batch, never every row — a million chats cost their count, not their snapshots.
 * Fed the whole listing at once or one batch after another, in the same order, a fold ends the same.
 */
import { grownTo } from '../../columns.js'
import type { RedisKey } from '../../keys.js'
import type { Holder } from '../../wire/types.js'
import type { ChatSnapshot, CheckpointOwner, FlowCheckpoint, LeadSnapshot, LockSnapshot, ReplicaSnapshot } from '../decode.js'
import { LEASE_ORDER, lateLeases, leaseRowMaker, staleTickets, zombieLeases, type LeaseRow, type StaleTicketRow } from '../views.js'
import {
  fingerprintMismatch,
  fingerprintsByFlow,
  staleCheckpointWrite,
  type ChatTurn,
  type CheckpointWrite,
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

/** Decoded items are handed to a fold in batches of this many. */
export const FOLD_BATCH = 1000

/** A listing's decoder: its item, or null to skip the key (./reader.ts LISTING_DECODERS). */
export type ListingDecoder<T> = (
  id: string,
  rawKey: RedisKey,
  h: Record<string, string>,
  meta?: { size: number; extra: number },
) => T | null

/**
 * A decoder that hands what it decodes to `fold`, FOLD_BATCH items at a time, and keeps nothing: the
 * listing it reads stays empty but for its corrupt keys (a decoder that throws still marks one).
 * `flush` hands over the last items once the listing is read.
 */
export function folding<T>(decode: ListingDecoder<T>, fold: (items: T[]) => void): { decode: ListingDecoder<null>; flush(): void } {
  let batch: T[] = []
  const flush = () => {
    if (batch.length) fold(batch)
    batch = []
  }
  return {
    decode(id, rawKey, h, meta) {
      const v = decode(id, rawKey, h, meta)
      if (v !== null) batch.push(v)
      if (batch.length >= FOLD_BATCH) flush()
      return null
    },
    flush,
  }
}

/**
 * Rows of columns by key. A row given back is used again, so columns that keep only what waits for
 * its pair (ChatTurns, CheckpointWrites) hold what is pending, not every key that passed.
 */
class KeyedRows {
  private readonly rows = new Map<string, number>()
  private readonly free: number[] = []
  private used = 0
  private capacity = 1024

  /** `grow(rows)`: make the columns hold that many rows (from 1024). */
  constructor(private readonly grow: (rows: number) => void) {}

  get size(): number {
    return this.rows.size
  }

  /**
   * A new row for `key`. A key given a row again (a walk may return a key twice) names the new one;
   * its old row is not used again.
   */
  claim(key: string): number {
    const row = this.free.pop() ?? this.used++
    if (row >= this.capacity) this.grow((this.capacity *= 2))
    this.rows.set(key, row)
    return row
  }

  /** Give back the row of `key` (undefined: it had none). */
  release(key: string): number | undefined {
    const row = this.rows.get(key)
    if (row === undefined) return undefined
    this.rows.delete(key)
    this.free.push(row)
    return row
  }
}

/** Holders, each (replicaId, incarnation) kept once and named by its index. */
class HolderTable {
  private readonly holders: Holder[] = []
  private readonly byId = new Map<string, Map<string, number>>()

  /** The index of `h` (-1: none). */
  index(h: Holder | null): number {
    if (!h) return -1
    let byIncarnation = this.byId.get(h.replicaId)
    if (!byIncarnation) this.byId.set(h.replicaId, (byIncarnation = new Map()))
    let i = byIncarnation.get(h.incarnation)
    if (i === undefined) {
      i = this.holders.push({ replicaId: h.replicaId, incarnation: h.incarnation }) - 1
      byIncarnation.set(h.incarnation, i)
    }
    return i
  }

  at(i: number): Holder | null {
    return i < 0 ? null : this.holders[i]!
  }
}

/**
 * Each chat's turn as the checkpoint checks read it (ChatTurn), in columns: a row number by key, the
 * holders named once. Some 100 bytes a chat, where its snapshot costs several hundred.
 */
export class ChatTurns {
  private readonly holders = new HolderTable()
  private fence = new Float64Array(1024)
  private granted = new Float64Array(1024)
  /** Holder, previous holder and last holder of each row: an index into `holders`, -1 for none. */
  private who = new Int32Array(3 * 1024)
  private readonly rows = new KeyedRows((n) => {
    this.fence = grownTo(this.fence, n, (m) => new Float64Array(m))
    this.granted = grownTo(this.granted, n, (m) => new Float64Array(m))
    this.who = grownTo(this.who, 3 * n, (m) => new Int32Array(m))
  })

  get size(): number {
    return this.rows.size
  }

  add(c: ChatSnapshot): void {
    const row = this.rows.claim(c.key)
    this.fence[row] = c.fence ?? NaN
    this.granted[row] = c.holder?.grantedAtMs ?? 0
    this.who[3 * row] = this.holders.index(c.holder)
    this.who[3 * row + 1] = this.holders.index(c.previousHolder)
    this.who[3 * row + 2] = this.holders.index(c.lastHolder)
  }

  /** The turn of `key`, no longer kept. */
  take(key: string): ChatTurn | null {
    const row = this.rows.release(key)
    return row === undefined ? null : this.at(row)
  }

  private at(row: number): ChatTurn {
    const { holders, who } = this
    const h = holders.at(who[3 * row]!)
    const fence = this.fence[row]!
    return {
      fence: Number.isNaN(fence) ? null : fence,
      holder: h && { replicaId: h.replicaId, incarnation: h.incarnation, grantedAtMs: this.granted[row]! },
      previousHolder: holders.at(who[3 * row + 1]!),
      lastHolder: holders.at(who[3 * row + 2]!),
    }
  }
}

/** What a checkpoint's write is judged by (staleCheckpointWrite) of the checkpoints with an owner, in columns by key. */
export class CheckpointWrites {
  private readonly owners = new HolderTable()
  private revision = new Float64Array(1024)
  private updatedAt = new Float64Array(1024)
  /** The owner's fence, NaN for an unfenced write. */
  private fence = new Float64Array(1024)
  private owner = new Int32Array(1024)
  private readonly rows = new KeyedRows((n) => {
    this.revision = grownTo(this.revision, n, (m) => new Float64Array(m))
    this.updatedAt = grownTo(this.updatedAt, n, (m) => new Float64Array(m))
    this.fence = grownTo(this.fence, n, (m) => new Float64Array(m))
    this.owner = grownTo(this.owner, n, (m) => new Int32Array(m))
  })

  get size(): number {
    return this.rows.size
  }

  add(cp: CheckpointWrite, owner: CheckpointOwner): void {
    const row = this.rows.claim(cp.key)
    this.revision[row] = cp.revision
    this.updatedAt[row] = cp.updatedAt
    this.fence[row] = owner.fence ?? NaN
    this.owner[row] = this.owners.index(owner)
  }

  /** The write of `key`'s checkpoint, no longer kept. */
  take(key: string): CheckpointWrite | null {
    const row = this.rows.release(key)
    if (row === undefined) return null
    const o = this.owners.at(this.owner[row]!)!
    const fence = this.fence[row]!
    return {
      key,
      revision: this.revision[row]!,
      updatedAt: this.updatedAt[row]!,
      owner: { replicaId: o.replicaId, incarnation: o.incarnation, fence: Number.isNaN(fence) ? null : fence },
    }
  }
}

/** Stale tickets and unread queue tails of the chats. */
export class ChatFold {
  readonly stale = new Worst<StaleTicketRow>()
  /** Queues longer than the head a listing reads: how many, the longest head read, the tickets not read. */
  longQueues = 0
  headRead = 0
  notRead = 0

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
    }
  }
}

/**
 * Leases of every kind past their expiry, held by a replica without heartbeat, or renewed late: counts
 * and the first in `leases ls` order (kind, key), found as the rows come, without sorting them all.
 */
export class LeaseFold {
  readonly expired = new Worst<LeaseRow>(EXAMPLES, LEASE_ORDER.kind)
  readonly zombies = new Worst<LeaseRow>(EXAMPLES, LEASE_ORDER.kind)
  readonly late = new Worst<LeaseRow>(EXAMPLES, LEASE_ORDER.kind)
  private readonly make: ReturnType<typeof leaseRowMaker>

  constructor(replicas: ReplicaSnapshot[], nowMs: number) {
    this.make = leaseRowMaker(replicas, nowMs)
  }

  private row(r: LeaseRow | null): void {
    if (!r) return
    if (r.state === 'expired') this.expired.add(r)
    // As zombieLeases() and lateLeases() of ../views.ts pick them.
    if (zombieLeases([r]).length) this.zombies.add(r)
    if (lateLeases([r]).length) this.late.add(r)
  }

  add(src: { chats?: ChatSnapshot[]; leads?: LeadSnapshot[]; locks?: LockSnapshot[] }): void {
    for (const c of src.chats ?? []) this.row(this.make.chat(c))
    for (const l of src.leads ?? []) this.row(this.make.lead(l))
    for (const k of src.locks ?? []) this.row(this.make.lock(k))
  }
}

/**
 * Checkpoints written from outside their chat's turn, and the flow versions of the ephemeral ones.
 * Chats and checkpoints come in any order (one walk reads both): each checkpoint with an owner is
 * judged against its chat's turn when the second of the two comes, and only the first of a pair is
 * kept until then. Checkpoints whose chat never comes (gone: no turn to judge by) are not judged.
 */
export class CheckpointFold {
  checked = 0
  readonly stale = new Worst<StaleCheckpointWrite>()
  /** With deployed fingerprints: mismatched ephemeral checkpoints, in all and per flow. */
  mismatched = 0
  readonly mismatchedPerFlow = new Map<string, number>()
  /** Without: the ephemeral checkpoints' fingerprints per flow, and how many of each. */
  readonly fingerprints = new Map<string, Map<string, number>>()
  /** Chats read before their checkpoint, and checkpoints' writes read before their chat. */
  private readonly turns = new ChatTurns()
  private readonly writes = new CheckpointWrites()

  constructor(private readonly deployed: DeployedFingerprints | null) {}

  /** How many chats and checkpoints wait for their pair. */
  get pending(): number {
    return this.turns.size + this.writes.size
  }

  private judge(chat: ChatTurn, cp: CheckpointWrite): void {
    const w = staleCheckpointWrite(chat, cp)
    if (w) this.stale.add(w)
  }

  /** Chats as they are read. */
  chats(chats: ChatSnapshot[]): void {
    for (const c of chats) {
      const cp = this.writes.take(c.key)
      if (cp) this.judge(c, cp)
      else this.turns.add(c)
    }
  }

  add(cps: FlowCheckpoint[]): void {
    this.checked += cps.length
    for (const cp of cps) {
      // Without an owner there is no write to judge.
      if (!cp.owner) continue
      const chat = this.turns.take(cp.key)
      if (chat) this.judge(chat, cp)
      else this.writes.add(cp, cp.owner)
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
