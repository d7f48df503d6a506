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
  const script: LuaScript = {
    name,
    numberOfKeys: Number(m[1]),
    source,
    sha: createHash('sha1').update(source).digest('hex'),
  }
  cache.set(name, script)
  return script
}
