import React from 'react'
import { Box, Text } from 'ink'
import type { ChatView, Explanation } from '../../lib.js'
import { windowStart } from '../layout.js'
import { dur, left, shortInc, truncate } from '../text.js'
import { toneColour } from './table.js'

export interface ChatDetailProps {
  /** The read side's view of the chat and its verdict (what `chat inspect --explain` prints). */
  view: ChatView | null
  explanation: Explanation | null
  key_: string
  error: string | null
  selectedTicket: number | null
  width: number
  height: number
  colour: boolean
}

interface Line {
  text: string
  tone?: 'good' | 'warn' | 'bad' | 'dim'
  bold?: boolean
  selected?: boolean
}

const holderText = (h: { replicaId: string; incarnation: string } | null) => (h ? `${h.replicaId} (${shortInc(h.incarnation)})` : '-')

/** One chat whole; ↑↓ select a ticket (for `s`). */
export function ChatDetailView(p: ChatDetailProps): React.ReactElement {
  const v = p.view
  const top: Line[] = []
  const tickets: Line[] = []
  const bottom: Line[] = []
  top.push({ text: `CHAT ${p.key_}   fence ${v?.fence ?? '-'}   (esc back)`, bold: true })
  if (!v) {
    top.push({ text: p.error ? `cannot read the chat: ${p.error}` : 'reading…', tone: p.error ? 'bad' : 'dim' })
  } else {
    if (!v.exists) top.push({ text: 'no turn, queue, checkpoint or handover marker under this prefix', tone: 'dim' })
    const h = v.holder
    top.push(
      h
        ? {
            text: `holder     ${holderText(h)} ${h.alive ? 'alive' : h.status === 'stale' ? 'RESTARTED' : 'NO HEARTBEAT'}, ticket ${h.ticket}, held ${dur(h.heldForMs)}, lease ${left(v.expiresInMs ?? 0)}${h.waitedMs !== null ? `, waited ${dur(h.waitedMs)}` : ''}`,
            tone: h.alive && (v.expiresInMs ?? 0) >= 0 ? 'good' : 'bad',
          }
        : { text: 'holder     none', tone: 'dim' },
    )
    top.push({
      text: `previous   ${v.previousHolder ? `${holderText(v.previousHolder)} held it before this grant` : 'nobody held it before this grant'}   last held by ${holderText(v.lastHolder)}   tickets issued ${v.lastTicket}, ${v.skippedTickets} dead skipped`,
    })
    top.push({
      text: `queue      ${v.tickets.length} ticket${v.tickets.length === 1 ? '' : 's'}${v.tickets.length ? ' in grant order (↑↓ select, s skip)' : ''}`,
    })
    v.tickets.forEach((t, i) =>
      tickets.push({
        text: `#${t.ticket}  ${t.replicaId} (${shortInc(t.incarnation)})  ${t.alive ? 'alive' : t.state.toUpperCase()}  waited ${dur(t.waitedMs)}  deadline ${left(t.deadlineInMs)}`,
        tone: t.alive ? undefined : 'bad',
        selected: p.selectedTicket === i,
      }),
    )
    const cp = v.checkpoint
    bottom.push(
      cp
        ? {
            text: `checkpoint rev ${cp.revision}  ${cp.flow}/${cp.step}  by ${cp.replicaId ?? '-'}${cp.ownerAlive ? '' : ' (gone)'} fence ${cp.fence ?? '-'}  written ${dur(cp.updatedAgoMs)} ago${cp.ephemeral ? `  ephemeral, expires in ${dur(cp.expiresInMs)}, fingerprint ${cp.fingerprint ?? '-'} (e extend)` : ''}`,
          }
        : { text: 'checkpoint none', tone: 'dim' },
    )
    bottom.push(
      v.handover
        ? {
            text: `handover   ${v.handover.name} by ${v.handover.replicaId} (${shortInc(v.handover.incarnation)})${v.handover.ownerAlive ? '' : ' (gone)'}, waiting ${dur(v.handover.waitingForMs)}${v.handover.expiresInMs === null ? '' : `, expires in ${dur(v.handover.expiresInMs)}`} (h remove)`,
          }
        : { text: 'handover   none', tone: 'dim' },
    )
    const e = p.explanation
    if (e) {
      bottom.push({
        text: `VERDICT    ${e.summary}`,
        bold: true,
        tone:
          e.verdict === 'stuck' ? 'bad' : e.verdict === 'attention' || e.verdict === 'late' || e.verdict === 'expired' ? 'warn' : 'good',
      })
      for (const f of e.findings) {
        bottom.push({
          text: `  ${f.severity} [${f.code}] ${f.message}`,
          tone: f.severity === 'problem' ? 'bad' : f.severity === 'warning' ? 'warn' : 'dim',
        })
        if (f.fix) bottom.push({ text: `    → ${f.fix}`, tone: 'dim' })
      }
    }
    if (p.error) bottom.push({ text: `last read failed: ${p.error}`, tone: 'bad' })
  }
  // Tickets get what the other lines leave; the selected one stays visible.
  const space = Math.max(1, p.height - top.length - bottom.length)
  const room = tickets.length > space ? Math.max(1, space - 1) : space
  const start = windowStart(tickets.length, room, p.selectedTicket)
  const shown = tickets.slice(start, start + room)
  const more = tickets.length - shown.length
  if (more > 0) shown.push({ text: `… ${more} more`, tone: 'dim' })
  const lines = [...top, ...shown.map((t) => ({ ...t, text: `${t.selected ? '› ' : '  '}${t.text}` })), ...bottom].slice(
    0,
    Math.max(1, p.height),
  )
  return (
    <Box flexDirection="column" width={p.width}>
      {lines.map((l, i) => (
        <Text key={i} color={toneColour(l.tone, p.colour)} bold={l.bold} inverse={l.selected} wrap="truncate">
          {truncate(l.text, p.width) || ' '}
        </Text>
      ))}
    </Box>
  )
}
