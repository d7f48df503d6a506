/**
 * doctor's layout check: keys of the other layout under the prefix (a replica configured with the
 * other layout) are found in one bounded walk and named — chats, leads and heartbeats alike — while
 * the prefix's own keys are listed as usual.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KeyLayout, RedisCoordinator } from '../../src/index.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

describe('doctor: keys of the other layout', () => {
  const prefix = uniquePrefix('strays')
  let c: RedisCoordinator
  let raw: Redis
  beforeAll(async () => {
    c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-a' })
    await c.start()
    await c.acquireTurn('chat:own')
    raw = new Redis(redisUrl())
    // What a replica configured with the cluster layout would have written beside it.
    const other = new KeyLayout(prefix, 'cluster')
    const now = Date.now()
    await raw.hset(other.chat('chat:stray').state, 'n', '1', 'f', '5', 'h', 'pod-x', 'hi', 'inc-x', 'ht', '1', 'exp', String(now + 60_000))
    await raw.hset(other.lead('provider:stray'), 'f', '3', 'h', 'pod-x', 'hi', 'inc-x', 'exp', String(now + 60_000))
  })
  afterAll(async () => {
    await c?.stop()
    raw?.disconnect()
  })

  it('fails the layout check, naming the stray keys, and still checks the prefix own state', async () => {
    const r = await runCli(['--url', redisUrl(), '--prefix', prefix, 'doctor', '--json'])
    expect(r.code, r.stderr).toBe(1)
    const body = parseJson<J>(r)
    const layout = body.checks.find((ch: J) => ch.id === 'layout')
    expect(layout.status).toBe('fail')
    expect(layout.detail).toMatch(/^2 chat\/lead\/replica key\(s\) under prefix .* were written with the cluster layout/)
    expect(layout.detail).toContain('chat:stray')
    expect(layout.detail).toContain('provider:stray')
    expect(body.checks.find((ch: J) => ch.id === 'corrupt').detail).toMatch(/keys scanned, none corrupt/)
  })
})
