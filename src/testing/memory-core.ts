import type { PushedGrant } from '../wire/types.js'

/**
 * What the parts of a MemoryCoordinationHub (the turns of memory-turns.ts, the leads of
 * memory-leads.ts) share from it: its clock (Redis's TIME), its one fence counter, and its wake-ups.
 */
export interface HubCore {
  /** The hub's clock: shared by every coordinator on it. */
  now(): number
  /** The next fence of the hub: fences (and checkpoint revisions) of every key come from it, so they only grow. */
  nextFence(): number
  /** Push a wake-up to an incarnation (a grant offered to it, a lead let go, a yield asked). */
  wake(incarnation: string, kind: 'chat' | 'lead', key: string, ticket: number | null, grant?: PushedGrant): void
}
