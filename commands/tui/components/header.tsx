import React from 'react'
import { Box, Text } from 'ink'
import { clock, dur, rateText, truncate } from '../text.js'
import { toneColour } from './table.js'

export type Connection =
  | { state: 'connecting' }
  | { state: 'live'; refreshedAgoMs: number }
  /** Reads fail: Redis went away (or refuses us). The dashboard keeps retrying. */
  | { state: 'down'; error: string; downForMs: number; attempts: number; dataAgeMs: number | null }

export interface HeaderProps {
  url: string
  prefix: string
  layout: string
  redisNowMs: number | null
  connection: Connection
  commandsPerSec: number | null
  refreshCommands: number | null
  intervalMs: number
  paused: boolean
  readOnly: boolean
  width: number
  colour: boolean
  /** `watch --replay`: where the player stands, instead of the connection's state. */
  replay?: string
  /** What needs attention (model.needsAttention); empty: `✔ all healthy`; null: not known yet. */
  attention?: string[] | null
}

/** Two lines: where we look, then how the dashboard itself is doing (or a banner when Redis is gone). */
export function Header(p: HeaderProps): React.ReactElement {
  const redisTime = `Redis ${p.redisNowMs ? `${clock(p.redisNowMs)} UTC` : '--:--:--'}`
  const tail = `  prefix ${p.prefix}  ${p.layout}  ${redisTime}`
  // Narrow terminals drop the title first; the URL is cut last (its host and port come first).
  const title = 'botmesh-coord watch  '
  const room = p.width - tail.length
  const where = room >= title.length + p.url.length ? `${title}${p.url}${tail}` : `${truncate(p.url, Math.max(12, room))}${tail}`
  const c = p.connection
  const flags = [p.paused ? 'PAUSED' : '', p.readOnly ? 'READ-ONLY' : ''].filter(Boolean).join(' ')
  let status: React.ReactElement
  if (c.state === 'down') {
    const text = `✖ REDIS UNREACHABLE (${c.error}) — retrying, down ${dur(c.downForMs)}${
      c.dataAgeMs !== null ? `, data below is ${dur(c.dataAgeMs)} old` : ''
    } (${c.attempts} failed)`
    status = (
      <Text color={toneColour('bad', p.colour)} bold inverse={!p.colour} wrap="truncate">
        {truncate(text, p.width)}
      </Text>
    )
  } else if (p.replay) {
    status = (
      <Text color={toneColour('warn', p.colour)} bold wrap="truncate">
        {truncate(`${p.replay}   space pause · . , step · + - speed · [ ] ±10s · g time`, p.width)}
      </Text>
    )
  } else {
    const state = c.state === 'live' ? `● connected, refreshed ${dur(c.refreshedAgoMs)} ago` : '○ connecting…'
    const load = `load ${rateText(p.commandsPerSec)} cmd/s (${p.refreshCommands ?? '-'}/refresh, every ${dur(p.intervalMs)})`
    status = (
      <Text wrap="truncate">
        <Text color={toneColour(c.state === 'live' ? 'good' : 'warn', p.colour)}>{state}</Text>
        <Text color={toneColour('dim', p.colour)}>{`  ${load}`}</Text>
        {flags ? <Text color={toneColour('warn', p.colour)} bold>{`  ${flags}`}</Text> : null}
        {c.state === 'live' && p.attention ? (
          p.attention.length ? (
            <Text color={toneColour('warn', p.colour)} bold>{`  ⚠ ${p.attention.join(', ')}`}</Text>
          ) : (
            <Text color={toneColour('good', p.colour)} bold>
              {'  ✔ all healthy'}
            </Text>
          )
        ) : null}
      </Text>
    )
  }
  return (
    <Box flexDirection="column" width={p.width}>
      <Text bold wrap="truncate">
        {truncate(where, p.width)}
      </Text>
      {status}
    </Box>
  )
}
