/**
 * Pure layout decisions: how many lines each panel gets, which columns fit, and which rows of a
 * long list are visible. Readable at 80x24: columns are dropped (lowest priority first) and text is
 * truncated rather than wrapped; panels shrink to their header line before the screen overflows.
 */

export type PanelId = 'replicas' | 'providers' | 'chats' | 'expiring' | 'events'

export const PANELS: PanelId[] = ['replicas', 'providers', 'chats', 'expiring', 'events']

export interface PanelNeed {
  id: PanelId
  /** Lines the panel could use: its header line plus one per row. */
  need: number
  /** Lines it gets before any panel grows past this (header + a few rows). */
  base: number
}

/**
 * Share `total` lines: first each panel up to its base (in priority order, so the least important
 * are the ones left out on a short screen), then the rest up to what each needs, in the same order.
 */
export function allocate(needs: PanelNeed[], priority: PanelId[], total: number): Record<PanelId, number> {
  const out = { replicas: 0, providers: 0, chats: 0, expiring: 0, events: 0 } as Record<PanelId, number>
  const byId = new Map(needs.map((n) => [n.id, n]))
  let remaining = Math.max(0, total)
  for (const phase of ['base', 'need'] as const) {
    for (const id of priority) {
      const n = byId.get(id)
      if (!n) continue
      const want = Math.min(n.need, phase === 'base' ? n.base : n.need)
      const give = Math.min(remaining, Math.max(0, want - out[id]))
      out[id] += give
      remaining -= give
    }
  }
  return out
}

/** The focused panel first, then what an operator looks at most during an incident. */
export function priorityFor(focus: PanelId): PanelId[] {
  const usual: PanelId[] = ['chats', 'replicas', 'providers', 'events', 'expiring']
  return [focus, ...usual.filter((p) => p !== focus)]
}

export interface Column<K extends string = string> {
  key: K
  header: string
  /** Width in columns (the flex column's minimum). */
  width: number
  align?: 'left' | 'right'
  /** Lower is dropped first when the screen is narrow. */
  priority: number
  /** Takes the width left over, up to `content` (one per table: the name column). */
  flex?: boolean
  /** The widest text of the column (flex column: it grows no wider). */
  content?: number
}

export const GAP = 1

/** Drop the lowest-priority columns until the rest fit `width`; the flex column takes what is left. */
export function fitColumns<K extends string>(columns: Array<Column<K>>, width: number): Array<Column<K>> {
  let cols = [...columns]
  const total = (cs: Array<Column<K>>) => cs.reduce((s, c) => s + c.width, 0) + GAP * Math.max(0, cs.length - 1)
  while (total(cols) > width && cols.length > 1) {
    const victim = cols.filter((c) => !c.flex).sort((a, b) => a.priority - b.priority)[0]
    if (!victim) break
    cols = cols.filter((c) => c !== victim)
  }
  const spare = width - total(cols)
  return cols.map((c) => (c.flex ? { ...c, width: Math.max(1, Math.min(c.width + spare, Math.max(c.width, c.content ?? Infinity))) } : c))
}

/** The first visible row so that `selected` stays on screen in a window of `visible` rows. */
export function windowStart(count: number, visible: number, selected: number | null, previousStart = 0): number {
  if (visible <= 0 || count <= visible) return 0
  let start = Math.min(Math.max(0, previousStart), count - visible)
  if (selected !== null) {
    if (selected < start) start = selected
    else if (selected >= start + visible) start = selected - visible + 1
  }
  return start
}
