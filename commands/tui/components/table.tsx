/**
 * A panel as a table: one header line (the panel's name is the first column's header, so no line is
 * spent on a title) and a window of rows that keeps the selected one on screen. Props only.
 */
import React from 'react'
import { Box, Text } from 'ink'
import { GAP, fitColumns, windowStart, type Column } from '../layout.js'
import { cell } from '../text.js'
import type { Tone } from '../model.js'

export interface Cell {
  text: string
  tone?: Tone | 'dim'
  bold?: boolean
}

export type Row<K extends string> = Record<K, Cell>

const COLOURS: Record<Tone | 'dim', string | undefined> = {
  info: undefined,
  good: 'green',
  warn: 'yellow',
  bad: 'red',
  operator: 'magenta',
  dim: 'gray',
}

/** The colour of a tone, or none at all when colours are off (NO_COLOR, --no-color). */
export function toneColour(tone: Tone | 'dim' | undefined, colour: boolean): string | undefined {
  return colour && tone ? COLOURS[tone] : undefined
}

export interface TableProps<K extends string> {
  columns: Array<Column<K>>
  rows: Array<Row<K>>
  /** Columns available (the whole line). */
  width: number
  /** Lines available, header included. 0 hides the panel. */
  height: number
  /** Index of the selected row, or null. */
  selected: number | null
  focused: boolean
  colour: boolean
  /** Shown after the header when there are no rows. */
  empty: string
  /** Appended to the first header ("CHAT 12/40"). */
  count?: string
}

export function Table<K extends string>(props: TableProps<K>): React.ReactElement | null {
  const { rows, width, height, selected, focused, colour } = props
  if (height <= 0) return null
  // Two columns for the selection mark.
  // The name column grows to its longest text, no more: the width left lets more columns fit.
  const content = (k: K, header: string) => Math.max(header.length + (props.count?.length ?? 0) + 7, ...rows.map((r) => r[k].text.length))
  const cols = fitColumns(
    props.columns.map((c) => (c.flex ? { ...c, content: content(c.key, c.header) } : c)),
    Math.max(4, width - 2),
  )
  const visible = Math.max(0, height - 1)
  const start = windowStart(rows.length, visible, selected)
  const shown = rows.slice(start, start + visible)
  const hidden = rows.length - shown.length
  const headerCells = cols.map((c, i) =>
    cell(
      i === 0 ? `${c.header}${props.count ? ` ${props.count}` : ''}${hidden > 0 ? ` +${hidden}` : ''}` : c.header,
      c.width,
      i === 0 ? 'left' : c.align,
    ),
  )
  const header = `${focused ? '▸ ' : '  '}${headerCells.join(' '.repeat(GAP))}`
  return (
    <Box flexDirection="column" width={width}>
      <Text
        bold={focused}
        inverse={focused && !colour}
        color={focused ? (colour ? 'cyan' : undefined) : toneColour('dim', colour)}
        wrap="truncate"
      >
        {header}
      </Text>
      {rows.length === 0 && visible > 0 ? (
        <Text color={toneColour('dim', colour)} wrap="truncate">
          {`  ${props.empty}`}
        </Text>
      ) : null}
      {shown.map((row, i) => {
        const isSelected = selected === start + i
        return (
          <Text key={start + i} inverse={isSelected && focused} bold={isSelected && !focused} wrap="truncate">
            {isSelected ? '› ' : '  '}
            {cols.map((c, j) => {
              const v = row[c.key]
              return (
                <Text key={c.key} color={toneColour(v.tone, colour)} bold={v.bold}>
                  {(j ? ' '.repeat(GAP) : '') + cell(v.text, c.width, c.align)}
                </Text>
              )
            })}
          </Text>
        )
      })}
    </Box>
  )
}
