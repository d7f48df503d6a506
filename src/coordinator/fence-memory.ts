/**
 * What one coordinator remembers of fences past the leases themselves: the chats whose turn it
 * declared lost (a later fenced write under that turn is refused here, before Redis), the leads it
 * once held (Redis saying one is ours again is a release still on its way, not a grant to take up),
 * and the leads `store.leases()` holds under the same incarnation (not this coordinator's to take up).
 */

/** Chats whose lost turn is remembered for turnLost (a Map entry each, about 100 bytes). */
export const LOST_TURNS_CAP = 10_000

export class FenceMemory {
  /**
   * Per chat: the highest fence of a turn of ours declared lost, oldest first, at most LOST_TURNS_CAP.
   * Past the cap the oldest go: by then Redis refuses those writes itself (the lease expired there, or
   * a newer turn was granted).
   */
  private readonly lostTurns = new Map<string, number>()
  /** Per lead: the highest fence this coordinator ever held it with. */
  private readonly leadFences = new Map<string, number>()
  /** Per lead: the fence `store.leases()` was last granted it with under this incarnation. */
  private readonly schedulerLeads = new Map<string, number>()

  rememberLostTurn(key: string, fence: number): void {
    const had = this.lostTurns.get(key)
    this.lostTurns.delete(key)
    this.lostTurns.set(key, Math.max(fence, had ?? fence))
    if (this.lostTurns.size > LOST_TURNS_CAP) this.lostTurns.delete(this.lostTurns.keys().next().value as string)
  }

  /** Was our turn on chat `key` with `fence` (or a newer one) declared lost here? */
  turnLost(key: string, fence: number): boolean {
    const lost = this.lostTurns.get(key)
    return lost !== undefined && fence <= lost
  }

  rememberLead(name: string, fence: number): void {
    this.leadFences.set(name, Math.max(fence, this.leadFences.get(name) ?? 0))
  }

  /**
   * Was this lead, with this fence, ever held here? Then a release of it may still be on its way (or
   * retried): Redis saying it is ours again must not be taken up.
   */
  leadOnceHeld(name: string, fence: number): boolean {
    return fence <= (this.leadFences.get(name) ?? -Infinity)
  }

  noteSchedulerLead(name: string, fence: number): void {
    this.schedulerLeads.set(name, fence)
  }

  /** The fence `store.leases()` was last granted lead `name` with under this incarnation. */
  schedulerLead(name: string): number | undefined {
    return this.schedulerLeads.get(name)
  }
}
