import React from 'react'
import { Box, Text } from 'ink'
import { footerHints } from '../keys.js'
import type { Tone } from '../model.js'
import { truncate } from '../text.js'
import { toneColour } from './table.js'

export type FooterMode =
  | { kind: 'keys'; detail: boolean; readOnly: boolean }
  | { kind: 'filter'; text: string }
  | { kind: 'confirm'; text: string; command: string }
  | { kind: 'busy'; text: string }
  | { kind: 'message'; text: string; tone: Tone }

/** Lines the footer takes. */
export function footerLines(mode: FooterMode): number {
  return mode.kind === 'confirm' ? 2 : 1
}

export interface FooterProps {
  mode: FooterMode
  width: number
  colour: boolean
}

/** One line: the keys, the filter being typed, a confirmation question, or the last action's result. */
export function Footer({ mode, width, colour }: FooterProps): React.ReactElement {
  switch (mode.kind) {
    case 'keys':
      return (
        <Text color={toneColour('dim', colour)} wrap="truncate">
          {truncate(footerHints(mode.detail ? 'detail' : 'main', mode.readOnly), width)}
        </Text>
      )
    case 'filter':
      return <Text wrap="truncate">{truncate(`filter chats by key or replica: /${mode.text}█  (⏎ apply, esc clear)`, width)}</Text>
    case 'confirm':
      // Two lines: what will be done to whom at which fence, then the question and the CLI equivalent.
      return (
        <Box flexDirection="column" width={width}>
          <Text color={toneColour('warn', colour)} bold wrap="truncate">
            {truncate(mode.text, width)}
          </Text>
          <Text wrap="truncate">
            <Text color={toneColour('warn', colour)} bold inverse>
              {' confirm? [y/N] '}
            </Text>
            <Text color={toneColour('dim', colour)}>{truncate(` = ${mode.command}`, Math.max(0, width - 16))}</Text>
          </Text>
        </Box>
      )
    case 'busy':
      return <Text wrap="truncate">{truncate(`${mode.text}…`, width)}</Text>
    case 'message':
      return (
        <Text color={toneColour(mode.tone, colour)} wrap="truncate">
          {truncate(mode.text, width)}
        </Text>
      )
  }
}
