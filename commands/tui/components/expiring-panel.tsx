import React from 'react'
import type { Column } from '../layout.js'
import type { ExpiringRow } from '../model.js'
import { countdown, fenceText } from '../text.js'
import { Table, type Row } from './table.js'

type K = 'key' | 'kind' | 'replica' | 'fence' | 'left'

const COLUMNS: Array<Column<K>> = [
  // Every held lease, the soonest to expire first: a healthy lease is here too (LEFT in green).
  { key: 'key', header: 'LEASES BY EXPIRY', width: 16, priority: 100, flex: true },
  { key: 'kind', header: 'KIND', width: 4, priority: 40 },
  { key: 'replica', header: 'HOLDER', width: 10, priority: 90 },
  { key: 'fence', header: 'FENCE', width: 16, align: 'right', priority: 30 },
  { key: 'left', header: 'LEFT', width: 9, align: 'right', priority: 95 },
]

export function expiringCells(e: ExpiringRow): Row<K> {
  return {
    key: { text: e.key },
    kind: { text: e.kind, tone: 'dim' },
    replica: { text: e.replicaId },
    fence: { text: fenceText(e.fence) },
    left: { text: countdown(e.expiresInMs), tone: e.expiresInMs < 0 ? 'bad' : e.late ? 'warn' : 'good', bold: e.late },
  }
}

export interface ExpiringPanelProps {
  rows: ExpiringRow[]
  width: number
  height: number
  selected: number | null
  focused: boolean
  colour: boolean
  /** The dashboard's filter (`/`): an empty panel then says no lease matches it, not that none is held. */
  filter?: string
}

export function ExpiringPanel(p: ExpiringPanelProps): React.ReactElement | null {
  return (
    <Table
      columns={COLUMNS}
      rows={p.rows.map(expiringCells)}
      width={p.width}
      height={p.height}
      selected={p.selected}
      focused={p.focused}
      colour={p.colour}
      count={`(${p.rows.length})`}
      empty={p.filter?.trim() ? `none match the filter "${p.filter.trim()}"` : 'no lease held'}
    />
  )
}
