import React from 'react'
import type { Column } from '../layout.js'
import { BACKLOG_WAIT_MS, type ReplicaRow } from '../model.js'
import { bar, dur, rateText, shortInc } from '../text.js'
import { Table, type Row } from './table.js'

type K = 'id' | 'inc' | 'beat' | 'leases' | 'tps' | 'waiting' | 'oldest' | 'p99' | 'lost'

const COLUMNS: Array<Column<K>> = [
  { key: 'id', header: 'REPLICA', width: 12, priority: 100, flex: true },
  { key: 'inc', header: 'INC', width: 8, priority: 20 },
  { key: 'beat', header: 'HEARTBEAT', width: 16, priority: 90 },
  { key: 'leases', header: 'LEASES', width: 6, align: 'right', priority: 80 },
  { key: 'tps', header: 'TURNS/S', width: 7, align: 'right', priority: 60 },
  { key: 'waiting', header: 'WAITING', width: 7, align: 'right', priority: 50 },
  { key: 'oldest', header: 'OLDEST', width: 6, align: 'right', priority: 45 },
  { key: 'p99', header: 'WAIT P99', width: 8, align: 'right', priority: 40 },
  { key: 'lost', header: 'LOST', width: 4, align: 'right', priority: 70 },
]

/** "1.2s ███░░░" toward leaseMs; a gone replica says so instead. */
function heartbeat(r: ReplicaRow): string {
  if (r.status === 'gone') return `GONE ${dur(r.goneForMs)} ago`
  return `${dur(r.heartbeatAgeMs).padEnd(6)} ${bar(r.beatFraction, 9)}`
}

export function replicaCells(r: ReplicaRow): Row<K> {
  const tone = r.status === 'gone' ? 'bad' : r.status === 'late' ? 'warn' : undefined
  const gone = r.status === 'gone'
  return {
    id: { text: r.replicaId, tone, bold: !gone },
    inc: { text: shortInc(r.incarnation), tone: 'dim' },
    beat: { text: heartbeat(r), tone: tone ?? 'good' },
    leases: { text: gone ? '-' : String(r.leasesHeld) },
    tps: { text: gone ? '-' : rateText(r.turnsPerSec) },
    waiting: { text: gone ? '-' : String(r.waitingNow), tone: r.waitingNow > 0 ? 'warn' : undefined },
    // As of its last beat; red from the backlog threshold on (needsAttention, alert BotmeshTurnBacklog).
    oldest: {
      text: gone ? '-' : dur(r.oldestWaitMs),
      tone: gone || r.oldestWaitMs === null ? undefined : r.oldestWaitMs >= BACKLOG_WAIT_MS ? 'bad' : 'warn',
    },
    p99: { text: gone ? '-' : dur(r.waitP99Ms) },
    lost: { text: String(r.leasesLost), tone: r.leasesLost > 0 ? 'bad' : undefined },
  }
}

export interface ReplicasPanelProps {
  rows: ReplicaRow[]
  width: number
  height: number
  selected: number | null
  focused: boolean
  colour: boolean
}

export function ReplicasPanel(p: ReplicasPanelProps): React.ReactElement | null {
  const live = p.rows.filter((r) => r.status !== 'gone').length
  return (
    <Table
      columns={COLUMNS}
      rows={p.rows.map(replicaCells)}
      width={p.width}
      height={p.height}
      selected={p.selected}
      focused={p.focused}
      colour={p.colour}
      count={`(${live})`}
      empty="no live replicas under this prefix"
    />
  )
}
