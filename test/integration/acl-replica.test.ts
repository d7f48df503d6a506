/**
 * A replica under a Redis ACL user: the user docs/operations.md ("A replica user") documents runs
 * turns as any other, and each permission taken from it either refuses start() naming the grant
 * (PermissionDeniedError, code ERR_NO_PERMISSION) or starts with one warning saying what is off.
 */
import { readFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PermissionDeniedError, RedisCoordinator, RedisStore } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

const fails = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  )

/** The documented ACL SETUSER line, its rules for `prefix` (the doc's is `shop`). */
function documentedRules(prefix: string): string[] {
  const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8')
  const section = doc.slice(doc.indexOf('### A replica user'))
  const line = /^ACL SETUSER botmesh-replica (.*)$/m.exec(section)![1]!
  return line.split(' ').map((r) => r.replace(/shop:/g, `${prefix}:`))
}

describe('a replica under an ACL user', () => {
  const prefix = uniquePrefix('acl')
  const users: string[] = []
  let admin: Redis
  const coordinators: RedisCoordinator[] = []

  beforeAll(() => {
    admin = new Redis(redisUrl())
  })
  afterAll(async () => {
    await Promise.all(coordinators.map((c) => c.stop().catch(() => {})))
    if (users.length) await admin.call('ACL', 'DELUSER', ...users)
    await admin.quit()
  })

  /** A user with the documented rules, less `without`; its coordinator (not started) and the warnings it emits. */
  async function replicaAs(name: string, without: string[] = []) {
    const user = `${prefix}-${name}`
    const rules = documentedRules(prefix).filter((r) => !without.includes(r))
    expect(rules.length).toBe(documentedRules(prefix).length - without.length)
    await admin.call('ACL', 'SETUSER', user, 'reset', ...rules.map((r) => (r === '>its-password' ? '>pw' : r)))
    users.push(user)
    const u = new URL(redisUrl())
    u.username = user
    u.password = 'pw'
    const warnings: string[] = []
    const c = new RedisCoordinator({ url: u.toString(), prefix, replicaId: name, leaseMs: 3000, maxPollMs: 50 })
    c.on('coordination:warning', (w) => warnings.push(w.code))
    coordinators.push(c)
    return { c, warnings, url: u.toString() }
  }

  it('the documented user: a turn passes from one replica to another, a checkpoint is written, nothing is off', async () => {
    const a = await replicaAs('doc-a')
    const b = await replicaAs('doc-b')
    await a.c.start()
    await b.c.start()
    const held = await a.c.acquireTurn('chat:1')
    const waiting = b.c.acquireTurn('chat:1', { waitMs: 5000 })
    await held.release()
    const next = await waiting
    expect(next.fence).toBeGreaterThan(held.fence)
    await next.release()
    const store = new RedisStore({ url: a.url, prefix })
    await store.setCheckpointIf('chat:1', { flow: 'f', step: 's', state: {} } as never, null)
    await store.close()
    expect(a.warnings.filter((w) => w !== 'eviction-policy')).toEqual([])
    expect(b.warnings.filter((w) => w !== 'eviction-policy')).toEqual([])
  })

  it.each([
    ['no-channel', [`&PREFIX:wake:*`], `&PREFIX:wake:*`, /may not SUBSCRIBE to PREFIX:wake:\* \(grant &PREFIX:wake:\*\)/],
    ['no-subscribe', ['+subscribe'], '+subscribe', /may not run SUBSCRIBE.*\(grant \+subscribe\)/],
    ['no-evalsha', ['+evalsha'], '+evalsha +eval', /may not run EVALSHA.*\(grant \+evalsha \+eval\)/],
    ['no-time', ['+time'], '+time', /may not run TIME.*\(grant \+time\)/],
    ['no-keys', [`~PREFIX:*`], `~PREFIX:*`, /may not access the keys under PREFIX: \(grant ~PREFIX:\*\)/],
    ['no-hset', ['+hset'], '+time +hget', /may not run a command the coordination scripts use \(grant \+time \+hget/],
  ])('without %s: start() refuses, naming the grant', async (name, without, grant, message) => {
    const fill = (s: string) => s.replace(/PREFIX/g, prefix)
    const { c } = await replicaAs(name, without.map(fill))
    const err = await fails(c.start())
    expect(err).toBeInstanceOf(PermissionDeniedError)
    expect((err as PermissionDeniedError).code).toBe('ERR_NO_PERMISSION')
    expect((err as PermissionDeniedError).grant.startsWith(fill(grant))).toBe(true)
    expect((err as Error).message).toMatch(new RegExp(fill(message.source)))
  })

  it('without +info: starts, and says once that failover detection is off', async () => {
    const { c, warnings } = await replicaAs('no-info', ['+info'])
    await c.start()
    const t = await c.acquireTurn('chat:2')
    await t.release()
    expect(warnings.filter((w) => w === 'failover-detection-off')).toHaveLength(1)
  })

  it('without +publish: starts, says so once, and turns still pass between replicas (by polling)', async () => {
    const a = await replicaAs('no-pub-a', ['+publish'])
    const b = await replicaAs('no-pub-b', ['+publish'])
    await a.c.start()
    await b.c.start()
    expect(a.warnings.filter((w) => w === 'publish-refused')).toHaveLength(1)
    for (let i = 0; i < 3; i++) {
      const held = await a.c.acquireTurn('chat:3')
      const waiting = b.c.acquireTurn('chat:3', { waitMs: 5000 })
      await held.release()
      const next = await waiting
      await next.release()
    }
    expect(a.warnings.filter((w) => w === 'publish-refused')).toHaveLength(1)
  })
})
