/**
 * Strings from outside never reach the operator's terminal raw. Real replicas write chat keys,
 * replica ids, lead and lock names, flow and step names, answers, handover markers and audit
 * reasons full of escape sequences (OSC title and clipboard, clear screen, colours, blink), bidi
 * controls, zero-width characters, C1 controls, emoji, backslashes and 8 KiB strings (fixed
 * ones and seeded random ones); every read command in every human format, the write commands'
 * plans and the error lines must show them escaped: no control byte but newlines (and, where
 * the tool colours, its SGR colours), no bidi or invisible character. JSON keeps the exact value;
 * a key shown escaped is passed back to `chat inspect` and `chat release --dry-run`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli, type CliResult } from '../helpers/cli.js'
import { visible, fromVisible } from '../../commands/output/safe-text.js'
import { FLOW, KEYS, REPLICAS, SEED, assertClean, hostileState, type HostileState } from './untrusted-fixture.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const clean = (where: string, r: CliResult, colour = false) => {
  assertClean(`${where} (stdout)`, r.stdout, colour)
  assertClean(`${where} (stderr)`, r.stderr, colour)
}

describe(`untrusted text on the terminal (seed ${SEED})`, () => {
  const url = redisUrl()
  const prefix = uniquePrefix('untrusted')
  const cli = (args: string[], env?: Record<string, string | undefined>) => runCli(['--url', url, '--prefix', prefix, ...args], { env })
  let state: HostileState
  beforeAll(async () => {
    state = await hostileState(url, prefix)
  })
  afterAll(async () => {
    await state?.stop()
  })

  const READS = [
    ['replicas', 'ls'],
    ['leases', 'ls'],
    ['chat', 'ls'],
    ['provider', 'ls'],
    ['checkpoints', 'ls'],
    ['handover', 'ls'],
    ['locks', 'ls'],
    ['events'],
  ]

  for (const args of READS) {
    it(`${args.join(' ')}: in every human format, with and without colours, prints nothing raw`, async () => {
      const runs = await Promise.all([
        cli(args),
        cli([...args, '-o', 'wide']),
        cli([...args, '-o', 'name']),
        cli([...args, '-o', 'wide'], { NO_COLOR: undefined, FORCE_COLOR: '1' }),
      ])
      runs.forEach((r, i) => {
        expect(r.code, `${args.join(' ')} #${i}: ${r.stderr}`).toBe(0)
        clean(`${args.join(' ')} #${i}`, r, i >= 3)
      })
    })
  }

  it('tables cut long values with a visible marker; inspect shows them whole, escaped', async () => {
    const ls = await cli(['chat', 'ls', '-o', 'wide'])
    expect(ls.stdout).toMatch(/long:x+…\[\+\d+\]/)
    expect(Math.max(...ls.stdout.split('\n').map((l) => l.length))).toBeLessThan(400)
    const inspect = await cli(['chat', 'inspect', KEYS.long])
    expect(inspect.code, inspect.stderr).toBe(0)
    expect(inspect.stdout).toContain(KEYS.long)
    const cp = await cli(['checkpoint', 'inspect', KEYS.long])
    expect(cp.stdout).toContain(`f${'y'.repeat(8000)}`)
  })

  it('JSON keeps the exact values (C1, bidi and invisible characters as \\u escapes)', async () => {
    const r = await cli(['chat', 'ls', '-o', 'json'])
    clean('chat ls -o json', r)
    const keys = parseJson<J>(r).chats.map((c: J) => c.key)
    expect(keys.sort()).toEqual(Object.values(KEYS).sort())
    const jl = await cli(['replicas', 'ls', '-o', 'jsonl'])
    clean('replicas ls -o jsonl', jl)
    expect(
      jl.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).replicaId)
        .sort(),
    ).toEqual(Object.values(REPLICAS).sort())
  })

  it('listings name every key in the form commands take back', async () => {
    const names = (await cli(['chat', 'ls', '-o', 'name'])).stdout.trim().split('\n')
    expect(names.map((n) => fromVisible(n.replace(/^chat\//, ''))).sort()).toEqual(Object.values(KEYS).sort())
    expect(names.sort()).toEqual(
      Object.values(KEYS)
        .map((k) => `chat/${visible(k)}`)
        .sort(),
    )
  })

  for (const [label, key] of Object.entries(KEYS)) {
    it(`chat inspect and chat release --dry-run take the ${label} key as shown, and print nothing raw`, async () => {
      const shown = visible(key)
      const colour = { NO_COLOR: undefined, FORCE_COLOR: '1' }
      const [inspect, explain, json, release] = await Promise.all([
        cli(['chat', 'inspect', shown]),
        cli(['chat', 'inspect', shown, '--explain'], colour),
        cli(['chat', 'inspect', shown, '--json']),
        cli(['chat', 'release', shown, '--dry-run'], colour),
      ])
      for (const [r, c, what] of [
        [inspect, false, 'inspect'],
        [explain, true, 'inspect --explain'],
        [release, true, 'release --dry-run'],
      ] as const) {
        expect(r.code, r.stderr).toBe(0)
        clean(`chat ${what} ${label}`, r, c)
      }
      expect(inspect.stdout).toContain(shown)
      expect(parseJson<J>(json).chat.key).toBe(key)
      expect(release.stdout).toContain('release the turn of ')
      // eslint-disable-next-line no-control-regex
      expect(release.stdout.replace(/\u001b\[[0-9;]*m/g, '')).toContain(`release the turn of ${shown}`)
    })
  }

  it('checkpoint inspect and provider status print nothing raw', async () => {
    const cp = await cli(['checkpoint', 'inspect', visible(KEYS.osc)])
    expect(cp.code, cp.stderr).toBe(0)
    clean('checkpoint inspect', cp)
    expect(cp.stdout).toContain(visible(FLOW))
    // state and answer are shown as JSON (escaped by JSON, the rest as \u escapes)
    expect(cp.stdout).toContain('\\u001b[2J\\u202eanswer')
    const leads = parseJson<J>(await cli(['provider', 'ls', '--json'])).providers as J[]
    expect(leads.length).toBeGreaterThan(0)
    const status = await Promise.all(leads.map((l) => cli(['provider', 'status', visible(l.key)])))
    for (const st of status) {
      expect(st.code, st.stderr).toBe(0)
      clean('provider status', st)
    }
  })

  it('the plans of write commands and error lines that quote a key print nothing raw', async () => {
    const lock = parseJson<J>(await cli(['locks', 'ls', '--json'])).locks[0] as J
    const lead = parseJson<J>(await cli(['provider', 'ls', '--json'])).providers[0] as J
    const runs = await Promise.all([
      cli(['locks', 'release', visible(lock.key), '--dry-run']),
      cli(['provider', 'yield', visible(lead.key), '--dry-run']),
      cli(['checkpoint', 'rm', visible(KEYS.osc), '--dry-run']),
      cli(['replicas', 'evict', visible(REPLICAS.b), '--dry-run']),
      cli(['chat', 'skip', visible(KEYS.osc), '99', '--dry-run']),
      cli(['handover', 'inspect', visible(KEYS.bidi)]),
      cli(['handover', 'rm', visible(KEYS.bidi), '--dry-run']),
      cli(['checkpoint', 'extend', visible(KEYS.osc), '--ttl', '1h', '--dry-run']),
      cli(['checkpoints', 'rm', '--flow', visible(FLOW), '--dry-run']),
      cli(['chat', 'inspect', 'nope:\u001b]0;x\u0007\u202e']),
      cli(['checkpoint', 'inspect', 'nope:\u001b[2J']),
      cli(['chat', 'release', 'nope:\u001b[2J\u2066']),
      cli(['doctor']),
      cli(['watch', '--jsonl', '--count', '1']),
    ])
    runs.forEach((r, i) => clean(`write/error #${i}`, r))
    expect(runs.slice(0, 4).map((r) => r.code)).toEqual([0, 0, 0, 0])
    expect(runs.slice(5, 9).map((r) => [r.code, r.stderr])).toEqual([0, 0, 0, 0].map((c) => [c, '']))
    expect(runs[5]!.stdout).toContain(visible(KEYS.bidi))
    expect(runs[8]!.stdout).toContain(visible(KEYS.osc))
    expect(runs[9]!.stderr).toContain('nope:\\x1b]0;x\\x07\\u202e')
  })

  it('an audit reason read back is escaped in events', async () => {
    const r = await cli(['chat', 'release', visible(KEYS.emoji), '--yes', '--reason', 'because\u001b]0;why\u0007\u202e'])
    expect(r.code, r.stderr).toBe(0)
    clean('chat release', r)
    const ev = await cli(['events', '-o', 'wide'])
    clean('events -o wide', ev)
    expect(ev.stdout).toContain(visible(KEYS.emoji))
    expect(ev.stdout).toContain(`reason "${visible('because\u001b]0;why\u0007\u202e')}"`)
  })
})
