/**
 * The write side of botmesh-coord, end to end: the built binary as a subprocess against live replicas
 * made by the library in the test. Every intervention: --dry-run and a missing confirmation change
 * nothing, a stale --if-fence changes nothing (exit 6), read-only refuses before connecting (exit 7),
 * and each one leaves an audit record.
 */
import { afterEach, describe, expect, it } from 'vitest'
import {
  CoordinationAdmin,
  CoordinationUnavailableError,
  LeaseLostError,
  RedisCoordinator,
  RedisStore,
  type Layout,
} from '../../src/index.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { clusterUrl, redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'
import { untilBeatListsWaiting, untilQueued, untilStanding } from '../helpers/shared-state.js'

const LEASE = 1500
/** The zombie's lease: it must still hold what the operator sees while the CLI starts, plans and evicts, on a loaded machine. */
const ZOMBIE_LEASE = 6000
const closers: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => {})
})

function world(layout: Layout = 'standalone') {
  const url = layout === 'cluster' ? clusterUrl() : redisUrl()
  const prefix = uniquePrefix('wcli')
  const base = ['--url', url, '--prefix', prefix]
  const cli = (...args: string[]) => runCli([...base, ...args], { timeoutMs: 30_000 })
  const replica = async (replicaId: string, leaseMs = LEASE) => {
    const c = await startCoordinator(() => new RedisCoordinator({ url, prefix, layout, replicaId, leaseMs, maxPollMs: 50 }))
    closers.push(() => c.stop())
    return c
  }
  const admin = new CoordinationAdmin({ url, prefix, layout })
  closers.push(() => admin.close())
  const store = new RedisStore({ redis: admin.redis, prefix, layout })
  const audit = async () => {
    const entries = await admin.redis.xrange(`${prefix}:events`, '-', '+')
    return entries.map(([, f]) => JSON.parse(f[1]!) as Record<string, unknown>).filter((e) => e.type === 'intervention')
  }
  return { url, prefix, cli, replica, store, audit }
}

describe('botmesh-coord write commands: safety', () => {
  it('read-only mode refuses every write before connecting to anything', async () => {
    const dead = ['--url', 'redis://127.0.0.1:1', '--prefix', 'x']
    for (const args of [
      ['chat', 'release', 'chat:1', '--yes'],
      ['chat', 'skip', 'chat:1', '3', '--yes'],
      ['provider', 'yield', 'whatsapp', '--yes'],
      ['checkpoint', 'rm', 'chat:1', '--yes'],
      ['lock', 'release', 'k', '--yes'],
      ['replica', 'evict', 'pod-a', '--yes'],
      ['handover', 'rm', 'chat:1', '--yes'],
      ['handover', 'rm', '--owner-dead', '--yes'],
      ['checkpoint', 'extend', 'chat:1', '--ttl', '1h', '--yes'],
      ['checkpoints', 'rm', '--flow', 'order', '--yes'],
    ]) {
      const r = await runCli([...dead, '--read-only', ...args])
      expect(r.code, args.join(' ')).toBe(7)
      expect(r.stderr).toMatch(/read-only/)
    }
    const env = await runCli([...dead, 'chat', 'release', 'chat:1', '--yes'], { env: { BOTMESH_READ_ONLY: '1' } })
    expect(env.code).toBe(7)
  })

  it('chat release: --dry-run, no terminal without --yes, and a stale --if-fence change nothing; then it revokes, audited', async () => {
    const w = world()
    const a = await w.replica('a')
    const b = await w.replica('b')
    const turnA = await a.acquireTurn('chat:42')
    const waiting = b.acquireTurn('chat:42', { waitMs: 20_000 })
    await untilQueued(a, 'chat:42', ['b'])

    const dry = await w.cli('chat', 'release', 'chat:42', '--dry-run')
    expect(dry.code).toBe(0)
    expect(dry.stdout).toMatch(/release the turn of chat:42/)
    expect(dry.stdout).toMatch(new RegExp(`fence +${turnA.fence}`))
    expect(dry.stdout).toMatch(/ticket \d+ of b .*granted at once/)
    expect(dry.stdout).toMatch(/dry run: nothing changed/)

    const noTty = await w.cli('chat', 'release', 'chat:42')
    expect(noTty.code).toBe(7)
    expect(noTty.stderr).toMatch(/not a terminal.*--yes/)

    const stale = await w.cli('chat', 'release', 'chat:42', '--if-fence', String(turnA.fence - 1), '--yes')
    expect(stale.code).toBe(6)
    expect(stale.stderr).toMatch(/state changed since you looked/)

    await a.renewNow()
    expect(turnA.held).toBe(true)
    expect(await w.audit()).toEqual([])

    const r = await w.cli(
      '--json',
      'chat',
      'release',
      'chat:42',
      '--if-fence',
      String(turnA.fence),
      '--reason',
      'stuck after deploy',
      '--yes',
    )
    expect(r.code, r.stderr).toBe(0)
    const out = parseJson<{
      status: string
      fenceBefore: number
      fenceAfter: number
      granted: { replicaId: string; fence: number }
      audit: { written: boolean }
    }>(r)
    expect(out).toMatchObject({ status: 'released', fenceBefore: turnA.fence, granted: { replicaId: 'b' }, audit: { written: true } })
    const turnB = await waiting
    expect(turnB.fence).toBeGreaterThan(turnA.fence)
    await a.renewNow()
    expect(() => turnA.assertHeld()).toThrow(LeaseLostError)

    const [rec] = await w.audit()
    expect(rec).toMatchObject({
      type: 'intervention',
      command: `chat release chat:42 --if-fence ${turnA.fence}`,
      key: 'chat:42',
      fenceBefore: turnA.fence,
      fenceAfter: turnB.fence,
      reason: 'stuck after deploy',
      result: 'released',
    })
    expect(rec!.by).toMatch(/.+@.+/)
    expect(typeof rec!.at).toBe('number')
    await turnB.release()
    // The same pinned release pasted again once the chat is free: the pin no longer matches — a change
    // since the operator looked (6), not "nothing held" (3).
    const again = await w.cli('chat', 'release', 'chat:42', '--if-fence', String(turnA.fence), '--yes')
    expect(again.code, again.stderr).toBe(6)
  })

  it('exit codes for nothing to do: not found (3), bad fence (2)', async () => {
    const w = world()
    expect((await w.cli('chat', 'release', 'chat:none', '--yes')).code).toBe(3)
    expect((await w.cli('lock', 'release', 'nolock', '--yes')).code).toBe(3)
    expect((await w.cli('checkpoint', 'rm', 'chat:none', '--yes')).code).toBe(3)
    expect((await w.cli('replica', 'evict', 'ghost', '--yes')).code).toBe(3)
    expect((await w.cli('provider', 'yield', 'nobody', '--yes')).code).toBe(3)
    expect((await w.cli('chat', 'release', 'chat:none', '--if-fence', 'abc', '--yes')).code).toBe(2)
  })
})

