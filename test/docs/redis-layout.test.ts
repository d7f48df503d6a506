/**
 * docs/redis-layout.md is exact enough to write a compatible tool from: its example state, written by
 * hand with plain Redis commands (no library code), is read back by the CLI as the page says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { startRedis, type RedisProc } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { snippets, words } from './markdown.js'
import { DEFAULTS } from '../../src/index.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

describe('docs/redis-layout.md example, written by hand', () => {
  let redis: RedisProc
  let cli: (...args: string[]) => Promise<J>
  beforeAll(async () => {
    redis = await startRedis()
    const block = snippets('docs/redis-layout.md').find((s) => s.lang === 'redis')
    expect(block, 'the page has a ```redis example').toBeDefined()
    const client = new Redis(redis.url)
    const [s, us] = await client.time()
    const now = Number(s) * 1000 + Math.floor(Number(us) / 1000)
    for (const line of block!.code.split('\n').filter((l) => l.trim())) {
      const withTimes = line.replace(/<now([+-]\d+)?>/g, (_, d: string | undefined) => String(now + Number(d ?? 0)))
      const [cmd, ...args] = words(withTimes)
      await client.call(cmd!, ...args)
    }
    await client.quit()
    cli = async (...args: string[]) => {
      const r = await runCli(['--url', redis.url, '--prefix', 'shop', ...args, '--json'])
      expect(r.stderr, args.join(' ')).toBe('')
      expect(r.code, args.join(' ')).toBe(0)
      return parseJson<J>(r)
    }
  })
  afterAll(async () => {
    await redis?.stop()
  })

  it('replicas and leases', async () => {
    const [replicas, leases] = await Promise.all([cli('replicas', 'ls'), cli('leases', 'ls')])
    expect(replicas.replicas.map((r: J) => [r.replicaId, r.host, r.turnsHeld, r.waitingNow, r.oldestWaitMs, r.turnsShed])).toEqual([
      ['pod-a', 'pod-a.shop.svc', 1, 0, null, 0],
      ['pod-b', 'pod-b.shop.svc', 0, 1, 4100, 0],
    ])
    const byKey = Object.fromEntries(leases.leases.map((l: J) => [l.key, l]))
    expect(byKey['chat:42']).toMatchObject({ kind: 'chat', replicaId: 'pod-a', fence: 1795982440397002, holderAlive: true })
    expect(byKey['provider:whatsapp']).toMatchObject({ kind: 'provider', replicaId: 'pod-a', holderAlive: true })
    expect(byKey['invoice:run']).toMatchObject({ kind: 'lock', owner: 'vm:12015', fence: 1795982440628834 })
    expect(leases.corrupt).toEqual([])
  })

  it('one chat whole: holder, queue, checkpoint', async () => {
    const { chat } = await cli('chat', 'inspect', 'chat:42')
    expect(chat.holder).toMatchObject({ replicaId: 'pod-a', ticket: 1, alive: true })
    expect(chat.tickets).toEqual([expect.objectContaining({ ticket: 2, replicaId: 'pod-b', state: 'alive' })])
    expect(chat.checkpoint).toMatchObject({
      flow: 'order',
      step: 'address',
      revision: 1795982440639716,
      ephemeral: true,
      fingerprint: 'f1a2b3',
    })
    const { checkpoint } = await cli('checkpoint', 'inspect', 'chat:42')
    expect(checkpoint.state).toEqual({ items: [1, 2] })
    expect(checkpoint.answer).toEqual({ text: 'Calle 5' })
  })

  it('the provider lead with its standby, the lock, the marker, the event', async () => {
    const [{ provider }, locks, handovers, events] = await Promise.all([
      cli('provider', 'status', 'whatsapp'),
      cli('locks', 'ls'),
      cli('handover', 'ls'),
      cli('events'),
    ])
    expect(provider).toMatchObject({ key: 'provider:whatsapp', replicaId: 'pod-a', fence: 1795982440400578 })
    expect(provider.standbys.map((s: J) => s.replicaId)).toEqual(['pod-b'])
    expect(locks.locks).toEqual([expect.objectContaining({ key: 'invoice:run', held: true, owner: 'vm:12015' })])
    expect(handovers.handovers).toEqual([expect.objectContaining({ key: 'chat:7', name: 'survey', replicaId: 'pod-c', ownerAlive: false })])
    const { handover } = await cli('handover', 'inspect', 'chat:7')
    expect(handover).toMatchObject({
      incarnation: 'e34fe49a3eaeeab9',
      ownerStatus: 'dead',
      expiresInMs: null,
      dataBytes: 0,
      data: null,
    })
    // `since` is <now-20000>: it has waited 20 s (and the test's own time since).
    expect(handover.waitingForMs).toBeGreaterThanOrEqual(20_000)
    expect(events.events).toEqual([expect.objectContaining({ type: 'leader', replicaId: 'pod-a' })])
    expect(events.events[0].event.name).toBe('provider:whatsapp')
  })

  it('the page documents the formats the code writes', () => {
    const page = readFileSync(join(__dirname, '../../docs/redis-layout.md'), 'utf8')
    // The wake channel carries a grant as JSON, and -|<key> for a revoked turn or a lead event.
    expect(page).toContain('{"t":"<ticket>","q":"<requestId>","f":"<fence>","l":<leaseMs>,"k":"<raw chat state key>"')
    expect(page).toContain('`-\\|<raw chat state key>`')
    expect(page).toContain('`server-changed`')
    // The SCAN batch the reader uses.
    expect(page).toContain(`COUNT ${DEFAULTS.scanCount}`)
  })
})
