/**
 * One definition of every hash but the chat's (that one: chat-schema.test.ts) on each side of the
 * wire, and the two agree: each Lua table of lua/includes/ (run in Redis) is its TypeScript table of
 * src/wire/hashes.ts, and every field the real scripts write — on the way through each writer — is
 * one that table names. The loader folds every table of every script (none left unfolded).
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import {
  CHAT_FIELDS,
  KeyLayout,
  decodeCheckpoint,
  decodeHandover,
  decodeLead,
  decodeLock,
  decodeReplica,
  type RedisKey,
} from '../../src/index.js'
import { ScriptRunner } from '../../src/scripts/runner.js'
import { findLuaDir, loadScript } from '../../src/scripts/load.js'
import {
  ADMIN_LEAD_EVICT,
  ADMIN_LEAD_REVOKE,
  ADMIN_LOCK_RELEASE,
  ADMIN_REPLICA_EVICT,
  ADMIN_YIELD_CANCEL,
  CHECKPOINT_SET,
  HANDOVER_SET,
  LEAD_ACQUIRE,
  LEAD_RELEASE,
  LEAD_TRANSPORT,
  LEAD_YIELD,
  LEASE_RENEW,
  LOCK_ACQUIRE,
  LOCK_RELEASE,
  LOCK_RENEW,
  REPLICA_BEAT,
  SCHEMA_INIT,
} from '../../src/scripts/registry.js'
import { CHECKPOINT_FIELDS, HANDOVER_FIELDS, LEAD_FIELDS, LOCK_FIELDS, REPLICA_FIELDS, SCHEMA_FIELDS } from '../../src/wire/hashes.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

const client = new Redis(redisUrl())
afterAll(() => client.quit())

const LEASE = 60_000
const IDLE = 3_600_000

/** Each Lua table: its include, its name there, and the TypeScript table it must equal. */
const TABLES: Array<[include: string, table: string, fields: Record<string, string>]> = [
  ['lead-fields', 'LEAD', LEAD_FIELDS],
  ['lock', 'LOCK', LOCK_FIELDS],
  ['checkpoint', 'CHECKPOINT', CHECKPOINT_FIELDS],
  ['handover', 'HANDOVER', HANDOVER_FIELDS],
  ['replica', 'REPLICA', REPLICA_FIELDS],
  ['schema', 'SCHEMA', SCHEMA_FIELDS],
]

/**
 * Reads a hash after each step of a writer and keeps the fields seen: each must be one `fields`
 * names (a family of fields by its prefix: a table's names ending in Prefix).
 */
function fieldWatcher(fields: Record<string, string>, what: string) {
  const prefixes = Object.entries(fields)
    .filter(([name]) => name.endsWith('Prefix'))
    .map(([, prefix]) => prefix)
  const seen = new Set<string>()
  return {
    seen,
    async read(key: RedisKey): Promise<Record<string, string>> {
      const h = await client.hgetall(key)
      for (const field of Object.keys(h)) {
        const prefix = prefixes.find((p) => field.startsWith(p))
        expect(Object.values(fields).includes(field) || prefix !== undefined, `field ${field} is not in ${what}`).toBe(true)
        seen.add(prefix ?? field)
      }
      return h
    },
    /** Every field the table names was written by some script on the way. */
    expectAllSeen() {
      expect([...seen].sort()).toEqual(Object.values(fields).sort())
    },
  }
}

describe('every hash: the Lua tables and the TypeScript tables agree', () => {
  for (const [include, table, fields] of TABLES) {
    it(`${table} in lua/includes/${include}.lua is its table in src/wire/hashes.ts`, async () => {
      const source = readFileSync(join(findLuaDir(), 'includes', `${include}.lua`), 'utf8')
      const lua = JSON.parse(String(await client.eval(`${source}\nreturn cjson.encode(${table})`, 0))) as Record<string, string>
      expect(lua).toEqual(fields)
    })
  }

  it("a lead names its holder's fields as a chat does (lease-renew-1 renews both through CHAT)", () => {
    const shared = ['fence', 'holder', 'holderIncarnation', 'expiresAt', 'grantedAt', 'lastRenewal'] as const
    for (const name of shared) expect(LEAD_FIELDS[name], name).toBe(CHAT_FIELDS[name])
    for (const name of ['lastHolder', 'lastHolderIncarnation', 'previousHolder', 'previousHolderIncarnation'] as const) {
      expect(LEAD_FIELDS[name], name).toBe(CHAT_FIELDS[name])
    }
  })

  /** Every script of lua/ by name, and a script's source without its comments. */
  const scriptNames = () =>
    readdirSync(findLuaDir())
      .filter((f) => f.endsWith('.lua'))
      .map((f) => f.slice(0, -4))
  const codeOf = (source: string) => source.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--.*$/gm, '')

  it('every script compiles in Redis with no helper it never calls', async () => {
    for (const name of scriptNames()) {
      const { source, sha } = loadScript(name)
      expect(await client.script('LOAD', source), name).toBe(sha)
      const code = codeOf(source)
      const helpers = [...code.matchAll(/^local function (\w+)/gm)].map((m) => m[1]!)
      expect(
        helpers.filter((f) => code.match(new RegExp(`\\b${f}\\b`, 'g'))!.length < 2),
        name,
      ).toEqual([])
    }
  })

  it('every script loads with each table it uses folded', () => {
    const names = scriptNames()
    expect(names.length).toBeGreaterThan(30)
    for (const name of names) {
      expect(codeOf(loadScript(name).source), name).not.toMatch(/\b(CHAT|LEAD|LOCK|CHECKPOINT|HANDOVER|REPLICA|SCHEMA|TURN|RELEASE)\b/)
    }
  })
})