describe('botmesh-coord write commands: each intervention', () => {
  it('chat skip drops a ticket: the waiting acquireTurn rejects with reason dropped', async () => {
    const w = world()
    const a = await w.replica('a')
    const b = await w.replica('b')
    const turnA = await a.acquireTurn('chat:7')
    const dropped = b.acquireTurn('chat:7', { waitMs: 20_000 }).catch((e: unknown) => e)
    await untilQueued(a, 'chat:7', ['b'])
    const ticket = String(turnA.ticket + 1)
    const dry = await w.cli('chat', 'skip', 'chat:7', ticket, '--dry-run')
    expect(dry.code).toBe(0)
    expect(dry.stdout).toMatch(/drop ticket \d+ from chat:7/)
    const r = await w.cli('chat', 'skip', 'chat:7', ticket, '--yes', '--reason', 'blocking')
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/dropped ticket \d+ of b from chat:7/)
    const err = await dropped
    expect(err).toBeInstanceOf(CoordinationUnavailableError)
    expect((err as CoordinationUnavailableError).reason).toBe('dropped')
    expect(turnA.held).toBe(true)
    expect(await w.audit()).toContainEqual(
      expect.objectContaining({ command: `chat skip chat:7 ${ticket}`, result: 'skipped', reason: 'blocking' }),
    )
    await turnA.release()
  })

  it('lock release bumps the fence; checkpoint rm is compare-and-set on the revision shown', async () => {
    const w = world()
    const lock = (await w.store.acquireLockFenced('invoice:run', 30_000))!
    const stale = await w.cli('lock', 'release', 'invoice:run', '--if-fence', String(lock.fence + 1), '--yes')
    expect(stale.code).toBe(6)
    const r = await w.cli('--json', 'lock', 'release', 'invoice:run', '--yes')
    expect(r.code, r.stderr).toBe(0)
    const out = parseJson<{ fenceBefore: number; fenceAfter: number }>(r)
    expect(out.fenceBefore).toBe(lock.fence)
    expect(out.fenceAfter).toBeGreaterThan(lock.fence)
    expect(await w.store.renewLock('invoice:run', lock.token, 30_000)).toBe(false)
    expect((await w.store.acquireLockFenced('invoice:run', 30_000))!.fence).toBeGreaterThan(out.fenceAfter)

    const rev = await w.store.setCheckpointIf('chat:5', { flow: 'order', step: 'address', state: { items: [1] } }, null)
    expect((await w.cli('checkpoint', 'rm', 'chat:5', '--revision', String(rev - 1), '--yes')).code).toBe(6)
    expect(await w.store.getCheckpoint('chat:5')).not.toBeNull()
    const rm = await w.cli('checkpoint', 'rm', 'chat:5', '--yes')
    expect(rm.code, rm.stderr).toBe(0)
    expect(rm.stdout).toMatch(/removed the checkpoint of chat:5 \(order\/address/)
    expect(await w.store.getCheckpoint('chat:5')).toBeNull()
  })

  it('replica evict: the zombie emits coordination:evicted, its turn is lost, its tickets go, the waiters get the chats', async () => {
    const w = world()
    const a = await w.replica('zombie', ZOMBIE_LEASE)
    const b = await w.replica('b', ZOMBIE_LEASE)
    let evicted = false
    a.on('coordination:evicted', () => (evicted = true))
    const turnA = await a.acquireTurn('chat:1')
    const turnB = await b.acquireTurn('chat:2')
    const bWaits = b.acquireTurn('chat:1', { waitMs: 20_000 })
    const aWaits = a.acquireTurn('chat:2', { waitMs: 20_000 }).catch((e: unknown) => e)
    await untilQueued(a, 'chat:1', ['b'])
    await untilBeatListsWaiting(a, ['chat:2']) // the heartbeat lists what the zombie holds and waits for
    expect((await w.cli('replica', 'evict', 'zombie', '--if-incarnation', 'deadbeef', '--yes')).code).toBe(6)
    const r = await w.cli('replica', 'evict', 'zombie', '--if-incarnation', a.incarnation, '--reason', 'event loop stuck', '--yes')
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/chat chat:1: turn revoked/)
    expect(r.stdout).toMatch(/chat chat:2: 1 ticket\(s\) dropped/)
    const got = await bWaits
    expect(got.fence).toBeGreaterThan(turnA.fence)
    expect(await aWaits).toBeInstanceOf(CoordinationUnavailableError)
    await until(() => evicted, ZOMBIE_LEASE, 'coordination:evicted (at its next beat)')
    expect(() => turnA.assertHeld()).toThrow(LeaseLostError)
    const replicas = await w.cli('--json', 'replicas', 'ls')
    expect(parseJson<{ replicas: Array<{ replicaId: string }> }>(replicas).replicas.map((x) => x.replicaId)).toEqual(['b'])
    await got.release()
    await turnB.release()
  })
})

