/**
 * One definition of the chat hash on each side of the wire, and the two agree: the Lua table CHAT
 * (lua/includes/chat.lua, run in Redis) is CHAT_FIELDS (src/wire/chat.ts), and what the real scripts
 * write — every writer path, every field — is what decodeChat reads. Likewise the heartbeat's lease
 * list: what a coordinator writes, decodeHeldSummary reads back.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { CHAT_FIELDS, CorruptStateError, KeyLayout, RedisCoordinator, decodeChat, decodeReplica } from '../../src/index.js'
import { ScriptRunner } from '../../src/scripts/runner.js'
import { findLuaDir } from '../../src/scripts/load.js'
import {
  ADMIN_CHAT_RELEASE,
  ADMIN_CHAT_SKIP,
  LEASE_RENEW,
  RELEASE_STATUS,
  TURN_ACQUIRE,
  TURN_RELEASE,
  TURN_STATUS,
} from '../../src/scripts/registry.js'
import { decodeHeldSummary } from '../../src/wire/heartbeat.js'
import { REPLICA_FIELDS } from '../../src/wire/hashes.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

const client = new Redis(redisUrl())
afterAll(() => client.quit())

const LEASE = 60_000
const IDLE = 3_600_000

describe('the chat hash: Lua writers and the TypeScript decoder agree', () => {
  it('CHAT in lua/includes/chat.lua is CHAT_FIELDS', async () => {
    const include = readFileSync(join(findLuaDir(), 'includes', 'chat.lua'), 'utf8')
    const lua = JSON.parse(String(await client.eval(`${include}\nreturn cjson.encode(CHAT)`, 0))) as Record<string, string>
    expect(lua).toEqual(CHAT_FIELDS)
  })

  it('TURN and RELEASE in lua/includes/status.lua are TURN_STATUS and RELEASE_STATUS', async () => {
    const include = readFileSync(join(findLuaDir(), 'includes', 'status.lua'), 'utf8')
    const lua = JSON.parse(String(await client.eval(`${include}\nreturn cjson.encode({ TURN = TURN, RELEASE = RELEASE })`, 0))) as Record<
      string,
      unknown
    >
    expect(lua).toEqual({ TURN: TURN_STATUS, RELEASE: RELEASE_STATUS })
  })

  it('every field the scripts write is one CHAT_FIELDS names, and decodeChat reads it as written', async () => {
    const keys = new KeyLayout(uniquePrefix('schema'), 'standalone')
    const k = keys.chat('chat:schema')
    const chat = { state: k.state, queue: k.queue }
    const scripts = new ScriptRunner(client, 5000)
    const wakeChannelPrefix = keys.wakeChannelPrefix
    const acquire = (replicaId: string, incarnation: string, ticket: number | null, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId, incarnation, leaseMs: LEASE, idleTtlMs: IDLE, ticket, wakeChannelPrefix, requestId })
    const seen = new Set<string>()
    // Families of fields (t:<ticket>, rq:<requestId>, q:<ticket>): named by their prefix.
    const prefixes = Object.entries(CHAT_FIELDS)
      .filter(([name]) => name.endsWith('Prefix'))
      .map(([, prefix]) => prefix as string)
    const read = async () => {
      const h = await client.hgetall(k.state)
      for (const field of Object.keys(h)) {
        const prefix = prefixes.find((p) => field.startsWith(p))
        const named = Object.values(CHAT_FIELDS).includes(field as never) || prefix !== undefined
        expect(named, `field ${field} is not in CHAT_FIELDS`).toBe(true)
        seen.add(prefix ?? field)
      }
      return decodeChat('chat:schema', k.state, h)
    }

    // The fast path: a free chat is granted at once.
    const a = await acquire('ra', 'ia', null, '1')
    expect(a).toMatchObject({ status: 'granted', ticket: 1, previousHolder: null })
    let c = await read()
    expect(c.holder).toMatchObject({ replicaId: 'ra', incarnation: 'ia', ticket: 1, waitedMs: 0 })
    expect(c.holder!.expiresAtMs - c.holder!.grantedAtMs).toBe(LEASE)
    expect(c.holder!.lastRenewalMs).toBe(c.holder!.grantedAtMs)
    expect(c).toMatchObject({ fence: a.status === 'granted' ? a.fence : -1, lastTicket: 1, previousHolder: null, tickets: [] })
    expect(c.lastHolder).toEqual({ replicaId: 'ra', incarnation: 'ia' })

    // A ticket taken while the chat is held: queued, with its request id.
    expect(await acquire('rb', 'ib', null, '1')).toMatchObject({ status: 'queued', ticket: 2, holderLeftMs: expect.any(Number) })
    c = await read()
    expect(c.lastTicket).toBe(2)
    expect(c.tickets).toEqual([expect.objectContaining({ ticket: 2, replicaId: 'rb', incarnation: 'ib' })])
    // A ticket lives two thirds of the lease after its poll (the last third is a grant's take-up window).
    expect(c.tickets[0]!.deadlineMs - c.tickets[0]!.enqueuedAtMs).toBe(LEASE - Math.floor(LEASE / 3))
    expect(await client.hget(k.state, `${CHAT_FIELDS.requestPrefix}ib:1`)).toBe('2')

    // The release grants the next ticket (grant_next): the old holder becomes the previous one.
    expect(
      await scripts.call(TURN_RELEASE, chat, {
        incarnation: 'ia',
        ticket: 1,
        leaseMs: LEASE,
        idleTtlMs: IDLE,
        wakeChannelPrefix,
        requestId: '1',
        unserved: false,
        lastWaiter: false,
        queued: false,
      }),
    ).toEqual({ outcome: 'released', handed: null })
    c = await read()
    // Offered to rb (pushed): it runs until a lease after rb's take (its ticket's life, two thirds of
    // the lease, plus a third), and ra stays the last holder until rb takes it up.
    expect(c.holder).toMatchObject({ replicaId: 'rb', incarnation: 'ib', ticket: 2, offered: true })
    expect(c.holder!.expiresAtMs - c.holder!.grantedAtMs).toBeLessThanOrEqual(LEASE)
    expect(c.holder!.expiresAtMs - c.holder!.grantedAtMs).toBeGreaterThan(LEASE - 1000)
    expect(c.holder!.waitedMs).toBeGreaterThanOrEqual(0)
    expect(c.previousHolder).toEqual({ replicaId: 'ra', incarnation: 'ia' })
    expect(c.lastHolder).toEqual({ replicaId: 'ra', incarnation: 'ia' })
    expect(c.tickets).toEqual([])
    // rb's poll takes it up: its own lease from now, and rb is the last holder.
    expect(await acquire('rb', 'ib', 2, '1')).toMatchObject({ status: 'granted', ticket: 2, previousHolder: { replicaId: 'ra' } })
    c = await read()
    expect(c.holder).toMatchObject({ replicaId: 'rb', offered: false })
    expect(c.holder!.expiresAtMs - c.holder!.lastRenewalMs).toBe(LEASE)
    expect(c.lastHolder).toEqual({ replicaId: 'rb', incarnation: 'ib' })
    const fenceB = c.fence!
    expect(fenceB).toBeGreaterThan(a.status === 'granted' ? a.fence : Infinity)

    // A renewal moves the expiry and the last renewal.
    expect(
      await scripts.call(LEASE_RENEW, { lease: k.state }, { incarnation: 'ib', fence: fenceB, leaseMs: LEASE, idleTtlMs: IDLE }),
    ).toEqual({
      ok: true,
      yieldRequest: null,
    })
    c = await read()
    expect(c.holder!.expiresAtMs - c.holder!.lastRenewalMs).toBe(LEASE)

    // An operator drops a queued ticket: it counts as skipped.
    expect(await acquire('rc', 'ic', null, 'ic:1')).toMatchObject({ status: 'queued', ticket: 3, holderLeftMs: expect.any(Number) })
    const skip = await scripts.call(ADMIN_CHAT_SKIP, chat, {
      ticket: 3,
      ifIncarnation: 'ic',
      ifFence: null,
      leaseMs: LEASE,
      idleTtlMs: IDLE,
      wakeChannelPrefix,
    })
    expect(skip.status).toBe('skipped')
    c = await read()
    expect(c.skippedTickets).toBe(1)
    expect(c.tickets).toEqual([])

    // A ticket whose replica stopped polling (its deadline and its w: field past): the next grant skips
    // it as presumed dead and leaves x:<ticket> for its poll, should it come after all.
    expect(await acquire('rd', 'id', null, '1')).toMatchObject({ status: 'queued', ticket: 4 })
    await client.hset(k.state, `${CHAT_FIELDS.ticketPrefix}4`, '1|1|id|rd', `${CHAT_FIELDS.waiterPrefix}id`, '1')
    // An operator revokes the holder: the holder's fields go, the fence is bumped, the last holder stays.
    const revoke = await scripts.call(ADMIN_CHAT_RELEASE, chat, {
      ifFence: fenceB,
      ifIncarnation: 'ib',
      leaseMs: LEASE,
      idleTtlMs: IDLE,
      wakeChannelPrefix,
    })
    expect(revoke).toMatchObject({ status: 'released', holder: { replicaId: 'rb', incarnation: 'ib' }, fenceBefore: fenceB })
    c = await read()
    expect(c.holder).toBeNull()
    expect(c.fence).toBe(revoke.status === 'released' ? revoke.fenceAfter : -1)
    expect(c.lastHolder).toEqual({ replicaId: 'rb', incarnation: 'ib' })
    expect(await client.hget(k.state, `${CHAT_FIELDS.presumedDeadPrefix}4`)).toBe('id')
    expect(c.skippedTickets).toBe(2)

    // Every field the TypeScript side names was written by some script on the way.
    expect([...seen].sort()).toEqual(Object.values(CHAT_FIELDS).sort())
  })
})

describe("the heartbeat's lease list: what a coordinator writes, decodeHeldSummary reads", () => {
  it('lists what the replica holds, waits for and campaigns for', async () => {
    const prefix = uniquePrefix('beat')
    const a = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'a', leaseMs: 3000 })
    const b = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'b', leaseMs: 3000 })
    try {
      const held = await a.acquireTurn('chat:1')
      const waiting = b.acquireTurn('chat:1', { waitMs: 10_000 })
      const lead = await b.tryLead('scheduler:nightly')
      b.campaign('provider:x')
      const rawKey = a.keys.replica('b')
      const readRecord = async () => decodeReplica('b', rawKey, await client.hgetall(rawKey))
      // Until b's ticket is taken and its campaign stands: then its next beat lists both.
      await until(async () => (await client.zcard(a.keys.chat('chat:1').queue)) === 1 && b.metrics.waitingNow === 1, 5000, 'b queued')
      await b.renewNow()
      const record = await readRecord()
      expect(record.leases).toEqual({
        held: expect.arrayContaining([{ kind: 'lead', key: 'scheduler:nightly', fence: lead!.fence }]),
        waiting: [{ key: 'chat:1', ticket: 2 }],
        campaigns: ['provider:x'],
        more: 0,
      })
      expect(decodeHeldSummary(await client.hget(rawKey, REPLICA_FIELDS.leases), (why) => new Error(why))).toEqual(record.leases)
      await held.release()
      await (await waiting).release()
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
  })

  it('absent is empty, text that is not JSON is corrupt, entries of the wrong shape are left out', () => {
    const corrupt = (why: string) => new CorruptStateError('p:r:x', why)
    expect(decodeHeldSummary(undefined, corrupt)).toEqual({ held: [], waiting: [], campaigns: [], more: 0 })
    expect(() => decodeHeldSummary('{"held":', corrupt)).toThrow(CorruptStateError)
    const mixed = JSON.stringify({
      held: [{ kind: 'chat', key: 'c1', fence: 5 }, { kind: 'chat', key: 7, fence: 5 }, { kind: 'other', key: 'x', fence: 1 }, null],
      waiting: [{ key: 'c2', ticket: 3 }, { key: 'c3' }],
      campaigns: ['provider:x', 4],
      more: 'many',
    })
    expect(decodeHeldSummary(mixed, corrupt)).toEqual({
      held: [{ kind: 'chat', key: 'c1', fence: 5 }],
      waiting: [{ key: 'c2', ticket: 3 }],
      campaigns: ['provider:x'],
      more: 0,
    })
  })
})
