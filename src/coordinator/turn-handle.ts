/** A chat turn as acquireTurn hands it out: a held lease with the ticket it was granted on. */
import type { Holder } from '../wire/types.js'
import { LeaseHandle } from './lease-handle.js'
import type { HeldLease, LeaseTable } from './lease-table.js'
import type { Turn, TurnReleaseOptions } from './types.js'

export class TurnHandle extends LeaseHandle implements Turn {
  readonly kind = 'chat' as const
  constructor(
    table: LeaseTable,
    lease: HeldLease,
    previousHolder: Holder | null,
    readonly waitedMs: number,
  ) {
    super(table, lease, previousHolder)
  }
  get ticket(): number {
    return this.lease.ticket
  }
  override release(options?: TurnReleaseOptions): Promise<void> {
    return this.table.releaseLease(this.lease, options?.served === false)
  }
}
