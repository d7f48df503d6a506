/**
 * Which masters a reader's walks read (./walker.ts), and which did not answer: on a Cluster, a master
 * down before its replica is promoted is noted and the others are still read, so that a listing is
 * reported partial — naming the master and its slots — rather than silently short.
 */
import type { KeyKind, KeyLayout } from '../keys.js'
import { isConnectionError } from '../errors/from-redis.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { formatRanges, ownerOfSlot, unreachableOwners, type UnreachableMaster } from './coverage.js'
import type { StateSource } from './source.js'

/** The message of an error, without a "Redis unreachable:" prefix. */
export function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/^Redis unreachable:\s*/, '')
}

/** A read a master did not answer (down, failing over), rather than a refusal of Redis. */
export function unreachableError(err: unknown): boolean {
  return (err instanceof CoordinationUnavailableError && err.reason === 'unreachable') || isConnectionError(err)
}

export class MasterReach {
  /** Cluster masters whose keys the walks read, and those that failed (host:port → error). */
  readonly answered = new Set<string>()
  readonly failed = new Map<string, string>()
  /** A walk went over every master the client knew (not stopped by a limit). */
  walkedAll = false

  constructor(private readonly host: { readonly source: StateSource; readonly keys: KeyLayout; sent(n: number): void }) {}

  /**
   * A Cluster master that does not answer (down, failing over): noted, and the others are still read
   * — unreachable() names it, so the listing is partial, not silently short. False: the error is the read's.
   */
  nodeFailed(node: number, err: unknown): boolean {
    if (!this.host.source.slotOwners || !unreachableError(err)) return false
    this.failed.set(this.host.source.nodeName(node), errorText(err))
    return true
  }

  /** StateReader.unreachable: the slot owners (CLUSTER SLOTS, asked now) whose keys the walks did not read. */
  async unreachable(kind?: KeyKind): Promise<UnreachableMaster[]> {
    const { source, keys } = this.host
    if (!source.slotOwners || (this.answered.size === 0 && this.failed.size === 0)) return []
    this.host.sent(1)
    const owners = await source.slotOwners().catch(() => null)
    if (!owners) return [...this.failed].map(([node, error]) => ({ node, slots: '?', error }))
    // After a scan of every master, an owner not read is missing; before one, only those that failed.
    const read = this.walkedAll ? this.answered : new Set(owners.map((o) => o.node).filter((n) => !this.failed.has(n)))
    const missing = unreachableOwners(owners, read, this.failed)
    if (kind !== 'replica' || missing.length === 0 || !source.keySlot) return missing
    this.host.sent(1)
    const slot = await source.keySlot(keys.replicaIndex).catch(() => null)
    const owner = slot === null ? undefined : ownerOfSlot(owners, slot)
    return owner ? missing.filter((m) => m.node === owner.node) : missing
  }

  /** The master that holds every heartbeat did not answer: which one it is, in the error (and in unreachable('replica')). */
  async heartbeatsUnreachable(err: unknown): Promise<CoordinationUnavailableError> {
    const { source, keys } = this.host
    const [owners, slot] = await Promise.all([
      source.slotOwners ? source.slotOwners().catch(() => null) : null,
      source.keySlot ? source.keySlot(keys.replicaIndex).catch(() => null) : null,
    ])
    const owner = owners && slot !== null ? ownerOfSlot(owners, slot) : undefined
    if (owner) this.failed.set(owner.node, errorText(err))
    const where = owner ? `master ${owner.node} (slots ${formatRanges(owner.ranges)})` : 'the master of their slot'
    return new CoordinationUnavailableError(
      'unreachable',
      `cannot know the live replicas: ${where}, which holds every heartbeat under prefix ${keys.prefix}, does not answer (${errorText(err)}); a failover may be under way`,
      { cause: err },
    )
  }
}
