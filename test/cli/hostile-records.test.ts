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

  it('chat inspect and checkpoint inspect of a deep checkpoint say corrupt (exit 8); checkpoints ls goes on', async () => {
    const [chat, cp, ls] = await Promise.all([
      cli('chat', 'inspect', 'chat:deep'),
      cli('checkpoint', 'inspect', 'chat:deep'),
      cli('checkpoints', 'ls', '--json'),
    ])
    expect(chat.code, chat.stderr).toBe(8)
    expect(chat.stderr).toMatch(/corrupt.*nested deeper than 64/)
    expect(cp.code, cp.stderr).toBe(8)
    expect(cp.stderr).toMatch(/corrupt.*nested deeper than 64/)
    expect(ls.code, ls.stderr).toBe(0)
    const lj = parseJson<J>(ls)
    expect(JSON.stringify(lj)).toContain('chat:fine')
    expect(JSON.stringify(lj.corrupt)).toContain('nested deeper than 64')
  })

  it('the exporter keeps botmesh_redis_up 1 and the other gauges', async () => {
    const exporter = await startExporter(base)
    try {
      expect(await exporter.sample('botmesh_redis_up')).toBe(1)
      const { text } = await exporter.get('/metrics')
      expect(text).toMatch(/^botmesh_replicas(\{[^}]*\})? \d+/m)
    } finally {
      await exporter.stop()
    }
  })
})
