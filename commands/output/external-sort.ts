/**
 * Rows sorted in bounded memory: a listing asked to sort more rows than it keeps in memory sorts
 * them in runs of RUN_ROWS, writes each run to a temporary file (one JSON row per line), and merges
 * the runs. Memory holds one run while reading, one row per run while merging; the files are removed
 * when the rows have been read (or the reader stopped).
 */
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { once } from 'node:events'

/** Rows per sorted run (about 50 MB of rows in memory at a time). */
export const RUN_ROWS = 50_000
/** Rows per batch handed on while merging. */
const OUT_BATCH = 500

async function writeRun<R>(path: string, rows: R[]): Promise<void> {
  const out = createWriteStream(path)
  for (let i = 0; i < rows.length; i += OUT_BATCH) {
    const ok = out.write(
      rows
        .slice(i, i + OUT_BATCH)
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(''),
    )
    if (!ok) await once(out, 'drain')
  }
  out.end()
  await once(out, 'close')
}

/** One run being merged: its next row (null once read out). */
interface Head<R> {
  row: R
  lines: AsyncIterator<string>
}

/** A binary heap of the runs' next rows, smallest (by `cmp`, then run order: a stable merge) on top. */
class Heap<R> {
  private readonly a: Array<Head<R> & { run: number }> = []
  constructor(private readonly cmp: (x: R, y: R) => number) {}
  get size(): number {
    return this.a.length
  }
  private less(i: number, j: number): boolean {
    const c = this.cmp(this.a[i]!.row, this.a[j]!.row)
    return c < 0 || (c === 0 && this.a[i]!.run < this.a[j]!.run)
  }
  private swap(i: number, j: number): void {
    ;[this.a[i], this.a[j]] = [this.a[j]!, this.a[i]!]
  }
  push(h: Head<R> & { run: number }): void {
    this.a.push(h)
    for (let i = this.a.length - 1; i > 0 && this.less(i, (i - 1) >> 1); i = (i - 1) >> 1) this.swap(i, (i - 1) >> 1)
  }
  pop(): Head<R> & { run: number } {
    const top = this.a[0]!
    const last = this.a.pop()!
    if (this.a.length) {
      this.a[0] = last
      for (let i = 0; ;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < this.a.length && this.less(l, m)) m = l
        if (r < this.a.length && this.less(r, m)) m = r
        if (m === i) break
        this.swap(i, m)
        i = m
      }
    }
    return top
  }
}

/**
 * `batches`' rows in `cmp` order (a stable sort), in batches. `runRows`: rows per run kept in memory
 * (tests make it small).
 */
export async function* sortedBatches<R>(batches: AsyncIterable<R[]>, cmp: (a: R, b: R) => number, runRows = RUN_ROWS): AsyncGenerator<R[]> {
  let dir: string | null = null
  const runs: string[] = []
  try {
    let run: R[] = []
    for await (const batch of batches) {
      for (const r of batch) run.push(r)
      if (run.length < runRows) continue
      dir ??= await mkdtemp(join(tmpdir(), 'botmesh-coord-sort-'))
      const path = join(dir, `run-${runs.length}.jsonl`)
      await writeRun(path, run.sort(cmp))
      runs.push(path)
      run = []
    }
    run.sort(cmp)
    if (!runs.length) {
      for (let i = 0; i < run.length; i += OUT_BATCH) yield run.slice(i, i + OUT_BATCH)
      return
    }
    if (run.length) {
      const path = join(dir!, `run-${runs.length}.jsonl`)
      await writeRun(path, run)
      runs.push(path)
    }
    run = []
    yield* merge(runs, cmp)
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true })
  }
}

async function* merge<R>(runs: string[], cmp: (a: R, b: R) => number): AsyncGenerator<R[]> {
  const heap = new Heap<R>(cmp)
  // Each run's line iterator is made as its reader is, before any await: readline emits lines as
  // soon as its stream reads, and lines emitted before an iterator exists are lost.
  const readers = runs.map((path) => {
    const rl = createInterface({ input: createReadStream(path), crlfDelay: Infinity })
    return { rl, lines: rl[Symbol.asyncIterator]() }
  })
  try {
    for (const [run, { lines }] of readers.entries()) {
      const first = await lines.next()
      if (!first.done) heap.push({ row: JSON.parse(first.value) as R, lines, run })
    }
    let out: R[] = []
    while (heap.size) {
      const top = heap.pop()
      out.push(top.row)
      const next = await top.lines.next()
      if (!next.done) heap.push({ row: JSON.parse(next.value) as R, lines: top.lines, run: top.run })
      if (out.length >= OUT_BATCH) {
        yield out
        out = []
      }
    }
    if (out.length) yield out
  } finally {
    for (const { rl } of readers) rl.close()
  }
}