for (const layout of ['standalone', 'cluster'] as Layout[]) {
  describe(`provider yield (${layout})`, () => {
    it('hands the lead to a standby with a higher fence (--wait), then to a named one (--to), then --force', async () => {
      const w = world(layout)
      const a = await w.replica('a')
      const ea = a.campaign('provider:whatsapp', { sitOutMs: 4000 })
      await until(() => ea.isLeader, 5000, 'a leads')
      const b = await w.replica('b')
      const c = await w.replica('c')
      const eb = b.campaign('provider:whatsapp', { sitOutMs: 4000 })
      const ec = c.campaign('provider:whatsapp', { sitOutMs: 4000 })
      await untilStanding(a, 'provider:whatsapp', ['b', 'c'])
      const f0 = ea.fence!

      const stale = await w.cli('provider', 'yield', 'whatsapp', '--if-fence', String(f0 - 1), '--yes')
      expect(stale.code).toBe(6)
      expect(ea.isLeader).toBe(true)
      const dry = await w.cli('provider', 'yield', 'whatsapp', '--dry-run')
      expect(dry.code).toBe(0)
      expect(dry.stdout).toMatch(/standbys b, c/)

      const r = await w.cli('provider', 'yield', 'whatsapp', '--wait', '--yes', '--reason', 'rotate')
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toMatch(/asked a to yield provider:whatsapp/)
      expect(r.stdout).toMatch(/(b|c) leads provider:whatsapp now \(fence \d+\); takeover took/)
      const next = eb.isLeader ? eb : ec
      await until(() => eb.isLeader || ec.isLeader, 5000, 'a standby leads')
      expect((eb.isLeader ? eb : ec).fence!).toBeGreaterThan(f0)
      const other = next === eb ? 'c' : 'b'
      const notStanding = await w.cli('provider', 'yield', 'whatsapp', '--to', 'nobody', '--yes')
      expect(notStanding.code).toBe(7)

      const to = await w.cli('--json', 'provider', 'yield', 'provider:whatsapp', '--to', other, '--wait', '--yes')
      expect(to.code, to.stderr).toBe(0)
      expect(parseJson<{ takeover: { leader: { replicaId: string } } }>(to).takeover.leader.replicaId).toBe(other)
      const eOther = other === 'b' ? eb : ec
      await until(() => eOther.isLeader, 5000, `${other} leads`)

      const fBefore = eOther.fence
      const forced = await w.cli('provider', 'yield', 'whatsapp', '--force', '--yes')
      expect(forced.code, forced.stderr).toBe(0)
      expect(forced.stdout).toMatch(/revoked provider:whatsapp from/)
      expect(forced.stdout + forced.stderr).toMatch(/hung .*transport/)
      // The revoked leader learns it at once (woken) or at its next renewal; with every other standby
      // sitting out it may stand and win again, but only with a new, higher fence.
      await until(() => eOther.fence !== fBefore, 5000, 'revoked leader loses that lead')

      const audit = await w.audit()
      expect(audit.map((e) => e.result)).toEqual(expect.arrayContaining(['requested', 'revoked']))
      expect(audit.find((e) => e.reason === 'rotate')).toMatchObject({
        key: 'provider:whatsapp',
        fenceBefore: f0,
        command: `provider yield provider:whatsapp --if-fence ${f0}`,
      })
    })
  })
}
