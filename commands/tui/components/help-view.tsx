import React from 'react'
import { Box, Text } from 'ink'
import { helpRows, writeKeys } from '../keys.js'
import { truncate, dur } from '../text.js'
import { GONE_SHOWN_MS } from '../model.js'

export interface HelpViewProps {
  readOnly: boolean
  width: number
  height: number
  logFiles?: Record<string, string>
}

export function HelpView({ readOnly, width, height, logFiles }: HelpViewProps): React.ReactElement {
  const lines: string[] = ['KEYS', ...helpRows().map(([k, d]) => `  ${k.padEnd(18)} ${d}`)]
  const writes = writeKeys()
  lines.push(
    '',
    readOnly
      ? `Read-only mode (--read-only / BOTMESH_READ_ONLY): ${writes.slice(0, -1).join(', ')} and ${writes.at(-1)} are disabled.`
      : `${writes.join(', ')} ask first and show what they act on; nothing is done if it moved.`,
    `Times are Redis's clock. A replica that vanishes stays listed as GONE ${dur(GONE_SHOWN_MS)}.`,
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
