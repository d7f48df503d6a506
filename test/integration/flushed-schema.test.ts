/**
 * The keys flushed under running replicas (FLUSHALL, a restart without persistence): the schema
 * record is written again by the next beat that finds its replica's record gone, so `doctor` does
 * not read the prefix as one no replica ever started while replicas run.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCoordinator } from '../../src/index.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { startRedis, type RedisProc } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

describe('a flushed prefix under running replicas', () => {
  let redis: RedisProc
  let raw: Redis
  const replicas: RedisCoordinator[] = []
  const prefix = 'shop'
  beforeAll(async () => {
    redis = await startRedis()
    raw = new Redis(redis.url)
    for (const id of ['pod-a', 'pod-b']) {
      const c = new RedisCoordinator({ url: redis.url, prefix, replicaId: id, leaseMs: 600 })
      await c.start()
      replicas.push(c)
    }
  }, 60_000)
  afterAll(async () => {
    await Promise.all(replicas.map((c) => c.stop().catch(() => {})))
    raw?.disconnect()
    await redis?.stop()
  })

  it('FLUSHALL: the schema record is back within a renewal cycle, and doctor sees the live replicas', async () => {
    const before = await raw.hgetall(`${prefix}:schema`)
    expect(before).toMatchObject({ version: expect.any(String), layout: 'standalone' })
    await raw.flushall()
    expect(await raw.exists(`${prefix}:schema`)).toBe(0)
    const after = await until(
      async () => {
        const h = await raw.hgetall(`${prefix}:schema`)
        return h.version ? h : null
      },
      3_000,
      'the schema record written again',
    )
    expect(after).toMatchObject({ version: before.version, layout: 'standalone' })
    await until(async () => (await raw.zcard(`${prefix}:replicas`)) === 2, 3_000, 'both replicas beating again')
    const r = await runCli(['--url', redis.url, '--prefix', prefix, 'doctor', '--json'])
    const checks = parseJson<J>(r).checks as J[]
    expect(checks.find((c) => c.id === 'schema')).toMatchObject({ status: 'ok' })
    expect(JSON.stringify(checks)).not.toMatch(/no replica has started/)
    expect(checks.find((c) => c.id === 'replicas')?.detail).toMatch(/2 live replica/)
  })

  it('the schema record alone deleted: doctor says it was deleted, not that no replica started', async () => {
    await raw.del(`${prefix}:schema`)
    const r = await runCli(['--url', redis.url, '--prefix', prefix, 'doctor', '--json'])
    const schema = (parseJson<J>(r).checks as J[]).find((c) => c.id === 'schema')
    expect(schema).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/holds botmesh-coord state: shop:schema was deleted or evicted/),
    })
    expect(schema?.fix).toMatch(/restart one replica/)
  })
})
