import React from 'react'
import { Box, Text } from 'ink'
import { dur, truncate } from '../text.js'
import { EXTEND_TTL_MS } from '../interventions.js'

export interface HelpViewProps {
  readOnly: boolean
  width: number
  height: number
  logFiles?: Record<string, string>
}

const KEY_BINDINGS: Array<[string, string]> = [
  ['tab ← →', 'move between panels (shift-tab: back)'],
  ['↑ ↓ k j pgup pgdn', 'move between rows'],
  ['/', 'filter chats and leases by key or replica (esc clears)'],
  ['enter', 'open the chat: `chat inspect --explain` (esc back)'],
  ['y', 'yield the provider: `provider yield <name> --if-fence`'],
  ['r', 'release the chat: `chat release <key> --if-fence`'],
  ['s', 'in a chat, skip the ticket: `chat skip <key> <t> --if-fence`'],
  ['h', 'in a chat, remove its handover marker: `handover rm <key> --if-incarnation`'],
  [
    'e',
    `in a chat, extend its ephemeral checkpoint to ${dur(EXTEND_TTL_MS)}: \`checkpoint extend <key> --ttl ${dur(EXTEND_TTL_MS)} --if-revision\``,
  ],
  ['p', 'pause / resume refreshing'],
  ['?', 'this help (any key closes it)'],
  ['q ctrl-c', 'quit'],
]

export function HelpView({ readOnly, width, height, logFiles }: HelpViewProps): React.ReactElement {
  const lines: string[] = ['KEYS', ...KEY_BINDINGS.map(([k, d]) => `  ${k.padEnd(18)} ${d}`)]
  lines.push(
    '',
    readOnly
      ? 'Read-only mode (--read-only / BOTMESH_READ_ONLY): y, r, s, h and e are disabled.'
      : 'y, r, s, h, e ask first and show what they act on; nothing is done if it moved.',
    "Times are Redis's clock. A replica that vanishes stays listed as GONE 30s.",
  )
  for (const [id, file] of Object.entries(logFiles ?? {})) lines.push(`log of ${id}: ${file}`)
  return (
    <Box flexDirection="column" width={width}>
      {lines.slice(0, Math.max(1, height)).map((l, i) => (
        <Text key={i} bold={i === 0} wrap="truncate">
          {truncate(l, width) || ' '}
        </Text>
      ))}
    </Box>
  )
}
