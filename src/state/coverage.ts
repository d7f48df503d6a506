/**
 * Which masters own the slots of a Redis Cluster, and which of them a read did not reach. A Cluster
 * client forgets a master whose connection ended (a master killed, its replica not yet promoted): a
 * listing over the client's masters would then be silently short. Compared with the slot owners that
 * CLUSTER SLOTS names, the missing master is known, and the listing says it is partial.
 */

/** A master and the slots it owns, as CLUSTER SLOTS names them. */
export interface SlotOwner {
  /** host:port */
  node: string
  ranges: Array<[number, number]>
}

/** A slot owner that a read did not reach: its keys are missing from what was read. */
export interface UnreachableMaster {
  /** host:port */
  node: string
  /** Its slots, e.g. "0-5460" or "0-100,200-5460". */
  slots: string
  /** What the client said (connection refused, not connected…). */
  error: string
}

/** The slot owners of a CLUSTER SLOTS reply (pure). */
export function slotOwners(reply: unknown): SlotOwner[] {
  const byNode = new Map<string, SlotOwner>()
  if (!Array.isArray(reply)) return []
  for (const entry of reply as unknown[]) {
    if (!Array.isArray(entry) || entry.length < 3 || !Array.isArray(entry[2])) continue
    const [from, to, master] = entry as [number, number, [string, number]]
    const node = `${String(master[0])}:${Number(master[1])}`
    const owner = byNode.get(node) ?? { node, ranges: [] }
    owner.ranges.push([Number(from), Number(to)])
    byNode.set(node, owner)
  }
  for (const o of byNode.values()) o.ranges.sort((a, b) => a[0] - b[0])
  return [...byNode.values()]
}

/** "0-5460", "0-100,200-5460", "42". */
export function formatRanges(ranges: Array<[number, number]>): string {
  return ranges.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`)).join(',')
}

/** The owner of one slot, if any. */
export function ownerOfSlot(owners: SlotOwner[], slot: number): SlotOwner | undefined {
  return owners.find((o) => o.ranges.some(([a, b]) => a <= slot && slot <= b))
}

/** The owners that are not among the masters that answered: unreachable, with the error seen (if any). */
export function unreachableOwners(owners: SlotOwner[], answered: Set<string>, errors: Map<string, string>): UnreachableMaster[] {
  return owners
    .filter((o) => !answered.has(o.node))
    .map((o) => ({ node: o.node, slots: formatRanges(o.ranges), error: errors.get(o.node) ?? 'not connected (down, or failing over)' }))
}
