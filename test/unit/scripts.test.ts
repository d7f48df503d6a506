/**
 * The typed script registry against lua/: every script has exactly one definition, whose KEYS and
 * ARGV are the ones its comment block documents and its body reads, and a call's arguments are
 * written in that order.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ALL_SCRIPTS, TURN_ACQUIRE } from '../../src/scripts/registry.js'
import { encodeArgs } from '../../src/scripts/define.js'
import type { ScriptRunner } from '../../src/scripts/runner.js'
import { dropUnusedHelpers, findLuaDir } from '../../src/scripts/load.js'

const luaDir = findLuaDir()
const scripts = readdirSync(luaDir)
  .filter((f) => f.endsWith('.lua'))
  .map((f) => f.replace(/\.lua$/, ''))

/** The highest n of `WHAT[n]` in a text (0 when none). */
const highest = (text: string, what: 'KEYS' | 'ARGV') =>
  Math.max(0, ...[...text.matchAll(new RegExp(`${what}\\[(\\d+)\\]`, 'g'))].map((m) => Number(m[1])))

describe('script registry', () => {
  it('defines every script of lua/ once, and nothing else', () => {
    const names = ALL_SCRIPTS.map((d) => d.name)
    expect(new Set(names).size).toBe(names.length)
    expect([...names].sort()).toEqual([...scripts].sort())
  })

  for (const def of ALL_SCRIPTS) {
    it(`${def.name}: KEYS and ARGV as its comment block documents and its body reads`, () => {
      const source = readFileSync(join(luaDir, `${def.name}.lua`), 'utf8')
      const header = /--\[\[([\s\S]*?)\]\]/.exec(source)?.[1] ?? ''
      const body = source.slice(source.indexOf(']]') + 2)
      const keyCount = Number(/-(\d+)$/.exec(def.name)![1])
      expect(def.keys.length).toBe(keyCount)
      expect(highest(header, 'KEYS')).toBe(keyCount)
      const argc = Object.keys(def.argv).length
      expect(highest(header, 'ARGV')).toBe(argc)
      expect(highest(body, 'ARGV')).toBeLessThanOrEqual(argc)
      expect(highest(body, 'KEYS')).toBeLessThanOrEqual(keyCount)
    })
  }

  it('drops the helpers a script never calls, and those only they call; refuses a helper whose end it cannot find', () => {
    const lua = [
      'local function used(x)',
      '  return x -- not outer(x): a name in a comment is no call',
      'end',
      'local function inner(x)',
      '  return x',
      'end',
      'local function outer(x)',
      '  return inner(x)',
      'end',
      "return used('x')",
      '',
    ].join('\n')
    expect(dropUnusedHelpers(lua)).toBe(
      ['local function used(x)', '  return x -- not outer(x): a name in a comment is no call', 'end', "return used('x')", ''].join('\n'),
    )
    expect(() => dropUnusedHelpers('local function f(x) return x end\nlocal function g()\n  return 1\nend\nreturn g()\n')).toThrow(
      /helper f/,
    )
  })

  it('writes a call’s arguments in the script’s ARGV order, "not given" (null, or left out) as empty strings', () => {
    expect(
      encodeArgs(TURN_ACQUIRE.argv, {
        requestId: 'inc:1',
        wakeChannelPrefix: 'p:wake:',
        ticket: null,
        idleTtlMs: 86_400_000.7,
        leaseMs: 15_000,
        incarnation: 'inc',
        replicaId: 'r1',
      }),
    ).toEqual(['r1', 'inc', '15000', '86400000', '', 'p:wake:', 'inc:1', ''])
  })

  it('refuses at compile time an argument the script does not read, a wrong type, a missing key (npm run typecheck)', () => {
    // Never run: these lines are checked by tsc, and each @ts-expect-error fails the check if the call compiled.
    const calls = (runner: ScriptRunner) => {
      const keys = { state: 'p:c:x', queue: 'p:q:x' }
      const args = {
        replicaId: 'r',
        incarnation: 'i',
        leaseMs: 1500,
        idleTtlMs: 1,
        ticket: null,
        wakeChannelPrefix: 'p:wake:',
        requestId: 'i:1',
      }
      void runner.call(TURN_ACQUIRE, keys, args)
      // @ts-expect-error a 9th argument: turn-acquire-2 reads eight (the last, epoch, may be left out)
      void runner.call(TURN_ACQUIRE, keys, { ...args, retry: '1' })
      const { requestId: _left, ...withoutRequest } = args
      // @ts-expect-error requestId is required: only a `?` kind may be left out
      void runner.call(TURN_ACQUIRE, keys, withoutRequest)
      // @ts-expect-error leaseMs is a number
      void runner.call(TURN_ACQUIRE, keys, { ...args, leaseMs: '1500' })
      // @ts-expect-error KEYS[2] (queue) is missing
      void runner.call(TURN_ACQUIRE, { state: 'p:c:x' }, args)
    }
    expect(typeof calls).toBe('function')
  })
})
