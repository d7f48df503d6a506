import React from 'react'
import type { Column } from '../layout.js'
import type { EventRow } from '../model.js'
import { ago } from '../text.js'
import { Table, type Row } from './table.js'

type K = 'when' | 'text'

const COLUMNS: Array<Column<K>> = [
  { key: 'when', header: 'EVENTS', width: 12, priority: 100 },
  { key: 'text', header: '', width: 20, priority: 100, flex: true },
]

export function eventCells(e: EventRow, nowMs: number): Row<K> {
  return { when: { text: ago(e.atMs, nowMs), tone: 'dim' }, text: { text: e.text, tone: e.tone } }
}

export interface EventsPanelProps {
  rows: EventRow[]
  nowMs: number
  width: number
  height: number
  selected: number | null
  focused: boolean
  colour: boolean
}

/** Newest first. */
export function EventsPanel(p: EventsPanelProps): React.ReactElement | null {
  return (
    <Table
      columns={COLUMNS}
      rows={p.rows.map((e) => eventCells(e, p.nowMs))}
      width={p.width}
      height={p.height}
      selected={p.selected}
      focused={p.focused}
      colour={p.colour}
      empty="no events yet"
    />
  )
}
