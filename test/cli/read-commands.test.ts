/**
 * Every read command end to end — the built binary as a subprocess, live state made by real
 * replicas — on standalone Redis and on the 3-master Redis Cluster: --json fields and tables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Cluster, Redis } from 'ioredis'
import { clusterUrl, hostPort, redisUrl, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli, type CliResult } from '../helpers/cli.js'
import { liveState, type LiveState } from './read-fixture.js'
import { KeyLayout, RedisCoordinator, type Layout } from '../../src/index.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

for (const layout of ['standalone', 'cluster'] as Layout[]) {
  describe(`read commands on ${layout}`, () => {
    let s: LiveState
    const url = () => (layout === 'cluster' ? clusterUrl() : redisUrl())
    const cli = (...args: string[]) => runCli(['--url', url(), '--prefix', s.prefix, ...args])
    /** The same command as --json and as a table, run side by side. */
    const both = async (...args: string[]): Promise<[J, CliResult]> => {
      const [j, t] = await Promise.all([cli(...args, '--json'), cli(...args)])
      expect(j.stderr).toBe('')
      expect(j.code).toBe(0)
      expect(t.code).toBe(0)
      const body = parseJson<J>(j)
      expect(body.schemaVersion).toBe(1)
      return [body, t]
    }

    beforeAll(async () => {
      s = await liveState(url(), uniquePrefix(`read-${layout.slice(0, 2)}`), layout)
    })
    afterAll(async () => {
      await s?.stop()
    })

    it('replicas ls', async () => {
      const [j, t] = await both('replicas', 'ls')
      expect(j.replicas.map((r: J) => r.replicaId)).toEqual(['pod-a', 'pod-b', 'pod-c'])
      expect(j.replicas[0]).toMatchObject({ incarnation: s.a.incarnation, leasesHeld: 2, pid: process.pid })
      expect(t.stdout).toMatch(/^REPLICA\s+INCARNATION\s+STATE\s+HEARTBEAT/)
      expect(j.replicas.map((r: J) => r.state)).toEqual(['ok', 'ok', 'ok'])
      expect(t.stdout).toContain(s.a.incarnation.slice(0, 8))
      // What its last beat said about waiting: pod-b waits for chat:42 and chat:7; nobody shed a message.
      const [a, b] = j.replicas as J[]
      expect(a).toMatchObject({ waitingNow: 0, oldestWaitMs: null, turnsShed: 0 })
      expect(a!.turnsGranted).toBeGreaterThanOrEqual(2) // chat:42 and chat:9
      expect(b).toMatchObject({ waitingNow: 2, turnsShed: 0 })
      expect(b!.oldestWaitMs).toEqual(expect.any(Number))
      expect(b!.oldestWaitMs).toBeGreaterThan(0)
      expect(t.stdout).toMatch(/^REPLICA\s+INCARNATION\s+STATE\s+HEARTBEAT\s+LEASES\s+TURNS\s+WAITING\s+OLDEST\s+WAIT P99\s+LOST\s+HOST/)
      const lines = t.stdout.split('\n')
      const col = (line: string, header: string) => line.slice(lines[0]!.indexOf(header)).split(/\s+/)[0]
      expect(
        col(
          lines.find((l) => l.startsWith('pod-a'))!,
          'OLDEST',
        ),
      ).toBe('-')
      expect(
        col(
          lines.find((l) => l.startsWith('pod-b'))!,
          'OLDEST',
        ),
      ).toMatch(/^\d+(\.\d+)?(ms|s|m)/)
      const [wide, byOldest] = await Promise.all([
        cli('replicas', 'ls', '-o', 'wide'),
        cli('replicas', 'ls', '--sort', 'oldest', '-o', 'name'),
      ])
      expect(wide.stdout).toMatch(/^REPLICA\s.*\sWAITING\s+OLDEST\s.*\sSHED\s+LEASE\s+CLOCK SKEW$/m)
      expect(byOldest.stdout.split('\n')[0]).toBe('replica/pod-b')
    })

    it('leases ls, with filters and sorting', async () => {
      const [j, t] = await both('leases', 'ls')
      const keys = j.leases.map((l: J) => `${l.kind} ${l.key}`)
      expect(keys).toEqual(['chat chat:42', 'chat chat:7', 'provider provider:whatsapp', 'scheduler scheduler:report', 'lock invoice:run'])
      const chat42 = j.leases.find((l: J) => l.key === 'chat:42')
      expect(chat42).toEqual({
        kind: 'chat',
        key: 'chat:42',
        replicaId: 'pod-a',
        incarnation: s.a.incarnation,
        owner: null,
        fence: s.fence42,
        expiresInMs: expect.any(Number),
        state: 'ok',
        reason: expect.stringMatching(/^holder pod-a renews/),
        lastRenewalAgoMs: expect.any(Number),
        renewMs: expect.any(Number),
        renewalOverdueMs: expect.any(Number),
        heldForMs: expect.any(Number),
        holderAlive: true,
      })
      expect(chat42.expiresInMs).toBeGreaterThan(10_000)
      expect(j.leases.find((l: J) => l.key === 'chat:7')).toMatchObject({
        replicaId: 'pod-c',
        incarnation: s.oldC.incarnation,
        holderAlive: false,
        state: 'stale',
      })
      expect(t.stdout).toMatch(/^KIND\s+KEY\s+HOLDER/)
      expect(t.stdout).toMatch(/provider\s+provider:whatsapp\s+pod-a/)
      expect(t.stdout).toMatch(/chat:7\s+pod-c.*NO/)

      const [byKind, stale, byReplica, expiring, sorted] = await Promise.all([
        cli('leases', 'ls', '--kind', 'provider,lock', '--json'),
        cli('leases', 'ls', '--stale', '--json'),
        cli('leases', 'ls', '--replica', 'pod-b', '--json'),
        cli('leases', 'ls', '--expiring', '100ms', '--json'),
        cli('leases', 'ls', '--sort', 'expires', '--json'),
      ])
      expect(parseJson<J>(byKind).leases.map((l: J) => l.key)).toEqual(['provider:whatsapp', 'invoice:run'])
      expect(parseJson<J>(stale).leases.map((l: J) => l.key)).toEqual(['chat:7'])
      expect(parseJson<J>(byReplica).leases.map((l: J) => l.key)).toEqual(['scheduler:report'])
      expect(parseJson<J>(expiring).leases).toEqual([])
      const left = parseJson<J>(sorted).leases.map((l: J) => l.expiresInMs)
      expect(left).toEqual([...left].sort((x: number, y: number) => x - y))
    })

    it('chat ls (--waiting)', async () => {
      const [j, t] = await both('chat', 'ls')
      expect(j.chats.map((c: J) => c.key).sort()).toEqual(['chat:42', 'chat:7']) // chat:9 is idle
      expect(j.chats.find((c: J) => c.key === 'chat:42')).toMatchObject({
        kind: 'chat',
        replicaId: 'pod-a',
        incarnation: s.a.incarnation,
        fence: s.fence42,
        queueLength: 1,
        oldestWaitMs: expect.any(Number),
        expiresInMs: expect.any(Number),
        staleTickets: 0,
      })
      expect(t.stdout).toMatch(/^CHAT\s+HOLDER/)
      expect(t.stdout).toMatch(/chat:7\s+pod-c \(dead\)/)
      const w = parseJson<J>(await cli('chat', 'ls', '--waiting', '--json'))
      expect(w.chats).toHaveLength(2)
    })

    it('chat inspect --explain names why chat:7 is stuck; chat:42 is fine', async () => {
      const [j, t] = await both('chat', 'inspect', 'chat:7', '--explain')
      expect(j.chat).toMatchObject({
        kind: 'chat',
        key: 'chat:7',
        replicaId: 'pod-c',
        incarnation: s.oldC.incarnation,
        fence: expect.any(Number),
        expiresInMs: expect.any(Number),
        holder: { status: 'stale', alive: false },
        tickets: [{ ticket: 2, replicaId: 'pod-b', incarnation: s.b.incarnation, alive: true, state: 'alive' }],
        handover: { name: 'survey', replicaId: 'pod-c', ownerAlive: false },
      })
      expect(j.explain.verdict).toBe('stuck')
      expect(j.explain.findings[0]).toMatchObject({ code: 'holder-stale-incarnation', severity: 'problem' })
      expect(t.stdout).toContain('STUCK')
      // Pinned to the fence seen, with the connection it came from: it runs as pasted.
      expect(t.stdout).toContain(`botmesh-coord --url ${url()} --prefix ${s.prefix} chat release chat:7 --if-fence ${j.chat.fence}`)
      expect(t.stdout).toMatch(/queue \(1, in grant order\)/)

      const [j42, t42] = await both('chat', 'inspect', 'chat:42', '--fingerprint', 'other')
      expect(j42.chat.checkpoint).toMatchObject({
        flow: 'order',
        step: 'address',
        ephemeral: true,
        fingerprint: 'f1a2b3',
        fence: s.fence42,
        answerBytes: 18,
      })
      expect(j42.explain.findings.map((f: J) => f.code)).toEqual(['fingerprint-mismatch'])
      expect(t42.stdout).toMatch(/checkpoint\s+order at step address/)
    })

    it('provider ls and provider status (bare name)', async () => {
      const [j, t] = await both('provider', 'ls')
      expect(j.providers).toEqual([
        expect.objectContaining({
          kind: 'provider',
          key: 'provider:whatsapp',
          replicaId: 'pod-a',
          incarnation: s.a.incarnation,
          fence: expect.any(Number),
          expiresInMs: expect.any(Number),
          standbys: [expect.objectContaining({ replicaId: 'pod-b', alive: true })],
          pendingYield: null,
        }),
      ])
      expect(t.stdout).toMatch(/provider:whatsapp\s+pod-a\s+\w{8}\s+\S+ ago\s+\d+\s+\S+\s+\S+ ago\s+up\s+pod-b/)
      const [js, ts] = await both('provider', 'status', 'whatsapp')
      expect(js.provider).toMatchObject({ key: 'provider:whatsapp', replicaId: 'pod-a', holderAlive: true })
      expect(ts.stdout).toMatch(/leader\s+pod-a/)
      expect(ts.stdout).toMatch(/standbys \(1\)/)
    })

    it('checkpoints ls (--ephemeral, --flow) and checkpoint inspect', async () => {
      const [j, t] = await both('checkpoints', 'ls')
      expect(j.checkpoints.map((c: J) => [c.key, c.flow, c.ephemeral])).toEqual([
        ['chat:42', 'order', true],
        ['chat:9', 'signup', false],
      ])
      expect(t.stdout).toMatch(/chat:42\s+order\s+address/)
      const [eph, flow] = await Promise.all([
        cli('checkpoints', 'ls', '--ephemeral', '--json'),
        cli('checkpoints', 'ls', '--flow', 'signup', '--json'),
      ])
      expect(parseJson<J>(eph).checkpoints.map((c: J) => c.key)).toEqual(['chat:42'])
      expect(parseJson<J>(flow).checkpoints.map((c: J) => c.key)).toEqual(['chat:9'])
      const [ji, ti] = await both('checkpoint', 'inspect', 'chat:42')
      expect(ji.checkpoint).toMatchObject({
        key: 'chat:42',
        state: { items: [1, 2] },
        answer: { text: 'Calle 5' },
        revision: expect.any(Number),
      })
      expect(ji.checkpoint.expiresInMs).toBeGreaterThan(500_000)
      expect(ti.stdout).toContain('{"items":[1,2]}')
    })

    it('handover ls, locks ls', async () => {
      const [h, ht] = await both('handover', 'ls')
      expect(h.handovers).toEqual([
        expect.objectContaining({ kind: 'handover', key: 'chat:7', name: 'survey', replicaId: 'pod-c', ownerAlive: false }),
      ])
      expect(ht.stdout).toMatch(/chat:7\s+survey\s+pod-c/)
      const [l, lt] = await both('locks', 'ls')
      expect(l.locks).toEqual([
        expect.objectContaining({
          kind: 'lock',
          key: 'invoice:run',
          held: true,
          fence: expect.any(Number),
          expiresInMs: expect.any(Number),
        }),
      ])
      expect(l.leads).toEqual([expect.objectContaining({ kind: 'scheduler', key: 'scheduler:report', replicaId: 'pod-b' })])
      expect(lt.stdout).toMatch(/lock\s+invoice:run/)
      expect(lt.stdout).toMatch(/scheduler\s+scheduler:report\s+pod-b/)
    })

    it('events', async () => {
      const [j, t] = await both('events', '-n', '100')
      const types = j.events.map((e: J) => e.type)
      expect(types).toContain('replica-start')
      expect(types).toContain('leader')
      expect(j.events[0]).toMatchObject({ id: expect.any(String), atMs: expect.any(Number), replicaId: expect.any(String) })
      expect(t.stdout).toMatch(/^WHEN\s+TYPE\s+REPLICA/)
      const only = parseJson<J>(await cli('events', '--type', 'leader', '--json'))
      expect(only.events.every((e: J) => e.type === 'leader')).toBe(true)
    })

    it('doctor: warnings only (exit 0) on a healthy setup', async () => {
      const [j, t] = await Promise.all([cli('doctor', '--json'), cli('doctor')])
      const body = parseJson<J>(j)
      expect(j.code).toBe(0)
      expect(body.checks.find((c: J) => c.id === 'eviction-policy').status).toBe('ok')
      expect(body.checks.find((c: J) => c.id === 'layout').status).toBe('ok')
      expect(body.checks.find((c: J) => c.id === 'zombie-leases').status).toBe('warn') // old pod-c's turn
      // Its fix names the turn's release pinned to the fence doctor saw, not a placeholder.
      expect(body.checks.find((c: J) => c.id === 'zombie-leases').fix).toMatch(/chat release \S+ --if-fence \d+/)
      expect(body.target).toMatchObject({ layout, masters: layout === 'cluster' ? 3 : 1 })
      if (layout === 'cluster') expect(body.checks.find((c: J) => c.id === 'cluster').status).toBe('ok')
      expect(t.code).toBe(0)
      expect(t.stdout).toMatch(/ok\s+redis-version/)
    })

    it('doctor judges holders as every view does, by the replica index', async () => {
      // Its own prefix: one replica, beating every 100 s, holds chat:x; then its index entry goes.
      const prefix = uniquePrefix(`idx-${layout.slice(0, 2)}`)
      const pod = new RedisCoordinator({ url: url(), prefix, layout, replicaId: 'pod-x', leaseMs: 300_000 })
      await pod.start()
      const client = layout === 'cluster' ? new Cluster([hostPort(url())]) : new Redis(url())
      try {
        await pod.acquireTurn('chat:x')
        await pod.renewNow() // its beat now, the next one 100 s away: nothing lists it again during the test
        const run = (...args: string[]) => runCli(['--url', url(), '--prefix', prefix, ...args, '--json'])
        const checks = async () => parseJson<J>(await run('doctor')).checks as J[]
        const before = await checks()
        expect(before.find((c) => c.id === 'zombie-leases')!.status).toBe('ok')
        expect(before.find((c) => c.id === 'replicas')!.status).toBe('ok')
        expect(await client.del(new KeyLayout(prefix, layout).replicaIndex)).toBe(1)
        const [after, leases] = await Promise.all([checks(), run('leases', 'ls').then((r) => parseJson<J>(r))])
        const doctor = after.find((c) => c.id === 'zombie-leases')!
        const replicas = after.find((c) => c.id === 'replicas')!
        // Not in the index: no heartbeat, in doctor as in leases ls; and doctor's replicas check says why.
        expect(leases.leases.find((l: J) => l.key === 'chat:x')).toMatchObject({ state: 'dead', holderAlive: false })
        expect(doctor.status).toBe('warn')
        expect(doctor.detail).toMatch(
          /^1 lease\(s\) held by a replica without heartbeat, not yet expired: chat chat:x \(pod-x, \S+ left, its record beats: not in the replica index\)$/,
        )
        // Not a dead replica: the fix does not suggest evicting it.
        expect(doctor.fix).not.toMatch(/replica evict/)
        expect(replicas).toMatchObject({ status: 'warn' })
        expect(replicas.detail).toContain(
          `1 replica(s) beat but the replica index ${new KeyLayout(prefix, layout).replicaIndex} does not list them: pod-x (${pod.incarnation.slice(0, 8)})`,
        )
        expect(replicas.fix).toMatch(/each beat lists its replica again/)
      } finally {
        client.disconnect()
        await pod.stop()
      }
    })
  })
}
