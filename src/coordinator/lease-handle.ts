import type { Holder } from '../wire/types.js'
import type { HeldLease, LeaseTable } from './lease-table.js'

/** The caller's handle on a held lease (a chat turn or a lead): a view of the lease table's record. */
export abstract class LeaseHandle {
  constructor(
    protected readonly table: LeaseTable,
    /** @internal */
    readonly lease: HeldLease,
    readonly previousHolder: Holder | null,
  ) {}
  get key(): string {
    return this.lease.key
  }
  get fence(): number {
    return this.lease.fence
  }
  get signal(): AbortSignal {
    return this.table.signalOf(this.lease)
  }
  get held(): boolean {
    return this.table.isHeld(this.lease)
  }
  assertHeld(): void {
    this.table.assertHeld(this.lease)
  }
  release(): Promise<void> {
    return this.table.releaseLease(this.lease)
  }
}
