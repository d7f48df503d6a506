/**
 * The output formats of every command (kubectl's): `-o table` (default), `-o wide` (more columns),
 * `-o json` (one document: `{schemaVersion, kind, …}`), `-o jsonl` (one JSON object per line: the
 * same objects as the json document's array), `-o name` (`<kind>/<key>` per line); `--json` is
 * `-o json`; `--no-headers` drops table headers. A listing declares its columns once (KindView) and
 * `printList` prints it in any format, so every listing behaves the same.
 *
 * Strings from outside (keys, ids, event text) are made safe here, by construction: a listing's
 * columns and an inspect view's printer get a copy of the data with every string shown escaped
 * (`safeCopy`, ./safe-text.ts; table cells also cut to CELL_MAX columns), never the raw values;
 * JSON gets the raw values.
 */
import type { Command } from 'commander'
import type { ChalkInstance } from 'chalk'
import { SCHEMA_VERSION } from '../lib.js'
import { table } from './table.js'
import { CELL_MAX, safeCopy, visible } from './safe-text.js'

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'jsonl', 'name'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]

/** Commands whose `-o` names the file they write (snapshot), not a format. */
const OUTPUT_FILE_COMMANDS = new WeakSet<Command>()
export function outputIsFile(cmd: Command): Command {
  OUTPUT_FILE_COMMANDS.add(cmd)
  return cmd
}

/** `-o` is one of the formats (a usage error as commander words it), unless the command writes a file. */
export function checkOutputFormat(root: Command, action: Command): void {
  const v = (root.opts() as { output?: string }).output
  if (v === undefined || OUTPUT_FILE_COMMANDS.has(action) || (OUTPUT_FORMATS as readonly string[]).includes(v)) return
  root.error(`error: option '-o, --output <format>' argument '${v}' is invalid. Allowed choices are ${OUTPUT_FORMATS.join(', ')}.`, {
    exitCode: 2,
    code: 'commander.invalidArgument',
  })
}

/** The format a command was asked for: `-o`, or `--json` (an alias of `-o json`). */
export function outputFormat(cmd: Command): OutputFormat {
  const o = cmd.optsWithGlobals() as { output?: OutputFormat; json?: boolean }
  if (o.json) return 'json'
  if (OUTPUT_FILE_COMMANDS.has(cmd)) return 'table'
  return (o.output as OutputFormat | undefined) ?? 'table'
}

/** JSON on stdout: errors go to stderr as JSON too. */
export function machineFormat(cmd: Command): boolean {
  const f = outputFormat(cmd)
  return f === 'json' || f === 'jsonl'
}

/** Table headers wanted? (`--no-headers` drops them.) */
export function headersWanted(cmd: Command): boolean {
  return (cmd.optsWithGlobals() as { headers?: boolean }).headers !== false
}

/** The --json envelope: stable field names and a top-level schemaVersion. */
export function jsonOut(kind: string, body: Record<string, unknown>): string {
  return JSON.stringify({ schemaVersion: SCHEMA_VERSION, kind, ...body }, null, 2)
}

/** Rows per piece of a listing's JSON document written at a time (a few hundred kilobytes of text). */
const ROWS_PER_PIECE = 500

/**
 * `jsonOut(kind, body)` in pieces, byte for byte: an array longer than ROWS_PER_PIECE goes out a few
 * hundred elements at a time (each slice stringified by JSON.stringify itself, at the depth it has
 * in the document), so that a listing of 100,000 rows is never one 50 MB string. Every piece but the
 * last ends with a newline.
 */