describe('every field the scripts write is one the TypeScript table names', () => {
  const keys = new KeyLayout(uniquePrefix('hashes'), 'standalone')
  const scripts = new ScriptRunner(client, 5000)
  const wakeChannelPrefix = keys.wakeChannelPrefix

  it('a lead', async () => {
    const lead = { lead: keys.lead('provider:x') }
    const w = fieldWatcher(LEAD_FIELDS, 'LEAD_FIELDS')
    const read = async () => decodeLead('provider:x', lead.lead, await w.read(lead.lead))
    const acquire = (replicaId: string, incarnation: string) =>
      scripts.call(LEAD_ACQUIRE, lead, { replicaId, incarnation, leaseMs: LEASE, idleTtlMs: IDLE, stand: true })

    const a = await acquire('ra', 'ia')
    expect(a.status).toBe('granted')
    const fenceA = a.status === 'granted' ? a.fence : -1
    expect((await read()).holder).toMatchObject({ replicaId: 'ra', incarnation: 'ia' })
    // A standby: its candidacy.
    expect((await acquire('rb', 'ib')).status).toBe('held')
    await read()
    expect(
      await scripts.call(LEASE_RENEW, { lease: lead.lead }, { incarnation: 'ia', fence: fenceA, leaseMs: LEASE, idleTtlMs: IDLE }),
    ).toMatchObject({
      ok: true,
    })
    // The leader's transport goes down.
    expect(await scripts.call(LEAD_TRANSPORT, lead, { incarnation: 'ia', fence: fenceA, down: true, yieldAfterMs: 1000 })).toBe(true)
    await read()
    // An operator asks it to yield to rb; it does.
    const asked = await scripts.call(LEAD_YIELD, lead, { by: 'op@host', target: 'rb', ttlMs: 10_000, ifFence: null, wakeChannelPrefix })
    expect(asked.status).toBe('requested')
    await read()
    expect(
      await scripts.call(LEAD_RELEASE, lead, { incarnation: 'ia', fence: fenceA, leaseMs: LEASE, idleTtlMs: IDLE, wakeChannelPrefix }),
    ).toBe(true)
    expect((await read()).holder).toBeNull()
    // rb takes over: the handover is recorded, ra is the previous holder.
    const b = await acquire('rb', 'ib')
    expect(b.status).toBe('granted')
    await read()
    // An operator revokes rb, reserving the lead for ra; then cancels the reservation; then evicts rb.
    expect((await acquire('ra', 'ia')).status).toBe('held')
    const revoked = await scripts.call(ADMIN_LEAD_REVOKE, lead, {
      ifFence: null,
      ifIncarnation: 'ib',
      target: 'ra',
      ttlMs: 10_000,
      by: 'op@host',
      wakeChannelPrefix,
    })
    expect(revoked.status).toBe('revoked')
    await read()
    expect((await scripts.call(ADMIN_YIELD_CANCEL, lead, { ifRequestedAt: null, ifFence: null, wakeChannelPrefix })).status).toBe(
      'cancelled',
    )
    await read()
    expect((await acquire('rb', 'ib')).status).toBe('granted')
    expect((await scripts.call(ADMIN_LEAD_EVICT, lead, { incarnation: 'ib', wakeChannelPrefix })).revoked).toBe(true)
    await read()
    w.expectAllSeen()
  })

  it('a lock', async () => {
    const lock = { lock: keys.lock('invoice:run') }
    const w = fieldWatcher(LOCK_FIELDS, 'LOCK_FIELDS')
    const read = async () => decodeLock('invoice:run', lock.lock, await w.read(lock.lock))
    const fence = await scripts.call(LOCK_ACQUIRE, lock, { token: 'tk1', ttlMs: 10_000, owner: 'vm:1', idleTtlMs: IDLE })
    expect(fence).toEqual(expect.any(Number))
    expect((await read()).holder).toMatchObject({ owner: 'vm:1' })
    expect(await scripts.call(LOCK_RENEW, lock, { token: 'tk1', ttlMs: 10_000, idleTtlMs: IDLE })).toBe(true)
    await read()
    expect(await scripts.call(LOCK_RELEASE, lock, { token: 'tk1' })).toBe(true)
    expect((await read()).holder).toBeNull()
    await scripts.call(LOCK_ACQUIRE, lock, { token: 'tk2', ttlMs: 10_000, owner: 'vm:2', idleTtlMs: IDLE })
    expect((await scripts.call(ADMIN_LOCK_RELEASE, lock, { ifFence: null })).status).toBe('released')
    await read()
    w.expectAllSeen()
  })

  it('a checkpoint and a handover marker', async () => {
    const chat = keys.chat('chat:1')
    const cp = fieldWatcher(CHECKPOINT_FIELDS, 'CHECKPOINT_FIELDS')
    const written = await scripts.call(
      CHECKPOINT_SET,
      { checkpoint: chat.checkpoint, state: chat.state },
      {
        expectedRevision: null,
        flow: 'order',
        step: 'address',
        data: JSON.stringify({ state: { items: [1] }, answer: { text: 'x' } }),
        ownerReplicaId: 'ra',
        ownerIncarnation: 'ia',
        ownerFence: 5,
        ttlMs: 60_000,
        fingerprint: 'f1',
        answerBytes: 12,
        writeId: 'ia:1',
      },
    )
    expect(written.status).toBe('written')
    const c = decodeCheckpoint('chat:1', chat.checkpoint, await cp.read(chat.checkpoint))
    expect(c).toMatchObject({ owner: { replicaId: 'ra', incarnation: 'ia', fence: 5 }, ephemeral: { ttlMs: 60_000, fingerprint: 'f1' } })
    cp.expectAllSeen()

    const ho = fieldWatcher(HANDOVER_FIELDS, 'HANDOVER_FIELDS')
    const marker = await scripts.call(
      HANDOVER_SET,
      { marker: chat.handover, state: chat.state },
      { name: 'survey', replicaId: 'ra', incarnation: 'ia', ttlMs: 60_000, data: { a: 1 }, fence: 5 },
    )
    expect(marker).toEqual({ status: 'written' })
    expect(decodeHandover('chat:1', chat.handover, await ho.read(chat.handover))).toMatchObject({ name: 'survey', fence: 5 })
    ho.expectAllSeen()
  })

  it('a heartbeat record and the schema record', async () => {
    const replica = { replica: keys.replica('ra'), index: keys.replicaIndex }
    const w = fieldWatcher(REPLICA_FIELDS, 'REPLICA_FIELDS')
    const info = { host: 'h', pid: 1, version: '0.1.0', startedAt: 1, leaseMs: LEASE, renewMs: LEASE / 3 }
    const stats = {
      turnsGranted: 0,
      waitingNow: 0,
      oldestWaitMs: null,
      turnsShed: 0,
      waitP99Ms: null,
      leasesLost: 0,
      leadsHeld: 0,
      turnsHeld: 0,
    }
    const leases = { held: [], waiting: [], campaigns: [], more: 0 }
    const beat = await scripts.call(REPLICA_BEAT, replica, {
      replicaId: 'ra',
      incarnation: 'ia',
      leaseMs: LEASE,
      info,
      stats,
      leases,
      wallClockMs: Date.now(),
    })
    expect(beat).toMatchObject({ evicted: false })
    expect(decodeReplica('ra', replica.replica, await w.read(replica.replica))).toMatchObject({ incarnation: 'ia' })
    const evicted = await scripts.call(ADMIN_REPLICA_EVICT, replica, { replicaId: 'ra', ifIncarnation: 'ia', tombstoneTtlMs: 60_000 })
    expect(evicted.status).toBe('tombstoned')
    await w.read(replica.replica)
    w.expectAllSeen()

    const schema = fieldWatcher(SCHEMA_FIELDS, 'SCHEMA_FIELDS')
    expect(await scripts.call(SCHEMA_INIT, { schema: keys.schema }, { version: 1, layout: 'standalone' })).toEqual({
      version: 1,
      layout: 'standalone',
    })
    await schema.read(keys.schema)
    schema.expectAllSeen()
  })
})
