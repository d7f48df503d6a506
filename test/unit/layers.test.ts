/**
 * The shape of src/: no import cycles (type-only imports count), no file in src/coordinator/ above
 * ~350 lines, and every import goes down the layers — base → keys, wire → connection, pure
 * state → scripts → coordinator, reads → store, admin, testing → entry points. The library never
 * imports the CLI's dependencies.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')
const COMMANDS = resolve(dirname(fileURLToPath(import.meta.url)), '../../commands')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) return sourceFiles(p)
    return /\.tsx?$/.test(name) ? [p] : []
  })
}

/** Module (path under `root`, no extension) → what it imports: relative modules resolved, packages as written. */
function importGraph(root = SRC): Map<string, { local: string[]; packages: string[] }> {
  const graph = new Map<string, { local: string[]; packages: string[] }>()
  for (const file of sourceFiles(root)) {
    const text = readFileSync(file, 'utf8')
    const specs = [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!)
    const local: string[] = []
    const packages: string[] = []
    for (const spec of specs) {
      if (spec.startsWith('.')) local.push(relative(root, resolve(dirname(file), spec)).replace(/\.js$/, ''))
      else packages.push(spec)
    }
    graph.set(relative(root, file).replace(/\.tsx?$/, ''), { local, packages })
  }
  return graph
}

/** Strongly connected components with more than one module (or a module importing itself): the cycles. */
function cycles(graph: Map<string, { local: string[] }>): string[][] {
  let index = 0
  const idx = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  const visit = (v: string): void => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v)?.local ?? []) {
      if (!graph.has(w)) continue
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!))
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1 || graph.get(v)!.local.includes(v)) out.push(scc.sort())
    }
  }
  for (const v of graph.keys()) if (!idx.has(v)) visit(v)
  return out
}

/** The layers of src/, lowest first: a module imports from its own layer (same folder) or below. */
const LAYERS: Array<[RegExp, number]> = [
  [/^(defaults|duration|clock|version|url|bytes|columns)$|^errors\//, 0],
  [/^keys$|^wire\//, 1],
  [/^state\/(views|health)\/|^state\/suggested-commands$/, 2], // the parts views.ts and health.ts re-export
  [/^connection$|^state\/(decode|health|views|coverage|checkpoint-incidents|snapshot-diff|bounded)$|^state\/doctor\//, 2],
  [/^connection\//, 2], // the parts connection.ts re-exports
  [/^scripts\//, 3],
  [/^coordinator\/|^state\/(reader|dashboard|source|records|snapshot|snapshot-read|snapshot-scanner|packed-records)$/, 4],
  [/^state\/(walker|reach|listing|source-api|source-batch|read-script)$/, 4], // the parts of the reader and of its source
  [/^(store|admin)\/|^testing\/(memory-core|memory-turns|memory-leads|memory-hub|memory-coordinator)$|^metrics$/, 5],
  [/^testing\/memory-store$/, 6],
  [/^index$|^testing\/index$/, 7],
]
/** Decoders and views of snapshots: no I/O, no client, nothing above the wire types. */
const PURE = /^state\/(decode|health|views|checkpoint-incidents|snapshot-diff|suggested-commands)$|^state\/(views|health|doctor)\//

function layerOf(module: string): number {
  const hit = LAYERS.find(([re]) => re.test(module))
  if (!hit) throw new Error(`src/${module} has no layer in test/unit/layers.test.ts: give it one`)
  return hit[1]
}

describe('src/ layout', () => {
  const graph = importGraph()

  it('has no import cycles', () => {
    expect(graph.size).toBeGreaterThan(30)
    expect(cycles(graph)).toEqual([])
  })

  it('finds a cycle when there is one (the check can fail)', () => {
    const g = new Map([
      ['a', { local: ['b'] }],
      ['b', { local: ['c'] }],
      ['c', { local: ['a'] }],
      ['d', { local: ['a'] }],
    ])
    expect(cycles(g)).toEqual([['a', 'b', 'c']])
  })

  it('imports only downwards through the layers; the pure state modules import no I/O', () => {
    const upward: string[] = []
    for (const [from, m] of graph) {
      for (const to of m.local) {
        const [a, b] = [layerOf(from), layerOf(to)]
        const sameGroup = from.split('/')[0] === to.split('/')[0]
        if (b > a || (b === a && a > 0 && !sameGroup)) upward.push(`${from} (layer ${a}) imports ${to} (layer ${b})`)
        if (PURE.test(from) && !PURE.test(to) && b > 1) upward.push(`${from} is pure but imports ${to}`)
      }
      if (PURE.test(from) && m.packages.length) upward.push(`${from} is pure but imports ${m.packages.join(', ')}`)
    }
    expect(upward).toEqual([])
  })

  it('keeps every file of src/coordinator/ readable in one sitting (~350 lines at most)', () => {
    const long = sourceFiles(join(SRC, 'coordinator'))
      .map((f) => ({ file: relative(SRC, f), lines: readFileSync(f, 'utf8').split('\n').length }))
      .filter((f) => f.lines > 360)
    expect(long).toEqual([])
  })

  it('never imports the CLI or its dependencies', () => {
    const offending = [...graph].filter(([, m]) => m.packages.some((p) => /^(react|ink|commander|chalk|cli-table3)(\/|$)/.test(p)))
    expect(offending.map(([name]) => name)).toEqual([])
    const intoCommands = [...graph].filter(([, m]) => m.local.some((l) => l.startsWith('..')))
    expect(intoCommands.map(([name]) => name)).toEqual([])
  })
})

describe('commands/ layout', () => {
  const graph = importGraph(COMMANDS)

  it('has no import cycles (type-only imports count)', () => {
    expect(cycles(graph)).toEqual([])
  })

  it('reaches the library only through commands/lib.ts and lib-io.ts (its one import point)', () => {
    const direct = [...graph]
      .filter(([name]) => !/^lib(-io|-write)?$/.test(name))
      .flatMap(([name, m]) => m.local.filter((l) => l.startsWith('../src/')).map((l) => `${name} imports ${l}`))
    expect(direct).toEqual([])
  })
})
