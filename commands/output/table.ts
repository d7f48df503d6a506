import { createRequire } from 'node:module'

/**
 * The display width of a cell's text: its widest line, colour codes left out, wide characters
 * counted twice — cli-table3's own measure, which the tables of this CLI were laid out with.
 */
const { strlen } = createRequire(import.meta.url)('cli-table3/src/utils.js') as { strlen: (s: string) => number }

/**
 * A borderless table for people, headers dimmed by the caller's colour: each column as wide as its
 * widest cell plus two spaces, lines without trailing spaces, a cell with a newline on several lines.
 * Linear in the number of rows (cli-table3's layout, which this replaces, is quadratic in them: a
 * 20,000-ticket queue took 28 s to print).
 */
export function table(head: string[], rows: Array<Array<string | number>>): string {
  const all = [head, ...rows].map((r) => r.map((c) => String(c)))
  const columns = all.reduce((n, r) => Math.max(n, r.length), 0)
  const widths: number[] = new Array<number>(columns).fill(0)
  const measured = all.map((r) =>
    r.map((text, i) => {
      const lines = text.split('\n').map((l) => ({ l, w: strlen(l) }))
      for (const { w } of lines) if (w > widths[i]!) widths[i] = w
      return lines
    }),
  )
  const out: string[] = []
  for (const r of measured) {
    const height = r.reduce((n, c) => Math.max(n, c.length), 1)
    for (let line = 0; line < height; line++) {
      let s = ''
      for (let i = 0; i < columns; i++) {
        const cell = r[i]?.[line] ?? { l: '', w: 0 }
        s += cell.l + ' '.repeat(widths[i]! + 2 - cell.w)
      }
      out.push(s.trimEnd())
    }
  }
  return out.join('\n')
}
