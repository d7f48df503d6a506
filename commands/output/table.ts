import { createRequire } from 'node:module'

/**
 * The display width of a cell's text: its widest line, colour codes left out, wide characters
 * counted twice — cli-table3's own measure, which the tables of this CLI were laid out with.
 */
const { strlen } = createRequire(import.meta.url)('cli-table3/src/utils.js') as { strlen: (s: string) => number }

/** Printable ASCII only: its width is its length (most cells; strlen's ANSI and wide-character work is for the rest). */
const PLAIN = /^[\x20-\x7e]*$/
const width = (l: string): number => (PLAIN.test(l) ? l.length : strlen(l))

/** A row's cells, each split into its lines with their display widths. */
type Measured = Array<Array<{ l: string; w: number }>>

function measure(rows: Array<Array<string | number>>, widths: number[]): Measured[] {
  return rows.map((r) =>
    r.map((c, i) => {
      const lines = String(c)
        .split('\n')
        .map((l) => ({ l, w: width(l) }))
      for (const { w } of lines) if (w > (widths[i] ?? 0)) widths[i] = w
      return lines
    }),
  )
}

function render(measured: Measured[], widths: number[], out: string[]): void {
  for (const r of measured) {
    const height = r.reduce((n, c) => Math.max(n, c.length), 1)
    for (let line = 0; line < height; line++) {
      let s = ''
      for (let i = 0; i < widths.length; i++) {
        const cell = r[i]?.[line] ?? { l: '', w: 0 }
        s += cell.l + ' '.repeat(Math.max(2, widths[i]! + 2 - cell.w))
      }
      out.push(s.trimEnd())
    }
  }
}

/**
 * A borderless table for people, headers dimmed by the caller's colour: each column as wide as its
 * widest cell plus two spaces, lines without trailing spaces, a cell with a newline on several lines.
 * Linear in the number of rows (cli-table3's layout, which this replaces, is quadratic in them: a
 * 20,000-ticket queue took 28 s to print).
 */
export function table(head: string[], rows: Array<Array<string | number>>): string {
  return tableParts(head, rows).text
}

/**
 * `table(head, rows)`, and the column widths it was laid out with, so that more rows can be printed
 * under it later (`tableRows`): a listing that streams lays its table out on its first rows.
 */
export function tableParts(head: string[], rows: Array<Array<string | number>>): { text: string; widths: number[] } {
  const columns = [head, ...rows].reduce((n, r) => Math.max(n, r.length), 0)
  const widths: number[] = new Array<number>(columns).fill(0)
  const measured = measure([head, ...rows], widths)
  const out: string[] = []
  render(measured, widths, out)
  return { text: out.join('\n'), widths }
}

/**
 * More rows of a table laid out already (tableParts' widths): each cell padded to its column, a cell
 * wider than its column pushing the rest of its own line only.
 */
export function tableRows(widths: number[], rows: Array<Array<string | number>>): string {
  const out: string[] = []
  render(measure(rows, [...widths]), widths, out)
  return out.join('\n')
}
