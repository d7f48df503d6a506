/**
 * A key another tool wrote with a raw control byte in its name (`P:c:chat:<0x01>x`; the library
 * writes that character escaped, `%01`) is listed in a form that names it again: `chat:\udc01x`
 * (the byte carried as U+DC00 + byte, src/bytes.ts), which `chat inspect` and `chat release` take
 * back; the library's own `chat:\x01y` stays a distinct key, named `chat:\x01y`.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCoordinator } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

describe('a key with a raw control byte, written by another tool', () => {
  const prefix = uniquePrefix('rawctl')
  const cli = (...args: string[]) => runCli(['--url', redisUrl(), '--prefix', prefix, ...args])
  let c: RedisCoordinator
  let raw: Redis
  beforeAll(async () => {
    c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-a', leaseMs: 60_000 })
    await c.start()
    await c.acquireTurn('chat:\x01x')
    await c.acquireTurn('chat:\x01y')
    // Another tool's key: the same state, under a name with the raw byte instead of %01.
    raw = new Redis(redisUrl())
    await raw.rename(`${prefix}:c:chat:%01x`, Buffer.from(`${prefix}:c:chat:\x01x`, 'latin1'))
  })
  afterAll(async () => {
    c?.crash()
    await raw?.quit()
  })

  it('is listed as chat:\\udc01x, which inspect and release take back', async () => {
    const [table, json] = await Promise.all([cli('chat', 'ls'), cli('chat', 'ls', '-o', 'json')])
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toContain('chat:\\udc01x')
    expect(table.stdout).toContain('chat:\\x01y')
    expect(
      parseJson<J>(json)
        .chats.map((x: J) => x.key)
        .sort(),
    ).toEqual(['chat:\x01y', 'chat:\udc01x'])
    const [inspect, own] = await Promise.all([cli('chat', 'inspect', 'chat:\\udc01x', '-o', 'json'), cli('chat', 'inspect', 'chat:\\x01y')])
    expect(inspect.code, inspect.stderr).toBe(0)
    expect(parseJson<J>(inspect).chat.holder.replicaId).toBe('pod-a')
    expect(own.code, own.stderr).toBe(0)
    expect(await raw.hget(Buffer.from(`${prefix}:c:chat:\x01x`, 'latin1'), 'h')).toBe('pod-a')
    const release = await cli('chat', 'release', 'chat:\\udc01x', '--yes')
    expect(release.code, release.stderr).toBe(0)
    expect(await raw.hget(Buffer.from(`${prefix}:c:chat:\x01x`, 'latin1'), 'h')).toBeNull()
  })
})
