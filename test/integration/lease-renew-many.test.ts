/**
 * lease-renew-many-0: many leases of one incarnation renewed in one call on a standalone server, each
 * answered as lease-renew-1 answers it — renewed, revoked (another holder or fence), expired — in the
 * order of its keys; a lead's pending yield request comes with its answer.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout } from '../../src/index.js'
import { ScriptRunner } from '../../src/scripts/runner.js'
import { LEASE_RENEW_MANY, TURN_ACQUIRE } from '../../src/scripts/registry.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

const client = new Redis(redisUrl())
afterAll(() => client.quit())

describe('lease-renew-many-0', () => {
  it('renews its own leases, refuses the others one by one, in key order', async () => {
    const keys = new KeyLayout(uniquePrefix('rm'), 'standalone')
    const scripts = new ScriptRunner(client, 5000)
    const lease = 5000
    const take = async (chat: string, incarnation: string) => {
      const k = keys.chat(chat)
      const r = await scripts.call(
        TURN_ACQUIRE,
        { state: k.state, queue: k.queue },
        {
          replicaId: 'r',
          incarnation,
          leaseMs: lease,
          idleTtlMs: 60000,
          ticket: null,
          wakeChannelPrefix: keys.wakeChannelPrefix,
          requestId: '1',
        },
      )
      return { key: k.state, fence: (r as { fence: number }).fence }
    }
    const mine = await take('chat:mine', 'ia')
    const other = await take('chat:other', 'ib') // held by another incarnation
    const lapsed = await take('chat:lapsed', 'ia')
    await client.hset(lapsed.key, 'exp', '1') // its lease ran out in Redis
    const lead = keys.lead('provider:wa')
    await client.hset(lead, {
      h: 'r',
      hi: 'ia',
      f: '7',
      exp: String(Date.now() + 60_000),
      yr: 'ops',
      yt: 'pod-b',
      yexp: String(Date.now() + 60_000),
    })
    const before = Number(await client.hget(mine.key, 'exp'))
    await new Promise((r) => setTimeout(r, 20))
    const replies = await scripts.callMany(
      LEASE_RENEW_MANY,
      [mine.key, other.key, lapsed.key, lead],
      { incarnation: 'ia', leaseMs: lease, idleTtlMs: 60000 },
      [String(mine.fence), String(other.fence), String(lapsed.fence), '7'],
    )
    expect(replies).toEqual([
      { ok: true, yieldRequest: null },
      { ok: false, reason: 'revoked' },
      { ok: false, reason: 'expired' },
      { ok: true, yieldRequest: { by: 'ops', target: 'pod-b' } },
    ])
    expect(Number(await client.hget(mine.key, 'exp'))).toBeGreaterThan(before)
    expect(await client.hget(lapsed.key, 'exp')).toBe('1') // nothing written for a lease it refused
    const stale = await scripts.callMany(LEASE_RENEW_MANY, [mine.key], { incarnation: 'ia', leaseMs: lease, idleTtlMs: 60000 }, [
      String(mine.fence - 1),
    ])
    expect(stale).toEqual([{ ok: false, reason: 'revoked' }]) // an older fence of the same incarnation
  })
})
