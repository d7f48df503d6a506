import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout } from '../../src/index.js'
import { ScriptRunner } from '../../src/scripts/runner.js'
import { LEASE_RENEW, TURN_ACQUIRE, TURN_RELEASE } from '../../src/scripts/registry.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

const client = new Redis(redisUrl())
afterAll(() => client.quit())

/** A chat of its own under a fresh prefix, the script runner, and the arguments every call shares. */
function turnChat(id: string) {
  const keys = new KeyLayout(uniquePrefix('ts'), 'standalone')
  const k = keys.chat(id)
  const common = {
    leaseMs: 5000,
    idleTtlMs: 60000,
    wakeChannelPrefix: keys.wakeChannelPrefix,
    unserved: false,
    lastWaiter: false,
    queued: false,
  }
  return { keys, k, chat: { state: k.state, queue: k.queue }, scripts: new ScriptRunner(client, 5000), common }
}

describe('turn scripts', () => {
  it('taking a ticket is idempotent per request id: a retry after a lost reply keeps its place', async () => {
    const { k, chat, scripts, common } = turnChat('chat:retry')
    const acquire = (incarnation: string, ticket: number | null, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId: 'r', incarnation, ticket, requestId, ...common })
    const holder = await acquire('i1', null, '1')
    expect(holder.status).toBe('granted')
    const first = await acquire('i2', null, '1') // queued as ticket 2; pretend the reply was lost
    expect(first).toMatchObject({ status: 'queued', ticket: 2, holderLeftMs: expect.any(Number) })
    const retry = await acquire('i2', null, '1') // the retry (same request id) finds ticket 2 again
    expect(retry).toMatchObject({ status: 'queued', ticket: 2, holderLeftMs: expect.any(Number) })
    const later = await acquire('i2', null, '2') // a later message of the same replica queues behind it
    expect(later).toMatchObject({ status: 'queued', ticket: 3, holderLeftMs: expect.any(Number) })
    expect(await client.zrange(k.queue, '0', '-1')).toEqual(['2', '3'])
    // A poll with the known ticket keeps the request-id field (its release or withdrawal deletes it),
    // and says how long the holder's lease runs unless renewed.
    const polled = await acquire('i2', 2, '1')
    expect(polled).toMatchObject({ status: 'queued', ticket: 2 })
    expect((polled as { holderLeftMs: number }).holderLeftMs).toBeGreaterThan(4000)
    expect((polled as { holderLeftMs: number }).holderLeftMs).toBeLessThanOrEqual(5000)
    expect(await client.hexists(k.state, 'rq:i2:1')).toBe(1)
    const released = await scripts.call(TURN_RELEASE, chat, { incarnation: 'i1', ticket: 1, requestId: '1', ...common })
    expect(released).toEqual({ outcome: 'released', handed: null }) // granted to i2: woken, not handed over
    expect(await client.hexists(k.state, 'rq:i1:1')).toBe(0)
    expect(await client.hget(k.state, 'ht')).toBe('2') // the retried ticket was granted first
    expect(await client.hget(k.state, 'of')).toBe('1') // an offer to i2
    // The queued reply behind an offer says how long the offer runs: a lease after i2's last poll here
    // (its tickets' life, two thirds of the lease, plus a third), more than the third it runs at least.
    const behind = await acquire('i3', null, '1')
    expect(behind).toMatchObject({ status: 'queued', ticket: 4 })
    expect((behind as { holderLeftMs: number }).holderLeftMs).toBeLessThanOrEqual(5000)
    expect((behind as { holderLeftMs: number }).holderLeftMs).toBeGreaterThan(Math.floor(5000 / 3))
    // i2's take-up poll: taken ('of' 0), and its other ticket (3) lives on through w:i2.
    expect(await acquire('i2', 2, '1')).toMatchObject({ status: 'granted', ticket: 2 })
    expect(await client.hget(k.state, 'of')).toBe('0')
    expect(Number(await client.hget(k.state, 'w:i2'))).toBeGreaterThan(Date.now())
    // i2's release with no other acquisition of i2 waiting would delete w:i2; with ticket 3 still
    // waiting, it keeps it (lastWaiter false).
    await scripts.call(TURN_RELEASE, chat, { incarnation: 'i2', ticket: 2, requestId: '1', ...common })
    expect(await client.hexists(k.state, 'w:i2')).toBe(1)
    expect(await client.hexists(k.state, 'rq:i2:1')).toBe(0)
    await scripts.call(TURN_RELEASE, chat, { incarnation: 'i2', ticket: 3, requestId: '2', ...common, lastWaiter: true })
    expect(await client.hexists(k.state, 'w:i2')).toBe(0)
  })

  it("a queued ticket lives on through its incarnation's w: field: only one poll per replica and chat keeps them all", async () => {
    const { keys, k, chat, scripts } = turnChat('chat:alive')
    const lease = 600
    const common = {
      leaseMs: lease,
      idleTtlMs: 60000,
      wakeChannelPrefix: keys.wakeChannelPrefix,
      unserved: false,
      lastWaiter: false,
      queued: false,
    }
    const acquire = (replicaId: string, incarnation: string, ticket: number | null, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId, incarnation, ticket, requestId, ...common })
    const holder = await acquire('a', 'ia', null, '1')
    expect(holder.status).toBe('granted')
    const fence = (holder as { fence: number }).fence
    await acquire('b', 'ib', null, '1') // ticket 2
    await acquire('b', 'ib', null, '2') // ticket 3: never polled
    await acquire('c', 'ic', null, '1') // ticket 4: its replica dies (never polls again)
    // Past the tickets' own life (two thirds of the lease), only ib's oldest ticket polls; ia renews.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 180))
      expect(
        await scripts.call(LEASE_RENEW, { lease: k.state }, { incarnation: 'ia', fence, leaseMs: lease, idleTtlMs: 60000 }),
      ).toMatchObject({ ok: true })
      await acquire('b', 'ib', 2, '1')
    }
    expect(Number(await client.hget(k.state, 't:3').then((v) => v!.split('|')[0]))).toBeLessThan(Date.now()) // 3's own deadline passed
    // ia releases: 2 is offered; ib takes it up, releases, and 3 — never polled — is still alive.
    await scripts.call(TURN_RELEASE, chat, { incarnation: 'ia', ticket: 1, requestId: '1', ...common })
    expect(await acquire('b', 'ib', 2, '1')).toMatchObject({ status: 'granted', ticket: 2 })
    const handed = await scripts.call(TURN_RELEASE, chat, { incarnation: 'ib', ticket: 2, requestId: '1', ...common })
    expect(handed.handed).toMatchObject({ ticket: 3 }) // ib's own next ticket, handed over in the reply
    // ic's ticket was skipped as dead when 3 is released, and its w: field went with it.
    const skippedBefore = Number((await client.hget(k.state, 'sk')) ?? 0)
    await scripts.call(TURN_RELEASE, chat, { incarnation: 'ib', ticket: 3, requestId: '2', ...common, lastWaiter: true })
    expect(Number(await client.hget(k.state, 'sk'))).toBe(skippedBefore + 1)
    expect(await client.hexists(k.state, 'w:ic')).toBe(0)
    expect(await client.hexists(k.state, 'h')).toBe(0)
  })

  it("an offer runs until the later of its ticket's own deadline and its replica's w: field, plus a third of the lease", async () => {
    const { k, chat, scripts, common } = turnChat('chat:offer-length')
    const third = Math.floor(common.leaseMs / 3)
    const acquire = (replicaId: string, incarnation: string, ticket: number | null, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId, incarnation, ticket, requestId, ...common })
    const release = (incarnation: string, ticket: number, requestId: string) =>
      scripts.call(TURN_RELEASE, chat, { incarnation, ticket, requestId, ...common })
    const field = async (f: string) => Number(await client.hget(k.state, f))
    const own = async (t: number) => Number((await client.hget(k.state, `t:${t}`))!.split('|')[0])
    expect(await acquire('a', 'ia', null, '1')).toMatchObject({ status: 'granted', ticket: 1 })
    expect(await acquire('b', 'ib', null, '1')).toMatchObject({ status: 'queued', ticket: 2 })
    expect(await acquire('c', 'ic', null, '1')).toMatchObject({ status: 'queued', ticket: 3 })
    // b's take set both deadlines alike: the offer runs a lease after it, at most a lease from the grant.
    const own2 = await own(2)
    expect(await field('w:ib')).toBe(own2)
    await release('ia', 1, '1')
    expect(await client.hmget(k.state, 'h', 'of')).toEqual(['b', '1'])
    expect(await field('exp')).toBe(own2 + third)
    expect(await field('exp')).toBeLessThanOrEqual((await field('g')) + common.leaseMs)
    // b's offer lapses untaken. c polled since its take (w:ic later than ticket 3's own deadline): that decides.
    const w = (await own(3)) + 700
    await client.hset(k.state, 'exp', '1', 'w:ic', String(w))
    expect(await acquire('d', 'id', null, '1')).toMatchObject({ status: 'queued', ticket: 4 }) // finds b's offer lapsed
    expect(await client.hmget(k.state, 'h', 'of')).toEqual(['c', '1'])
    expect(await field('exp')).toBe(w + third)
  })

  it('a turn granted at once keeps no request-id field: a take or a withdrawal sent again finds it by the holder', async () => {
    const { k, chat, scripts, common } = turnChat('chat:fast')
    const acquire = (replicaId: string, incarnation: string, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId, incarnation, ticket: null, requestId, ...common })
    const withdraw = (incarnation: string, requestId: string) =>
      scripts.call(TURN_RELEASE, chat, { incarnation, ticket: null, requestId, ...common })

    const granted = await acquire('r', 'i1', '7')
    expect(granted).toMatchObject({ status: 'granted', ticket: 1 })
    expect(await client.hkeys(k.state)).not.toContain('rq:i1:7')
    expect(await client.hmget(k.state, 'hi', 'hq', 'ht')).toEqual(['i1', '7', '1'])
    // The first ticket of i1 in the chat: no other of its tickets was queued here.
    const { alone, ...grant } = granted as { alone?: boolean }
    expect(alone).toBe(true)
    // Sent again (its reply lost): the same grant, not a second ticket queued behind it.
    expect(await acquire('r', 'i1', '7')).toEqual(grant)
    expect(await client.hget(k.state, 'n')).toBe('1')
    // Another acquisition of the same incarnation, and the same request id of another incarnation
    // of the same replica (a restart), are not that grant: they queue.
    // (i1's retry above, a poll of the holder, wrote w:i1: i1's take is not alone; i9's is.)
    expect(await acquire('r', 'i1', '8')).toMatchObject({ status: 'queued', ticket: 2, holderLeftMs: expect.any(Number), alone: false })
    expect(await acquire('r', 'i9', '7')).toMatchObject({ status: 'queued', ticket: 3, holderLeftMs: expect.any(Number), alone: true })
    expect(await acquire('r', 'i9', '9')).toMatchObject({ status: 'queued', ticket: 4, alone: false }) // behind i9's ticket 3
    // A withdrawal by request id of a take whose reply never came gives the granted turn back.
    expect(await withdraw('i9', '8')).toEqual({ outcome: 'not-ours', handed: null })
    expect(await client.hget(k.state, 'ht')).toBe('1')
    const back = await withdraw('i1', '7')
    expect(back).toMatchObject({ outcome: 'released', handed: { ticket: 2, requestId: '8' } })
    expect(await client.hmget(k.state, 'hi', 'hq', 'ht')).toEqual(['i1', '8', '2'])
  })

  it('a ticket number given again after Redis lost writes answers only the acquisition that took it', async () => {
    const { keys, k, chat, scripts, common } = turnChat('chat:reissued')
    const acquire = (incarnation: string, ticket: number | null, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId: 'r', incarnation, ticket, requestId, ...common })
    const release = (incarnation: string, ticket: number, requestId: string) =>
      scripts.call(TURN_RELEASE, chat, { incarnation, ticket, requestId, ...common })
    const wakes: string[] = []
    const sub = client.duplicate()
    sub.on('message', (_channel: string, message: string) => wakes.push(message))
    await sub.subscribe(`${keys.wakeChannelPrefix}i2`)
    try {
      expect((await acquire('i1', null, '1')).status).toBe('granted') // i1 holds ticket 1
      const [snapshot, ttl] = await Promise.all([client.dumpBuffer(k.state), client.pttl(k.state)])
      expect(await acquire('i2', null, '1')).toMatchObject({ status: 'queued', ticket: 2, holderLeftMs: expect.any(Number) })
      // Redis loses that write (a failover to a standby behind): the ticket counter is back at 1
      await client.restore(k.state, ttl, snapshot, 'REPLACE')
      await client.del(k.queue)
      expect(await acquire('i2', null, '2')).toMatchObject({ status: 'queued', ticket: 2, holderLeftMs: expect.any(Number) }) // 2 again, to another message of i2
      expect(await acquire('i2', 2, '1')).toEqual({ status: 'dropped' }) // the lost ticket is gone…
      expect(await release('i2', 2, '1')).toEqual({ outcome: 'not-ours', handed: null }) // …and withdrawing it leaves the other's alone
      expect(await client.zrange(k.queue, '0', '-1')).toEqual(['2'])

      expect(await release('i1', 1, '1')).toEqual({ outcome: 'released', handed: null }) // ticket 2 is granted, woken with its request id
      await until(() => wakes.length > 0, 5000, 'the wake-up of the grant')
      expect(JSON.parse(wakes[0]!)).toMatchObject({ t: '2', q: '2' })
      expect(await acquire('i2', 2, '1')).toEqual({ status: 'dropped' }) // the grant is not the lost one's…
      // …nor can it give the turn back (the turn of i2 that holds the chat is reported: with the
      // request id of the acquisition it is for, which the coordinator routes it by)
      expect(await release('i2', 2, '1')).toMatchObject({ outcome: 'not-ours', handed: { ticket: 2, requestId: '2' } })
      expect(await acquire('i2', 2, '2')).toMatchObject({ status: 'granted', ticket: 2 }) // still the taker's
    } finally {
      await sub.quit()
    }
  })

  it("a release hands the turn to the same incarnation's next ticket in its reply, with no wake-up; sent again, it reports it again", async () => {
    const { keys, k, chat, scripts, common } = turnChat('chat:local')
    const acquire = (incarnation: string, ticket: number | null, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId: incarnation === 'i1' ? 'r1' : 'r2', incarnation, ticket, requestId, ...common })
    const release = (incarnation: string, ticket: number, requestId: string) =>
      scripts.call(TURN_RELEASE, chat, { incarnation, ticket, requestId, ...common })
    const wakes: string[] = []
    const sub = client.duplicate()
    sub.on('message', (channel: string, message: string) => wakes.push(`${channel.slice(keys.wakeChannelPrefix.length)} ${message}`))
    await sub.subscribe(`${keys.wakeChannelPrefix}i1`, `${keys.wakeChannelPrefix}i2`)
    try {
      const first = await acquire('i1', null, '1')
      expect(first).toMatchObject({ status: 'granted', ticket: 1 })
      const fence1 = (first as { fence: number }).fence
      expect(await acquire('i1', null, '2')).toMatchObject({ status: 'queued', ticket: 2, holderLeftMs: expect.any(Number) })
      expect(await acquire('i2', null, '1')).toMatchObject({ status: 'queued', ticket: 3, holderLeftMs: expect.any(Number) })
      expect(await acquire('i1', null, '3')).toMatchObject({ status: 'queued', ticket: 4, holderLeftMs: expect.any(Number) })

      const handed = await release('i1', 1, '1')
      expect(handed).toEqual({
        outcome: 'released',
        handed: {
          ticket: 2,
          fence: expect.any(Number),
          requestId: '2',
          previousHolder: { replicaId: 'r1', incarnation: 'i1' },
          leaseMs: 5000,
        },
      })
      expect(handed.handed!.fence).toBeGreaterThan(fence1)
      expect(await client.hmget(k.state, 'hi', 'ht', 'hq', 'f')).toEqual(['i1', '2', '2', String(handed.handed!.fence)])
      expect(await client.zrange(k.queue, '0', '-1')).toEqual(['3', '4'])
      // Sent again (its reply lost): nothing of ticket 1 is left, and the turn it handed over is reported again.
      expect(await release('i1', 1, '1')).toEqual({ outcome: 'not-ours', handed: handed.handed })
      // The grant to i2's ticket 3 is pushed to i2, not handed to i1.
      expect(await release('i1', 2, '2')).toEqual({ outcome: 'released', handed: null })
      await until(() => wakes.length > 0, 5000, 'the wake-up of i2')
      // i2 releases ticket 3: i1's ticket 4 is next, and pushed to i1 (it is not i2's own).
      expect(await release('i2', 3, '1')).toEqual({ outcome: 'released', handed: null })
      await until(() => wakes.length > 1, 5000, 'the wake-up of i1 for ticket 4')
      // Only pushes across incarnations: none on i1's channel before ticket 4 (a PING on the subscriber
      // is answered after every message published before it).
      await sub.ping()
      expect(wakes.map((w) => w.split(' ')[0])).toEqual(['i2', 'i1'])
      expect(JSON.parse(wakes[1]!.slice(3))).toMatchObject({ t: '4', q: '3' })
    } finally {
      await sub.quit()
    }
  })

  it('a release of a turn that came through the queue grants the ticket after its own from the fields it read with its own, and any other head from a read of its own', async () => {
    const { keys, k, chat, scripts, common } = turnChat('chat:ahead')
    const acquire = (incarnation: string, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId: `r-${incarnation}`, incarnation, ticket: null, requestId, ...common })
    const release = (incarnation: string, ticket: number, requestId: string) =>
      scripts.call(TURN_RELEASE, chat, { incarnation, ticket, requestId, ...common, queued: true })
    const wakes: Array<{ channel: string; grant: { t: string; q: string } }> = []
    const sub = client.duplicate()
    sub.on('message', (channel: string, message: string) =>
      wakes.push({ channel: channel.slice(keys.wakeChannelPrefix.length), grant: JSON.parse(message) as { t: string; q: string } }),
    )
    await sub.subscribe(...['i2', 'i3', 'i4'].map((i) => `${keys.wakeChannelPrefix}${i}`))
    try {
      expect(await acquire('i1', 'a')).toMatchObject({ status: 'granted', ticket: 1 })
      expect(await acquire('i2', 'b')).toMatchObject({ status: 'queued', ticket: 2 })
      expect(await acquire('i3', 'c')).toMatchObject({ status: 'queued', ticket: 3 })
      expect(await acquire('i4', 'd')).toMatchObject({ status: 'queued', ticket: 4 })
      // Ticket 2, the one after the holder's, is the head: granted to i2 with i2's request id.
      expect(await release('i1', 1, 'a')).toEqual({ outcome: 'released', handed: null })
      expect(await client.hmget(k.state, 'h', 'hi', 'ht', 'hq')).toEqual(['r-i2', 'i2', '2', 'b'])
      // i3 withdraws ticket 3: the head after ticket 2 is 4, not the one after it, and is read by itself.
      expect(await release('i3', 3, 'c')).toEqual({ outcome: 'withdrawn', handed: null })
      expect(await release('i2', 2, 'b')).toEqual({ outcome: 'released', handed: null })
      expect(await client.hmget(k.state, 'h', 'hi', 'ht', 'hq')).toEqual(['r-i4', 'i4', '4', 'd'])
      expect(await client.zcard(k.queue)).toBe(0)
      expect(await client.hkeys(k.state).then((f) => f.filter((x) => /^(t|q|rq):/.test(x)))).toEqual(['rq:i4:d']) // ticket 4's request, until its release
      await until(() => wakes.length >= 2, 5000, 'the wake-ups of i2 and i4')
      await sub.ping()
      expect(wakes.map((w) => [w.channel, w.grant.t, w.grant.q])).toEqual([
        ['i2', '2', 'b'],
        ['i4', '4', 'd'],
      ])
    } finally {
      await sub.quit()
    }
  })

  it('a release behind thousands of dead tickets skips them all in one script (fields deleted in batches, counted once)', async () => {
    const { k, chat, scripts, common } = turnChat('chat:dead-run')
    const acquire = (incarnation: string, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId: 'r', incarnation, ticket: null, requestId, ...common })
    expect((await acquire('i1', '1')).status).toBe('granted')
    // 5,000 tickets of a replica that died long ago, written by hand (past Lua's unpack limit in one HDEL).
    const pipe = client.pipeline()
    for (let n = 2; n <= 5001; n++) {
      pipe.hset(k.state, `t:${n}`, `1|1|dead|gone`, `q:${n}`, String(n))
      pipe.zadd(k.queue, n, String(n))
    }
    pipe.hset(k.state, 'n', '5001')
    await pipe.exec()
    const released = await scripts.call(TURN_RELEASE, chat, { incarnation: 'i1', ticket: 1, requestId: '1', ...common })
    expect(released).toEqual({ outcome: 'released', handed: null })
    expect(await client.zcard(k.queue)).toBe(0)
    expect(await client.hget(k.state, 'sk')).toBe('5000')
    const fields = await client.hkeys(k.state)
    expect(fields.filter((f) => f.startsWith('t:') || f.startsWith('q:'))).toEqual([])
    expect(fields).not.toContain('h')
  })

  it('a release or withdrawal on a chat whose fence is corrupt is refused before it writes anything', async () => {
    const { k, chat, scripts, common } = turnChat('chat:corrupt-fence')
    const acquire = (incarnation: string, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId: 'r', incarnation, ticket: null, requestId, ...common })
    expect((await acquire('i1', '1')).status).toBe('granted')
    expect((await acquire('i2', '1')).status).toBe('queued')
    await client.hset(k.state, 'f', '1e300')
    const before = [await client.hgetall(k.state), await client.zrange(k.queue, '0', '-1')]
    for (const [incarnation, ticket] of [
      ['i1', 1],
      ['i2', 2],
    ] as const) {
      const err = await scripts.call(TURN_RELEASE, chat, { incarnation, ticket, requestId: '1', ...common }).catch((e: unknown) => e)
      expect(String(err)).toMatch(/CorruptStateError: .*its fence is not a decimal integer/)
    }
    expect([await client.hgetall(k.state), await client.zrange(k.queue, '0', '-1')]).toEqual(before)
  })

  it('an offer released untaken while another replica waits: its holder is the last holder, in the same write as the next offer', async () => {
    const { k, chat, scripts, common } = turnChat('chat:offer-next')
    const acquire = (replicaId: string, incarnation: string, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId, incarnation, ticket: null, requestId, ...common })
    expect(await acquire('a', 'ia', '1')).toMatchObject({ status: 'granted', ticket: 1 })
    expect(await acquire('b', 'ib', '2')).toMatchObject({ status: 'queued', ticket: 2 })
    expect(await acquire('c', 'ic', '3')).toMatchObject({ status: 'queued', ticket: 3 })
    await scripts.call(TURN_RELEASE, chat, { incarnation: 'ia', ticket: 1, requestId: '1', ...common })
    expect(await client.hmget(k.state, 'h', 'of', 'lh')).toEqual(['b', '1', 'a'])
    // b used its offer and gives it back, having served: c is offered the turn, and b is the last
    // holder (who served before c), not a.
    await scripts.call(TURN_RELEASE, chat, { incarnation: 'ib', ticket: 2, requestId: '2', ...common })
    expect(await client.hmget(k.state, 'h', 'of', 'lh', 'lhi', 'ph', 'phi')).toEqual(['c', '1', 'b', 'ib', 'b', 'ib'])
  })

  it('a ticket skipped as presumed dead answers its late poll with presumedDead, once; a lapsed offer with lapsed; an operator skip stays dropped', async () => {
    const { k, chat, scripts, common } = turnChat('chat:presumed-dead')
    const acquire = (replicaId: string, incarnation: string, ticket: number | null, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId, incarnation, ticket, requestId, ...common })
    expect(await acquire('a', 'ia', null, '1')).toMatchObject({ status: 'granted', ticket: 1 })
    expect(await acquire('b', 'ib', null, '2')).toMatchObject({ status: 'queued', ticket: 2 })
    expect(await acquire('c', 'ic', null, '3')).toMatchObject({ status: 'queued', ticket: 3 })
    // b stops polling (frozen, cut off, too slow): its ticket's deadline and its w: field pass.
    await client.hset(k.state, 't:2', '1|1|ib|b', 'w:ib', '1')
    await scripts.call(TURN_RELEASE, chat, { incarnation: 'ia', ticket: 1, requestId: '1', ...common })
    expect(await client.hget(k.state, 'h')).toBe('c') // ticket 2 skipped
    expect(await client.hget(k.state, 'x:2')).toBe('ib')
    // b's poll comes after all: not an operator's skip (its waiter fails 'stale-grant', not 'dropped'); the mark has served.
    expect(await acquire('b', 'ib', 2, '2')).toEqual({ status: 'dropped', presumedDead: true })
    expect(await client.hexists(k.state, 'x:2')).toBe(0)
    expect(await acquire('b', 'ib', 2, '2')).toEqual({ status: 'dropped' })

    // An offer its waiter never took up lapses, and the chat moves on (d's take finds a dead holder):
    // the waiter's late poll learns it lapsed, as when the offer is still the chat's last grant.
    expect(await acquire('d', 'id', null, '4')).toMatchObject({ status: 'queued', ticket: 4 })
    await scripts.call(TURN_RELEASE, chat, { incarnation: 'ic', ticket: 3, requestId: '3', ...common })
    expect(await client.hmget(k.state, 'h', 'of')).toEqual(['d', '1'])
    expect(await acquire('e', 'ie', null, '5')).toMatchObject({ status: 'queued', ticket: 5 })
    await client.hset(k.state, 'exp', '1') // d never takes its offer up
    expect(await acquire('e', 'ie', 5, '5')).toMatchObject({ status: 'granted', ticket: 5 })
    expect(await client.hget(k.state, 'x:4')).toBe('l:id')
    expect(await acquire('d', 'id', 4, '4')).toEqual({ status: 'expired', ticket: 4 })
    expect(await client.hexists(k.state, 'x:4')).toBe(0)
  })

  it("an offer: its push is stamped after the waiter's queued answer; a renewal takes it up; a release says whether it served", async () => {
    const { keys, k, chat, scripts, common } = turnChat('chat:offer')
    const acquire = (replicaId: string, incarnation: string, ticket: number | null, requestId: string) =>
      scripts.call(TURN_ACQUIRE, chat, { replicaId, incarnation, ticket, requestId, ...common })
    const sub = new Redis(redisUrl())
    const pushes: Array<Record<string, unknown>> = []
    sub.on('message', (_ch: string, m: string) => pushes.push(JSON.parse(m) as Record<string, unknown>))
    await sub.subscribe(keys.wakeChannel('ib'))
    try {
      const offer = async (ticket: number) => {
        const queued = await acquire('b', 'ib', null, String(ticket))
        expect(queued).toMatchObject({ status: 'queued', ticket, answeredAt: expect.any(Number) })
        const answeredAt = (queued as { answeredAt: number }).answeredAt
        expect(Math.abs(answeredAt / 1000 - Date.now())).toBeLessThan(5000) // Redis's clock, in µs
        return answeredAt
      }
      // a holds; b queues and is offered the turn by a's release: the push is stamped later.
      const held = await acquire('a', 'ia', null, '1')
      expect(held.status).toBe('granted')
      const answeredAt = await offer(2)
      await scripts.call(TURN_RELEASE, chat, { incarnation: 'ia', ticket: 1, requestId: '1', ...common })
      await until(() => expect(pushes).toHaveLength(1), 3000, 'push received')
      expect(pushes[0]).toMatchObject({ t: '2', q: '2', p: 'a', pi: 'ia' })
      expect(Number(pushes[0]!.g)).toBeGreaterThan(answeredAt)
      expect(await client.hmget(k.state, 'h', 'of', 'lh')).toEqual(['b', '1', 'a'])
      // Released without a take-up, having served: b is the last holder, as a take-up would make it.
      await scripts.call(TURN_RELEASE, chat, { incarnation: 'ib', ticket: 2, requestId: '2', ...common })
      expect(await client.hget(k.state, 'lh')).toBe('b')
      // Offered again (c holds, b queues), then renewed: taken up, exp a whole lease on.
      await acquire('c', 'ic', null, '1')
      await offer(4)
      await scripts.call(TURN_RELEASE, chat, { incarnation: 'ic', ticket: 3, requestId: '1', ...common })
      const fence = Number(await client.hget(k.state, 'f'))
      expect(await client.hmget(k.state, 'h', 'of', 'lh')).toEqual(['b', '1', 'c'])
      expect(
        await scripts.call(LEASE_RENEW, { lease: k.state }, { incarnation: 'ib', fence, leaseMs: 5000, idleTtlMs: 60000 }),
      ).toMatchObject({
        ok: true,
      })
      expect(await client.hmget(k.state, 'h', 'of', 'lh')).toEqual(['b', '0', 'b'])
      expect(Number(await client.hget(k.state, 'exp'))).toBeGreaterThan(Date.now() + 4000)
      await scripts.call(TURN_RELEASE, chat, { incarnation: 'ib', ticket: 4, requestId: '4', ...common })
      // Offered once more and given back unused (a wait that ended as the grant came): the last
      // holder stays who served before it.
      await acquire('c', 'ic', null, '2')
      await offer(6)
      await scripts.call(TURN_RELEASE, chat, { incarnation: 'ic', ticket: 5, requestId: '2', ...common })
      expect(await client.hmget(k.state, 'h', 'of', 'lh')).toEqual(['b', '1', 'c'])
      await scripts.call(TURN_RELEASE, chat, { incarnation: 'ib', ticket: 6, requestId: '6', ...common, unserved: true })
      expect(await client.hget(k.state, 'lh')).toBe('c')
    } finally {
      await sub.quit()
    }
  })
})
