import React from 'react'
import type { Column } from '../layout.js'
import type { ChatRow } from '../model.js'
import { countdown, dur, fenceText } from '../text.js'
import { Table, type Row } from './table.js'

type K = 'key' | 'holder' | 'fence' | 'queue' | 'oldest' | 'lease' | 'checkpoint' | 'stuck'

const COLUMNS: Array<Column<K>> = [
  { key: 'key', header: 'CHAT', width: 14, priority: 100, flex: true },
  { key: 'holder', header: 'HOLDER', width: 10, priority: 95 },
  { key: 'fence', header: 'FENCE', width: 16, align: 'right', priority: 40 },
  { key: 'queue', header: 'QUEUE', width: 5, align: 'right', priority: 90 },
  { key: 'oldest', header: 'OLDEST', width: 6, align: 'right', priority: 80 },
  { key: 'lease', header: 'LEASE', width: 6, align: 'right', priority: 70 },
  { key: 'checkpoint', header: 'CHECKPOINT', width: 14, priority: 50 },
  { key: 'stuck', header: 'STUCK', width: 20, priority: 85 },
]

export function chatCells(c: ChatRow): Row<K> {
  const stuck = c.stuck.length > 0
  return {
    key: { text: c.key, tone: stuck ? 'bad' : undefined, bold: true },
    holder: c.holder
      ? c.holderLate
        ? { text: `${c.holder} late`, tone: 'warn', bold: true }
        : { text: c.holder }
      : { text: '-', tone: 'dim' },
    fence: { text: fenceText(c.fence) },
    queue: { text: String(c.queueLength), tone: c.queueLength > 0 ? 'warn' : undefined },
    oldest: { text: dur(c.oldestWaitMs) },
    lease: {
      text: c.leaseLeftMs === null ? '-' : countdown(c.leaseLeftMs),
      tone: c.leaseLeftMs !== null && c.leaseLeftMs < 0 ? 'bad' : undefined,
    },
    checkpoint: { text: c.checkpoint ?? '-', tone: c.checkpoint ? undefined : 'dim' },
    stuck: { text: stuck ? `! ${c.stuck.join('; ')}` : '', tone: 'bad' },
  }
}

export interface ChatsPanelProps {
  rows: ChatRow[]
  /** Rows before the filter (for "3/12"). */
  total: number
  filter: string
  width: number
  height: number
  selected: number | null
  focused: boolean
  colour: boolean
}

export function ChatsPanel(p: ChatsPanelProps): React.ReactElement | null {
  return (
    <Table
      columns={COLUMNS}
      rows={p.rows.map(chatCells)}
      width={p.width}
      height={p.height}
      selected={p.selected}
      focused={p.focused}
      colour={p.colour}
      count={p.filter ? `(${p.rows.length}/${p.total} /${p.filter})` : `(${p.total})`}
      empty={p.filter ? `no chat matches /${p.filter}` : 'no chat held or waited for'}
    />
  )
}
