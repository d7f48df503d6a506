/**
 * Hostile sizes, written by hand as docs/redis-layout.md describes the keys: a chat with a million
 * queued tickets, a lead with 100,000 candidacies, a checkpoint of 50 MB. Every read command stays
 * bounded in what it asks Redis — no command of theirs reaches Redis's SLOWLOG at 10 ms — and says
 * what its caps left out. On a private redis-server, so the SLOWLOG holds only this file's commands.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout } from '../../src/index.js'
import { startRedis, uniquePrefix, type RedisProc } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const TICKETS = 1_000_000
const CANDIDATES = 100_000
/** Read commands a SLOWLOG entry of which the test sends again to time it alone. */
const REPLAYABLE = new Set([
  'hscan',
  'zscan',
  'scan',
  'hgetall',
  'hmget',
  'hget',
  'hlen',
  'hstrlen',
  'zcard',
  'zrange',
  'get',
  'mget',
  'pttl',
  'type',
])
const CHECKPOINT_BYTES = 50_000_000

describe('a million tickets, 100,000 candidacies, a 50 MB checkpoint', () => {
  let redis: RedisProc
  let raw: Redis
  const prefix = uniquePrefix('sizes')
  const keys = new KeyLayout(prefix, 'standalone')
  const cli = (...args: string[]) => runCli(['--url', redis.url, '--prefix', prefix, ...args], { timeoutMs: 60_000 })

  beforeAll(async () => {
    redis = await startRedis()
    raw = new Redis(redis.url)
    const [s] = await raw.time()
    const now = Number(s) * 1000
    await raw.hset(keys.schema, 'version', '1', 'layout', 'standalone', 'createdAt', String(now))
    // The chat: held by a replica that has no heartbeat, a million tickets of another behind it.
    const chat = keys.chat('chat:big')
    await raw.hset(chat.state, { n: TICKETS + 1, f: 1795982440397002, h: 'pod-a', hi: 'inca', ht: 1, exp: now + 60_000, g: now, lr: now })
    for (let from = 2; from <= TICKETS + 1; from += 20_000) {
      const fields: string[] = []
      const members: Array<string | number> = []
      for (let t = from; t < Math.min(from + 20_000, TICKETS + 2); t++) {
        fields.push(`t:${t}`, `${now + 60_000}|${now - 1000}|incb|pod-b`)
        members.push(t, String(t))
      }
      await raw
        .pipeline()
        .hset(chat.state, ...fields)
        .zadd(chat.queue, ...members)
        .exec()
    }
    // The lead: a leader with no heartbeat and 100,000 standing replicas.
    const lead = keys.lead('provider:big')
    await raw.hset(lead, { f: 1795982440400578, h: 'pod-a', hi: 'inca', exp: now + 60_000, g: now, lr: now })
    for (let from = 0; from < CANDIDATES; from += 20_000) {
      const fields: string[] = []
      for (let i = from; i < from + 20_000; i++) fields.push(`c:inc${i}`, `${now + 60_000}|pod-${i}`)
      await raw.hset(lead, ...fields)
    }
    // The checkpoint: 50 MB of state.
    const state = JSON.stringify({ state: { s: 'x'.repeat(CHECKPOINT_BYTES) } })
    await raw.hset(keys.chat('chat:heavy').checkpoint, { rev: 1, flow: 'order', step: 'address', at: now, d: state })
    expect(await raw.hlen(chat.state)).toBe(TICKETS + 8)
  }, 120_000)
  afterAll(async () => {
    await raw?.quit()
    await redis?.stop()
  })

  it('no read command spends 10 ms of Redis time in one command', async () => {
    await raw.config('SET', 'slowlog-log-slower-than', '10000')
    const commands = [
      ['chat', 'ls'],
      ['leases', 'ls'],
      ['chat', 'inspect', 'chat:big'],
      ['chat', 'inspect', 'chat:big', '--tickets', '2000'],
      ['provider', 'ls'],
      ['provider', 'status', 'big'],
      ['checkpoints', 'ls'],
      ['chat', 'inspect', 'chat:heavy'],
      ['doctor'],
      // A postmortem capture reads every hash whole: one with a million fields by HSCAN pages.
      ['snapshot', '-o', join(mkdtempSync(join(tmpdir(), 'sizes-')), 'state.json.gz')],
    ]
    /**
     * How long Redis takes to run `args` (a command from the SLOWLOG) on its own: the least of three
     * runs, as SLOWLOG times them. Null: not a read this can send again (a script, or arguments the
     * SLOWLOG cut short).
     */
    const ownTime = async (args: string[]): Promise<number | null> => {
      const [name, ...rest] = args
      if (!REPLAYABLE.has(name!.toLowerCase()) || rest.some((a) => /^\.\.\. \(\d+ more (arguments|bytes)\)$/.test(a))) return null
      await raw.config('SET', 'slowlog-log-slower-than', '0')
      await raw.slowlog('RESET')
      for (let i = 0; i < 3; i++) await raw.call(name!, ...rest)
      const runs = (await raw.slowlog('GET', 10)) as Array<[number, number, number, string[]]>
      await raw.config('SET', 'slowlog-log-slower-than', '10000')
      return Math.min(...runs.filter((e) => e[3][0]!.toLowerCase() === name!.toLowerCase()).map((e) => e[2]))
    }
    /**
     * The commands of one run of `c` that reached the SLOWLOG (the test's own CONFIG and SLOWLOG left
     * out) and are slow when Redis runs them again on its own: a shared machine can stall Redis itself
     * for a moment (its process not scheduled), and then any command is slow once.
     */
    const slowRun = async (c: string[]) => {
      await raw.slowlog('RESET')
      const r = await cli(...c)
      // doctor: 1 for the dead holder and the setup it finds unsafe; never 4 (Redis unreachable).
      expect(r.code, `${c.join(' ')}: ${r.stderr}`).toBeLessThanOrEqual(1)
      const logged = ((await raw.slowlog('GET', 100)) as Array<[number, number, number, string[]]>).filter(
        (e) => !/^(slowlog|config)$/i.test(e[3][0]!),
      )
      const slow: string[] = []
      for (const [, , us, args] of logged) {
        const alone = await ownTime(args)
        if (alone === null || alone >= 10_000)
          slow.push(`${c.join(' ')}: ${us} µs (alone: ${alone ?? 'not replayed'}): ${args.slice(0, 4).join(' ').slice(0, 120)}`)
      }
      return slow
    }
    const slow: string[] = []
    for (const c of commands) {
      // What is slow twice in a row is the command's.
      if ((await slowRun(c)).length) slow.push(...(await slowRun(c)))
    }
    expect(slow).toEqual([])
  }, 240_000)

  it('chat inspect shows the head of the queue and says how long it is', async () => {
    const [table, json, more] = await Promise.all([
      cli('chat', 'inspect', 'chat:big'),
      cli('--json', 'chat', 'inspect', 'chat:big'),
      cli('--json', 'chat', 'inspect', 'chat:big', '--tickets', '3'),
    ])
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toContain(`queue (${TICKETS}, in grant order; showing the first 100 of ${TICKETS}: --tickets <n> for more`)
    const j = parseJson<J>(json).chat
    expect(j.queueLength).toBe(TICKETS)
    expect(j.tickets).toHaveLength(100)
    expect(j.tickets[0]).toMatchObject({ ticket: 2, replicaId: 'pod-b' })
    expect(parseJson<J>(more).chat.tickets.map((t: J) => t.ticket)).toEqual([2, 3, 4])
    // Past one call's 500 tickets: the next pages follow on, in grant order, none missing or twice.
    const long = await cli('--json', 'chat', 'inspect', 'chat:big', '--tickets', '1234')
    expect(long.code, long.stderr).toBe(0)
    expect(parseJson<J>(long).chat.tickets.map((t: J) => t.ticket)).toEqual(Array.from({ length: 1234 }, (_, i) => i + 2))
    const refused = await cli('chat', 'inspect', 'chat:big', '--tickets', '1000000')
    expect(refused.code).toBe(2)
  }, 60_000)

  it('chat ls and doctor say their stale-ticket count covers the head of the queue only', async () => {
    const [table, json, doctor] = await Promise.all([cli('chat', 'ls'), cli('--json', 'chat', 'ls'), cli('--json', 'doctor')])
    expect(table.stdout).toMatch(new RegExp(`chat:big .* ${TICKETS} .* 16 in first 16 `))
    const row = parseJson<J>(json).chats.find((c: J) => c.key === 'chat:big')
    expect(row).toMatchObject({ queueLength: TICKETS, staleTickets: 16, ticketsRead: 16 })
    const check = parseJson<J>(doctor).checks.find((c: J) => c.id === 'stale-tickets')
    expect(check.detail).toContain(
      `only the first 16 tickets of each queue are read: 1 longer queue(s) have ${TICKETS - 16} more, not judged`,
    )
  }, 60_000)

  it('provider status and provider ls say how many candidacies they did not read', async () => {
    const [status, json, ls] = await Promise.all([
      cli('provider', 'status', 'big'),
      cli('--json', 'provider', 'status', 'big'),
      cli('provider', 'ls'),
    ])
    expect(status.code, status.stderr).toBe(0)
    expect(status.stdout).toMatch(new RegExp(`among the first \\d+ of ${CANDIDATES} candidacies`))
    const p = parseJson<J>(json).provider
    expect(p.candidates).toBe(CANDIDATES)
    expect(p.candidatesRead).toBeGreaterThanOrEqual(1000)
    expect(p.candidatesRead).toBeLessThan(CANDIDATES)
    expect(ls.stdout).toMatch(new RegExp(`of the first \\d+ of ${CANDIDATES} candidacies read`))
  }, 60_000)

  it('checkpoints ls and chat inspect give a checkpoint data size, not its data', async () => {
    const [ls, inspect] = await Promise.all([cli('--json', 'checkpoints', 'ls'), cli('chat', 'inspect', 'chat:heavy')])
    expect(ls.code, ls.stderr).toBe(0)
    const row = parseJson<J>(ls).checkpoints.find((c: J) => c.key === 'chat:heavy')
    expect(row.dataBytes).toBeGreaterThan(CHECKPOINT_BYTES)
    expect(ls.stdout.length).toBeLessThan(10_000)
    expect(inspect.stdout).toMatch(/data\s+500000\d\d bytes \(not read here/)
  }, 60_000)
})
