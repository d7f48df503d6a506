/**
 * One bad record never blinds the operator: a heartbeat whose `info` is JSON nested 100,000 deep, a
 * checkpoint and a handover marker nested as deep, are each reported as that one corrupt record
 * (exit 8 where a command reads only it), and every listing, `doctor` and the exporter go on with
 * the rest: never exit 70, never "Redis down".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout, RedisCoordinator, RedisStore } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { startExporter } from '../helpers/exporter.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const DEEP = '['.repeat(100_000) + ']'.repeat(100_000)

describe('records nested 100,000 deep', () => {
  const prefix = uniquePrefix('deep')
  const keys = new KeyLayout(prefix, 'standalone')
  const base = ['--url', redisUrl(), '--prefix', prefix]
  const cli = (...args: string[]) => runCli([...base, ...args])
  let c: RedisCoordinator
  let store: RedisStore
  let raw: Redis
  beforeAll(async () => {
    c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-ok', leaseMs: 30_000 })
    await c.start()
    await c.acquireTurn('chat:fine')
    store = new RedisStore({ url: redisUrl(), prefix })
    await store.setCheckpointIf('chat:deep', { flow: 'order', step: 'address', state: { n: 1 } }, null)
    await store.setCheckpointIf('chat:fine', { flow: 'order', step: 'address', state: { n: 1 } }, null)
    raw = new Redis(redisUrl())
    await raw.hset(keys.chat('chat:deep').checkpoint, 'd', `{"state":${DEEP}}`)
    const now = Date.now()
    await raw.hset(keys.replica('pod-deep'), { id: 'pod-deep', inc: 'x', beat: now, exp: now + 60_000, info: DEEP, leases: DEEP })
    await raw.pexpire(keys.replica('pod-deep'), 60_000)
    await raw.zadd(keys.replicaIndex, now + 60_000, 'pod-deep') // indexed as a live replica: the dashboard and exporter read it
  })
  afterAll(async () => {
    await c?.stop()
    await store?.close()
    await raw?.quit()
  })

  it('replicas ls, leases ls and doctor show the others and report the deep heartbeat', async () => {
    const [replicas, replicasTable, leases, leasesTable, doctor] = await Promise.all([
      cli('replicas', 'ls', '--json'),
      cli('replicas', 'ls'),
      cli('leases', 'ls', '--json'),
      cli('leases', 'ls'),
      cli('doctor', '--json'),
    ])
    expect(replicas.code, replicas.stderr).toBe(0)
    const rj = parseJson<J>(replicas)
    expect(rj.replicas.map((x: J) => x.replicaId)).toEqual(['pod-ok'])
    expect(rj.corrupt).toContainEqual({ rawKey: keys.replica('pod-deep'), error: expect.stringMatching(/nested deeper than 64/) })
    expect(replicasTable.code, replicasTable.stderr).toBe(0)
    expect(replicasTable.stdout).toContain('pod-ok')
    expect(replicasTable.stderr).toContain(`corrupt: ${keys.replica('pod-deep')}`)
    expect(leases.code, leases.stderr).toBe(0)
    expect(JSON.stringify(parseJson<J>(leases))).toContain('chat:fine')
    expect(leasesTable.code, leasesTable.stderr).toBe(0)
    expect(leasesTable.stdout).toContain('chat:fine')
    expect(doctor.code, doctor.stderr).toBe(1)
    expect(parseJson<J>(doctor).checks.find((x: J) => x.id === 'corrupt')).toMatchObject({ status: 'fail' })
  })

  it('checkpoint inspect of a deep checkpoint says corrupt (exit 8); chat inspect and checkpoints ls, which read its size and not its data, go on', async () => {
    const [chat, cp, ls] = await Promise.all([
      cli('chat', 'inspect', 'chat:deep'),
      cli('checkpoint', 'inspect', 'chat:deep'),
      cli('checkpoints', 'ls', '--json'),
    ])
    expect(cp.code, cp.stderr).toBe(8)
    expect(cp.stderr).toMatch(/corrupt.*nested deeper than 64/)
    expect(chat.code, chat.stderr).toBe(0)
    expect(chat.stdout).toMatch(/checkpoint\s+\S+ at step/)
    expect(ls.code, ls.stderr).toBe(0)
    const lj = parseJson<J>(ls)
    expect(JSON.stringify(lj)).toContain('chat:fine')
    expect(JSON.stringify(lj)).toContain('chat:deep')
  })

  it('the exporter keeps botmesh_redis_up 1 and the other gauges', async () => {
    const exporter = await startExporter(base)
    try {
      expect(await exporter.sample('botmesh_redis_up')).toBe(1)
      expect(await exporter.sample('botmesh_corrupt_records')).toBeGreaterThanOrEqual(1)
      const { text } = await exporter.get('/metrics')
      expect(text).toMatch(/^botmesh_replicas(\{[^}]*\})? \d+/m)
    } finally {
      await exporter.stop()
    }
  })
})

describe('corrupt numbers', () => {
  const prefix = uniquePrefix('numbers')
  const keys = new KeyLayout(prefix, 'standalone')
  const base = ['--url', redisUrl(), '--prefix', prefix]
  const cli = (...args: string[]) => runCli([...base, ...args])
  const HUGE = '-1' + '1'.repeat(300) // -1.1e+300 as digits: passes a /^-?\d+$/ test
  let c: RedisCoordinator
  let raw: Redis
  beforeAll(async () => {
    c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-ok', leaseMs: 30_000 })
    await c.start()
    await c.acquireTurn('chat:fine')
    await c.acquireTurn('chat:bigfence')
    await c.tryLead('lead:fine')
    await c.tryLead('lead:huge')
    raw = new Redis(redisUrl())
    await raw.hset(keys.chat('chat:bigfence').state, 'f', '9007199254740993')
    await raw.hset(keys.lead('lead:huge'), 'exp', HUGE)
    const now = Date.now()
    const info = JSON.stringify({ host: 'h', pid: 1, version: 'v', startedAt: now, leaseMs: 1e300 })
    const stats = JSON.stringify({ turnsGranted: 'lots', waitingNow: 0, waitP99Ms: -1.1e300, leasesLost: 0, leadsHeld: 0, turnsHeld: 0 })
    const beats = {
      'pod-info': { info },
      'pod-stats': { stats },
      'pod-beat': { beat: '9007199254740993' },
      'pod-exp': { exp: HUGE },
    }
    for (const [id, fields] of Object.entries(beats)) {
      await raw.hset(keys.replica(id), { id, inc: 'x', beat: now, exp: now + 60_000, ...fields })
      await raw.pexpire(keys.replica(id), 60_000)
      await raw.zadd(keys.replicaIndex, now, id)
    }
  })
  afterAll(async () => {
    await c?.stop()
    await raw?.quit()
  })

  const LISTINGS = [
    ['replicas', 'ls'],
    ['chat', 'ls'],
    ['leases', 'ls'],
    ['provider', 'ls'],
  ]
  for (const args of LISTINGS) {
    it(`${args.join(' ')}: the corrupt records are reported, none shown with NaN, 'lots' or e+300`, async () => {
      const runs = await Promise.all([cli(...args, '-o', 'wide'), cli(...args, '--json')])
      const shown = /NaN|Infinity|lots|e\+\d|900719925474099/
      for (const r of runs) expect(r.code, r.stderr).toBe(0)
      expect(runs[0]!.stdout).not.toMatch(shown)
      // The document's rows (its `corrupt` array names the bad values, as the stderr lines do).
      expect(JSON.stringify({ ...parseJson<J>(runs[1]!), corrupt: [] })).not.toMatch(shown)
      expect(runs[0]!.stdout).toMatch(args[0] === 'replicas' ? /pod-ok/ : args[0] === 'provider' ? /^$|lead/ : /chat:fine/)
      const corrupt = parseJson<J>(runs[1]!).corrupt as J[]
      const named = (k: unknown) => corrupt.some((x) => x.rawKey === k)
      if (args[0] === 'chat' || args[0] === 'leases') {
        expect(named(keys.chat('chat:bigfence').state), JSON.stringify(corrupt)).toBe(true)
        expect(JSON.stringify(corrupt)).toContain('field f is not an integer below 2^53')
      }
      if (args[0] === 'leases') expect(named(keys.lead('lead:huge')), JSON.stringify(corrupt)).toBe(true)
      if (args[0] === 'replicas') {
        for (const id of ['pod-info', 'pod-stats', 'pod-beat', 'pod-exp']) expect(named(keys.replica(id)), id).toBe(true)
        expect(JSON.stringify(corrupt)).toContain('field stats.turnsGranted is not a number')
      }
    })
  }

  it('chat inspect of the chat whose fence is past 2^53 says corrupt (exit 8)', async () => {
    const r = await cli('chat', 'inspect', 'chat:bigfence')
    expect(r.code, r.stderr).toBe(8)
    expect(r.stderr).toContain('field f is not an integer below 2^53: "9007199254740993"')
  })
})
