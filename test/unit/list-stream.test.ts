/**
 * The pieces of a listing that streams: the JSON document written a batch at a time is the document
 * (rows before the scan notes); a table laid out on its first rows prints later ones in its columns;
 * a sort of more rows than a run keeps in memory is the same as a sort in memory, and leaves no file.
 */
import { existsSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { describe, expect, it } from 'vitest'
import { Chalk } from 'chalk'
import { ListWriter } from '../../commands/output/list-writer.js'
import { sortedBatches } from '../../commands/output/external-sort.js'
import { table, tableParts, tableRows } from '../../commands/output/table.js'
import type { KindView, Printer, OutputFormat } from '../../commands/output/format.js'

interface Row {
  key: string
  n: number
  note: string | null
}

const view: KindView<Row> = {
  list: 'things',
  name: (r) => `thing/${r.key}`,
  empty: 'no things',
  columns: [
    { header: 'KEY', value: (r) => r.key },
    { header: 'N', value: (r) => r.n },
  ],
}

function printer(format: OutputFormat): Printer & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = []
  const stderr: string[] = []
  // As the CLI's out(): a newline after a piece that does not end with one.
  const out = (t: string) => stdout.push(t.endsWith('\n') ? t : `${t}\n`)
  return { format, headers: true, c: new Chalk({ level: 0 }), out, err: (t) => stderr.push(t), stdout, stderr }
}

const rows = (n: number, from = 0): Row[] =>
  Array.from({ length: n }, (_, i) => ({ key: `chat:${from + i}`, n: (from + i) % 7, note: i % 3 ? null : `a "quoted"\nnote` }))

describe('ListWriter', () => {
  it('a JSON document written in batches is the document: rows, then the notes', () => {
    const p = printer('json')
    const w = new ListWriter(p, view, { nowMs: 123 })
    const all = rows(7)
    w.write(all.slice(0, 3))
    w.write([])
    w.write(all.slice(3))
    w.end({ scanned: 10, truncated: false, corrupt: [{ rawKey: 'k', error: 'bad' }], unreachable: [] })
    const text = p.stdout.join('')
    expect(JSON.parse(text)).toEqual({
      schemaVersion: expect.any(Number),
      kind: 'things',
      nowMs: 123,
      things: all,
      scanned: 10,
      truncated: false,
      corrupt: [{ rawKey: 'k', error: 'bad' }],
      unreachable: [],
    })
    // Indented as JSON.stringify(document, null, 2) indents it.
    const doc = JSON.parse(text) as Record<string, unknown>
    expect(text).toBe(`${JSON.stringify(doc, null, 2)}\n`)
  })

  it('an empty JSON listing is a document with an empty array', () => {
    const p = printer('json')
    const w = new ListWriter(p, view, { nowMs: 1 })
    w.end({ truncated: false })
    expect(JSON.parse(p.stdout.join(''))).toMatchObject({ kind: 'things', nowMs: 1, things: [], truncated: false })
  })

  it('jsonl and name print a line per row; an empty table says so on stderr', () => {
    const l = printer('jsonl')
    const wl = new ListWriter(l, view, {})
    wl.write(rows(2))
    wl.write(rows(3).slice(2))
    expect(
      l.stdout
        .join('')
        .trimEnd()
        .split('\n')
        .map((x) => JSON.parse(x) as Row),
    ).toEqual(rows(3))
    const n = printer('name')
    new ListWriter(n, view, {}).write(rows(2))
    expect(n.stdout.join('')).toBe('thing/chat:0\nthing/chat:1\n')
    const t = printer('table')
    new ListWriter(t, view, {}).end({})
    expect(t.stderr).toEqual(['no things'])
  })

  it('a table laid out on its first rows prints later ones in the same columns', () => {
    const p = printer('table')
    const w = new ListWriter(p, view, {})
    w.write(rows(3))
    w.write(rows(2, 3))
    expect(p.stdout.join('')).toBe(
      `${table(
        ['KEY', 'N'],
        rows(5).map((r) => [r.key, r.n]),
      )}\n`,
    )
  })
})

describe('tableParts / tableRows', () => {
  it('rows printed under a laid-out table: same columns; a wider cell pushes its own line only', () => {
    const { text, widths } = tableParts(['A', 'B', 'C'], [['x', 'yy', 'z']])
    expect(text).toBe(table(['A', 'B', 'C'], [['x', 'yy', 'z']]))
    expect(tableRows(widths, [['p', 'q', 'r']])).toBe('p  q   r')
    expect(tableRows(widths, [['wider', 'q', 'r']])).toBe('wider  q   r')
    expect(widths).toEqual([1, 2, 1])
  })
})

describe('sortedBatches', () => {
  const cmp = (a: Row, b: Row) => a.n - b.n
  async function* batchesOf(all: Row[], size: number) {
    for (let i = 0; i < all.length; i += size) yield all.slice(i, i + size)
  }
  const ours = () => readdirSync(tmpdir()).filter((f) => f.startsWith('botmesh-coord-sort-'))

  it('in runs on disk: the same order as a stable sort in memory, and no file left', async () => {
    const before = ours()
    const all = rows(1000)
    const out: Row[] = []
    for await (const b of sortedBatches(batchesOf(all, 37), cmp, 64)) out.push(...b)
    expect(out).toEqual([...all].sort(cmp))
    expect(ours()).toEqual(before)
  })

  it('fewer rows than a run: sorted in memory, no file made', async () => {
    const out: Row[] = []
    for await (const b of sortedBatches(batchesOf(rows(50), 7), cmp, 64)) out.push(...b)
    expect(out).toEqual([...rows(50)].sort(cmp))
  })

  it('a reader that stops early removes the runs', async () => {
    const before = ours()
    for await (const b of sortedBatches(batchesOf(rows(500), 50), cmp, 64)) {
      expect(b.length).toBeGreaterThan(0)
      expect(ours().length).toBe(before.length + 1)
      break
    }
    expect(ours()).toEqual(before)
    expect(existsSync(tmpdir())).toBe(true)
  })
})
