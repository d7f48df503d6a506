import React from 'react'
import { Box } from 'ink'
import type { ChatRow, EventRow, ExpiringRow, ProviderRow, ReplicaRow } from '../model.js'
import { allocate, priorityFor, type PanelId } from '../layout.js'
import { ReplicasPanel } from './replicas-panel.js'
import { ProvidersPanel } from './providers-panel.js'
import { ChatsPanel } from './chats-panel.js'
import { ExpiringPanel } from './expiring-panel.js'
import { EventsPanel } from './events-panel.js'

/** At least this wide for the two-column layout. */
export const WIDE = 160

export interface PanelRows {
  replicas: ReplicaRow[]
  providers: ProviderRow[]
  chats: ChatRow[]
  expiring: ExpiringRow[]
  events: EventRow[]
}

export interface MainPanelsProps {
  /** The rows as shown (the filter applied). */
  rows: PanelRows
  /** Chats in the refresh, filtered out or not. */
  totalChats: number
  filter: string
  focus: PanelId
  /** The selected row of the focused panel. */
  selected: number | null
  /** Redis's clock of the refresh. */
  nowMs: number
  width: number
  height: number
  colour: boolean
}

/** The main view: the five panels in one column, or two from WIDE columns on, sharing the height by need and focus. */
export function MainPanels({
  rows,
  totalChats,
  filter,
  focus,
  selected,
  nowMs,
  width,
  height,
  colour,
}: MainPanelsProps): React.ReactElement {
  const need = (id: PanelId, n: number, base: number) => ({ id, need: 1 + Math.max(1, n), base: 1 + Math.min(Math.max(1, n), base) })
  const panel = (id: PanelId, w: number, h: number): React.ReactElement | null => {
    const common = { width: w, height: h, selected: focus === id ? selected : null, focused: focus === id, colour }
    switch (id) {
      case 'replicas':
        return <ReplicasPanel key={id} rows={rows.replicas} {...common} />
      case 'providers':
        return <ProvidersPanel key={id} rows={rows.providers} {...common} />
      case 'chats':
        return <ChatsPanel key={id} rows={rows.chats} total={totalChats} filter={filter} {...common} />
      case 'expiring':
        return <ExpiringPanel key={id} rows={rows.expiring} filter={filter} {...common} />
      case 'events':
        return <EventsPanel key={id} rows={rows.events} nowMs={nowMs} {...common} />
    }
  }
  const needs = {
    replicas: need('replicas', rows.replicas.length, 6),
    providers: need('providers', rows.providers.length, 3),
    chats: need('chats', rows.chats.length, 5),
    expiring: need('expiring', rows.expiring.length, 3),
    events: need('events', rows.events.length, 2),
  }
  const column = (ids: PanelId[], w: number) => {
    const h = allocate(
      ids.map((id) => needs[id]),
      priorityFor(focus).filter((id) => ids.includes(id)),
      height,
    )
    return (
      <Box flexDirection="column" width={w}>
        {ids.map((id) => panel(id, w, h[id]))}
      </Box>
    )
  }
  if (width < WIDE) return column(['replicas', 'providers', 'chats', 'expiring', 'events'], width)
  const left = Math.floor(width * 0.55)
  return (
    <Box flexDirection="row" width={width}>
      {column(['replicas', 'chats'], left)}
      <Box width={1} />
      {column(['providers', 'expiring', 'events'], width - left - 1)}
    </Box>
  )
}
