import React from 'react'
import type { Column } from '../layout.js'
import type { ProviderRow } from '../model.js'
import { dur, fenceText } from '../text.js'
import { Table, type Row } from './table.js'

type K = 'key' | 'leader' | 'transport' | 'fence' | 'since' | 'standbys' | 'handover' | 'yield'

const COLUMNS: Array<Column<K>> = [
  { key: 'key', header: 'PROVIDER', width: 14, priority: 100, flex: true },
  { key: 'leader', header: 'LEADER', width: 12, priority: 95 },
  { key: 'fence', header: 'FENCE', width: 16, align: 'right', priority: 85 },
  { key: 'transport', header: 'TRANSPORT', width: 24, priority: 90 },
  { key: 'since', header: 'SINCE', width: 7, align: 'right', priority: 60 },
  { key: 'standbys', header: 'STANDBYS', width: 12, priority: 70 },
  { key: 'handover', header: 'LAST TAKEOVER', width: 24, priority: 50 },
  { key: 'yield', header: 'YIELD', width: 22, priority: 75 },
]

export function providerCells(p: ProviderRow): Row<K> {
  return {
    key: { text: p.key, bold: true },
    leader: p.leader
      ? p.state === 'ok'
        ? { text: p.leader, tone: 'good', bold: true }
        : { text: `${p.leader} ${p.state}`, tone: p.state === 'late' || p.state === 'down' ? 'warn' : 'bad', bold: true }
      : { text: p.leaderlessForMs !== null ? `none ${dur(p.leaderlessForMs)}` : 'none', tone: 'bad' },
    // The leader's transport as it recorded it: `up`, or `down 35s (yields at 1m)` (`transport down …` in the CLI).
    transport: p.leader
      ? p.transportDown
        ? { text: p.transportDown.replace(/^transport /, ''), tone: 'bad', bold: true }
        : { text: 'up', tone: 'good' }
      : { text: '-' },
    fence: { text: fenceText(p.fence) },
    since: { text: dur(p.leadingForMs) },
    standbys: { text: p.standbys.length ? p.standbys.join(',') : '-', tone: p.standbys.length ? undefined : 'warn' },
    // "12s ago (340ms yielded)": when the current leader took over, how long nobody led, how the one before let go
    // (an expiry or a revocation — the leader before never let go — in yellow).
    handover: p.lastHandover
      ? {
          text: `${dur(p.lastHandover.agoMs)} ago (${dur(p.lastHandover.tookMs)}${p.lastHandover.how ? ` ${p.lastHandover.how}` : ''})`,
          tone: p.lastHandover.how === 'expired' || p.lastHandover.how === 'revoked' || p.lastHandover.how === 'evicted' ? 'warn' : 'dim',
        }
      : { text: '-', tone: 'dim' },
    yield: { text: p.pendingYield ?? '-', tone: p.pendingYield ? 'operator' : 'dim' },
  }
}

export interface ProvidersPanelProps {
  rows: ProviderRow[]
  width: number
  height: number
  selected: number | null
  focused: boolean
  colour: boolean
}

export function ProvidersPanel(p: ProvidersPanelProps): React.ReactElement | null {
  return (
    <Table
      // The YIELD column only matters while a request is pending.
      columns={p.rows.some((r) => r.pendingYield) ? COLUMNS : COLUMNS.filter((c) => c.key !== 'yield')}
      rows={p.rows.map(providerCells)}
      width={p.width}
      height={p.height}
      selected={p.selected}
      focused={p.focused}
      colour={p.colour}
      count={`(${p.rows.length})`}
      empty="no leads held or campaigned for"
    />
  )
}