export function* jsonPieces(kind: string, body: Record<string, unknown>): Generator<string> {
  let text = '{'
  let first = true
  for (const [k, v] of Object.entries({ schemaVersion: SCHEMA_VERSION, kind, ...body })) {
    const name = JSON.stringify(k)
    if (Array.isArray(v) && v.length > ROWS_PER_PIECE) {
      // JSON.stringify({ [k]: slice }, null, 2) is `{\n  "k": [\n` + the elements at this depth + `\n  ]\n}`.
      const open = `{\n  ${name}: [\n`
      const close = '\n  ]\n}'
      text += `${first ? '' : ','}\n  ${name}: [\n`
      for (let i = 0; i < v.length; i += ROWS_PER_PIECE) {
        const slice = JSON.stringify({ [k]: v.slice(i, i + ROWS_PER_PIECE) }, null, 2)
        yield `${text}${slice.slice(open.length, slice.length - close.length)}${i + ROWS_PER_PIECE < v.length ? ',' : ''}\n`
        text = ''
      }
      text += '  ]'
    } else {
      const value = JSON.stringify(v, null, 2) as string | undefined
      if (value === undefined) continue
      text += `${first ? '' : ','}\n  ${name}: ${value.replace(/\n/g, '\n  ')}`
    }
    first = false
  }
  yield `${text}${first ? '' : '\n'}}`
}

/** A value of safe data (a row or body as printList/printOne hand it over) as a cell: '-' for none. */
export function cell(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '-'
  return String(v)
}

export interface Column<R> {
  header: string
  /** The cell text (coloured with `c` where it helps), from a row whose strings are already shown escaped. */
  value(row: R, c: ChalkInstance): string | number
  /** Only with `-o wide`. */
  wide?: boolean
}

/** How rows of one kind print. */
export interface KindView<R> {
  /** The JSON `kind` of the document (plural: `leases`) and the array field holding the rows. */
  list: string
  /** `-o name` prints `<name(row)>` per line, e.g. `lease/chat:42`. */
  name(row: R): string
  columns: Array<Column<R>>
  /** Said (dimmed, on stderr) when there are no rows. */
  empty: string
  /** The rows' part of the JSON document, when not `{ [list]: rows }` (a listing of two kinds). */
  document?(rows: R[]): Record<string, unknown>
}

export interface Printer {
  format: OutputFormat
  headers: boolean
  c: ChalkInstance
  out(text: string): void
  err(text: string): void
}

/** A printer for a table inside a human view (a block of `inspect`): always a table, with headers. */
export function tableOf(p: Printer): Printer {
  return { format: p.format === 'wide' ? 'wide' : 'table', headers: true, c: p.c, out: p.out, err: p.err }
}

/** The table of a listing (table or wide), from safe rows (printList's, or a part of printOne's body). */
export function renderTable<R>(p: Printer, view: KindView<R>, rows: R[]): string {
  const cols = view.columns.filter((col) => p.format === 'wide' || !col.wide)
  const text = table(
    cols.map((col) => p.c.dim(col.header)),
    rows.map((r) => cols.map((col) => col.value(r, p.c))),
  )
  return p.headers ? text : text.split('\n').slice(1).join('\n')
}

/** Print a listing in the chosen format. `envelope` is the rest of the JSON document (nowMs, scan notes…). */
export function printList<R>(p: Printer, view: KindView<R>, rows: R[], envelope: Record<string, unknown> = {}): void {
  switch (p.format) {
    case 'json':
      for (const piece of jsonPieces(view.list, { ...envelope, ...(view.document ? view.document(rows) : { [view.list]: rows }) }))
        p.out(piece)
      return
    case 'jsonl':
      for (const r of rows) p.out(JSON.stringify(r))
      return
    case 'name':
      for (const r of rows) p.out(view.name(safeCopy(r)))
      return
    default:
      if (rows.length === 0) p.err(p.c.dim(view.empty))
      else
        p.out(
          renderTable(
            p,
            view,
            rows.map((r) => safeCopy(r, CELL_MAX)),
          ),
        )
  }
}

/**
 * Print one object (inspect, status): JSON formats print it; `name` prints its name (shown escaped);
 * people get `human(safe)`, where `safe` is `body` with every string shown escaped, whole.
 */
export function printOne<B extends Record<string, unknown>>(
  p: Printer,
  kind: string,
  body: B,
  name: string,
  human: (safe: B) => void,
): void {
  if (p.format === 'json') p.out(jsonOut(kind, body))
  else if (p.format === 'jsonl') p.out(JSON.stringify(body))
  else if (p.format === 'name') p.out(visible(name))
  else human(safeCopy(body))
}
