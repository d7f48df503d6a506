/**
 * A listing printed as its rows come (a streamed listing: ../read/listing-stream.ts), in any format,
 * holding no row once it is printed. The table is laid out on the first rows written (their widths
 * and the headers'); later rows are padded to those columns, and a wider cell pushes the rest of its
 * own line only, as `kubectl get --watch` does. The JSON document is the one `jsonPieces` writes,
 * with the rows' array before the scan notes (which are known only at the end).
 */
import { SCHEMA_VERSION } from '../lib.js'
import type { KindView, Printer } from './format.js'
import { CELL_MAX, safeCopy } from './safe-text.js'
import { tableParts, tableRows } from './table.js'

/** A JSON value as it stands `depth` levels into the document (JSON.stringify's own indentation). */
function at(depth: number, v: unknown): string {
  const pad = '  '.repeat(depth)
  return (JSON.stringify(v, null, 2) as string).replace(/\n/g, `\n${pad}`)
}

export class ListWriter<R> {
  /** Rows written so far. */
  count = 0
  private widths: number[] | null = null
  /** JSON: the last row written, held back until it is known whether a comma follows it. */
  private held: string | null = null

  /** `head`: the document's fields before the rows (nowMs), for the JSON formats. */
  constructor(
    private readonly p: Printer,
    private readonly view: KindView<R>,
    private readonly head: Record<string, unknown>,
  ) {}

  write(rows: R[]): void {
    if (!rows.length) return
    const { p, view } = this
    switch (p.format) {
      case 'json': {
        // Every piece ends with a newline, as JSON.stringify(document, null, 2) would have it there.
        // The batch is stringified at its depth in one call; its last row is held back until it is
        // known whether a comma follows it. Rows are objects: at this depth each starts a line with
        // four spaces and "{", and only a row does (its own fields are indented deeper).
        const batch = JSON.stringify({ [view.list]: rows }, null, 2)
        const inner = batch.slice(batch.indexOf('[') + 2, batch.lastIndexOf(']') - 3)
        const last = inner.lastIndexOf(',\n    {')
        const text = this.count === 0 ? `${this.opening()}[\n` : `${this.held},\n`
        p.out(last < 0 ? text : `${text}${inner.slice(0, last + 2)}`)
        this.held = last < 0 ? inner : inner.slice(last + 2)
        break
      }
      case 'jsonl':
        p.out(rows.map((r) => JSON.stringify(r)).join('\n'))
        break
      case 'name':
        p.out(rows.map((r) => view.name(safeCopy(r))).join('\n'))
        break
      default:
        this.tableRows(rows)
    }
    this.count += rows.length
  }

  /** The end of the listing: the JSON document's closing fields (`tail`), or the empty listing's line. */
  end(tail: Record<string, unknown>): void {
    const { p, view } = this
    if (p.format === 'json') {
      const open = this.count === 0 ? `${this.opening()}[]` : `${this.held}\n  ]`
      const rest = Object.entries(tail)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `,\n  ${JSON.stringify(k)}: ${at(1, v)}`)
        .join('')
      p.out(`${open}${rest}\n}`)
    } else if (this.count === 0 && (p.format === 'table' || p.format === 'wide')) p.err(p.c.dim(view.empty))
  }

  /** The JSON document up to its rows' array: `{ "schemaVersion": …, "kind": …, <head>, "<list>": `. */
  private opening(): string {
    const fields = { schemaVersion: SCHEMA_VERSION, kind: this.view.list, ...this.head }
    const lines = Object.entries(fields).map(([k, v]) => `  ${JSON.stringify(k)}: ${at(1, v)}`)
    return `{\n${lines.join(',\n')},\n  ${JSON.stringify(this.view.list)}: `
  }

  private tableRows(rows: R[]): void {
    const { p, view } = this
    const cols = view.columns.filter((col) => p.format === 'wide' || !col.wide)
    const cells = rows.map((r) => {
      const safe = safeCopy(r, CELL_MAX)
      return cols.map((col) => col.value(safe, p.c))
    })
    if (this.widths) {
      p.out(tableRows(this.widths, cells))
      return
    }
    const laid = tableParts(
      cols.map((col) => p.c.dim(col.header)),
      cells,
    )
    this.widths = laid.widths
    p.out(p.headers ? laid.text : laid.text.split('\n').slice(1).join('\n'))
  }
}
