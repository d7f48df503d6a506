import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A Lua script with its includes inlined, ready for EVALSHA. */
export interface LuaScript {
  name: string
  numberOfKeys: number
  source: string
  sha: string
}

let luaDir: string | undefined

/** The package's lua/ folder: found by walking up from this module (src/ in tests, dist/ when built). */
export function findLuaDir(): string {
  if (luaDir) return luaDir
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'lua')
    if (existsSync(join(candidate, 'turn-acquire-2.lua'))) return (luaDir = candidate)
    dir = dirname(dir)
  }
  throw new Error('botmesh-coord: cannot find the lua/ folder of the package')
}

const cache = new Map<string, LuaScript>()

/**
 * Load `lua/<name>.lua` (the key count is the number after the last dash), inlining each
 * `--@include x` line with `lua/includes/x.lua`. The `#!lua` shebang stays the first line, so Redis 7
 * refuses any access to a key outside the declared slot instead of working until the cluster reshards.
 */
export function loadScript(name: string): LuaScript {
  const hit = cache.get(name)
  if (hit) return hit
  const dir = findLuaDir()
  const m = /-(\d+)$/.exec(name)
  if (!m) throw new Error(`script name ${name} must end with -<number of keys>`)
  const raw = readFileSync(join(dir, `${name}.lua`), 'utf8')
  const included = new Set<string>()
  const source = raw.replace(/^--@include (\S+)\s*$/gm, (_, inc: string) => {
    if (included.has(inc)) return ''
    included.add(inc)
    return readFileSync(join(dir, 'includes', `${inc}.lua`), 'utf8')
  })
  if (!source.startsWith('#!lua')) throw new Error(`lua/${name}.lua must start with the #!lua shebang`)
  const folded = dropUnusedHelpers(foldTables(source, name))
  const script: LuaScript = {
    name,
    numberOfKeys: Number(m[1]),
    source: folded,
    sha: createHash('sha1').update(folded).digest('hex'),
  }
  cache.set(name, script)
  return script
}

/**
 * The field tables of the hashes — CHAT (lua/includes/chat.lua), LEAD (lead-fields.lua), LOCK
 * (lock.lua), CHECKPOINT (checkpoint.lua), HANDOVER (handover.lua), REPLICA (replica.lua), SCHEMA
 * (schema.lua) — and the turn scripts' status codes, TURN and RELEASE (lua/includes/status.lua).
 * Built as tables, they would be made again on every call of every script that includes them, and
 * each use would be a table lookup: the loader writes each `CHAT.<name>` as its string (each
 * `TURN.<name>` as its number) and leaves the table out (measured in callgrind: about 8k of a turn
 * script's 120k–130k instructions for CHAT). The include files stay the one definition
 * (test/integration/chat-schema.test.ts, hash-schema.test.ts).
 */
const FOLDED = ['CHAT', 'LEAD', 'LOCK', 'CHECKPOINT', 'HANDOVER', 'REPLICA', 'SCHEMA', 'TURN', 'RELEASE'] as const

function foldTables(source: string, name: string): string {
  let folded = source
  for (const table of FOLDED) folded = foldTable(folded, table, name)
  return folded
}

/** The source without its comments (a script's --[[ ]] header, -- to the end of a line). */
const code = (source: string): string => source.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--.*$/gm, '')

function foldTable(source: string, table: string, name: string): string {
  const found = new RegExp(`^local ${table} = \\{[^\\n]*\\n([\\s\\S]*?)^\\}\\n`, 'm').exec(source)
  if (!found) {
    // A use without the include would read a nil global at run time: refused here instead.
    if (new RegExp(`\\b${table}\\.\\w`).test(code(source))) throw new Error(`lua/${name}.lua uses ${table} without its include`)
    return source
  }
  const values = new Map<string, string>()
  for (const f of found[1]!.matchAll(/^\s*(\w+) = ('[^'\\]*'|-?\d+),/gm)) values.set(f[1]!, f[2]!)
  const folded = source.replace(found[0], '').replace(new RegExp(`\\b${table}\\.(\\w+)`, 'g'), (_, field: string) => {
    const value = values.get(field)
    if (value === undefined) throw new Error(`lua/${name}.lua: ${table}.${field} is not in its include`)
    return value.startsWith("'") ? value : `(${value})`
  })
  // Any other use (CHAT[x], pairs(CHAT)) would find no table: refused here, not at the first call.
  if (new RegExp(`\\b${table}\\s*[[(,)]`).test(code(folded))) {
    throw new Error(`lua/${name}.lua uses ${table} other than as ${table}.<name>`)
  }
  return folded
}

/**
 * The source without the top-level `local function`s it never calls (again until none is left: a
 * helper called only by a dropped one goes too). Every call of a script runs its whole chunk, and each
 * helper defined there is a closure made and collected again on every call — about 700 instructions
 * of redis-server each (callgrind: a free chat's take and release cost 5,000 less without the 7 helpers
 * their includes define and they never call). A top-level function ends at the first `end` in column 0
 * after it (the style of lua/: one that does not is refused); a name that appears anywhere else in the
 * code, even in a string, keeps its function.
 */
export function dropUnusedHelpers(source: string): string {
  let out = source
  for (;;) {
    const live = code(out)
    const unused = [...live.matchAll(/^local function (\w+)/gm)]
      .map((m) => m[1]!)
      .filter((f) => (live.match(new RegExp(`\\b${f}\\b`, 'g')) ?? []).length === 1)
    if (unused.length === 0) return out
    for (const f of unused) {
      const m = new RegExp(`^local function ${f}\\b[^\\n]*\\n([\\s\\S]*?)^end\\n`, 'm').exec(out)
      // Its body is indented: a line in column 0 inside it would be another statement of the chunk.
      if (!m || /^[^\s-]/m.test(m[1]!)) throw new Error(`lua: helper ${f} does not end with an \`end\` in column 0`)
      out = out.slice(0, m.index) + out.slice(m.index + m[0].length)
    }
  }
}
