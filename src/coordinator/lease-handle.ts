import type { Holder } from './backend.js'
import type { HeldLease } from './coordinator.js'

/** What a handle asks its coordinator (the lease's state lives there). */
export interface LeaseOwner {
  isHeld(l: HeldLease): boolean
  assertHeld(l: HeldLease): void
  releaseLease(l: HeldLease): Promise<void>
  signalOf(l: HeldLease): AbortSignal
}

/** The caller's handle on a held lease (a chat turn or a lead): a view of the coordinator's record. */
export abstract class LeaseHandle {
  constructor(
    protected readonly owner: LeaseOwner,
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
    return this.owner.signalOf(this.lease)
  }
  get held(): boolean {
    return this.owner.isHeld(this.lease)
  }
  assertHeld(): void {
    this.owner.assertHeld(this.lease)
  }
  release(): Promise<void> {
    return this.owner.releaseLease(this.lease)
  }
}
