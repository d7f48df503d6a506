/**
 * `snapshot diff a b`: two snapshots of live state (real replicas) around a handover of a chat, a
 * change of leader, a checkpoint write and a replica start — as a table and as JSON, on standalone
 * Redis and the 3-master Cluster.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { RedisCoordinator, RedisStore, type Layout } from '../../src/index.js'
import { clusterUrl, redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { untilQueued, untilStanding } from '../helpers/shared-state.js'
import { until } from '../helpers/wait.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const dir = mkdtempSync(join(tmpdir(), 'botmesh-snap-diff-'))

for (const layout of ['standalone', 'cluster'] as Layout[]) {
  describe(`snapshot diff on ${layout}`, () => {
    const url = () => (layout === 'cluster' ? clusterUrl() : redisUrl())
    const prefix = uniquePrefix(`diff-${layout.slice(0, 2)}`)
    const cli = (...args: string[]) => runCli(['--url', url(), '--prefix', prefix, ...args])
    const stops: Array<() => Promise<unknown>> = []
    afterAll(async () => {
      for (const s of stops.reverse()) await s().catch(() => {})
    })

    it('names what changed: holders, fences, tickets, leaders, revisions, replicas', async () => {
      const mk = (replicaId: string) => () => new RedisCoordinator({ url: url(), prefix, layout, replicaId, leaseMs: 30_000 })
      const [a, b] = await Promise.all([startCoordinator(mk('pod-a')), startCoordinator(mk('pod-b'))])
      const store = new RedisStore({ url: url(), prefix, layout })
      stops.push(
        () => a.stop(),
        () => b.stop(),
        () => store.close(),
      )
      const t = await a.acquireTurn('chat:1')
      const waiting = b.acquireTurn('chat:1', { waitMs: 60_000 })
      const rev1 = await store.setCheckpointIf(
        'chat:1',
        { flow: 'order', step: 'address', state: {}, owner: { replicaId: 'pod-a', incarnation: a.incarnation, fence: t.fence } },
        null,
      )
      const ea = a.campaign('provider:x', {})
      await until(() => ea.isLeader, 5000, 'pod-a leading provider:x')
      const eb = b.campaign('provider:x', {})
      stops.push(() => eb.stop())
      await Promise.all([untilQueued(a, 'chat:1', ['pod-b']), untilStanding(a, 'provider:x', ['pod-b'])])
      const before = join(dir, `before-${layout}.json.gz`)
      expect((await cli('snapshot', '-o', before)).code).toBe(0)

      const rev2 = await store.setCheckpointIf(
        'chat:1',
        { flow: 'order', step: 'confirm', state: {}, owner: { replicaId: 'pod-a', incarnation: a.incarnation, fence: t.fence } },
        rev1,
      )
      await t.release()
      const tb = await waiting
      await ea.stop()
      await until(() => eb.isLeader, 10_000, 'pod-b leading provider:x')
      const c = await startCoordinator(mk('pod-c'))
      stops.push(() => c.stop())
      const after = join(dir, `after-${layout}.json.gz`)
      expect((await cli('snapshot', '-o', after)).code).toBe(0)

      const r = await runCli(['snapshot', 'diff', before, after, '--json'])
      expect(r.code, r.stderr).toBe(0)
      const j = parseJson<J>(r)
      expect(j).toMatchObject({ kind: 'changes', from: { file: before, partial: null }, to: { file: after } })
      const find = (kind: string, key: string, change: string) =>
        j.changes.find((x: J) => x.kind === kind && x.key === key && x.change === change)
      const inc = (co: RedisCoordinator) => co.incarnation.slice(0, 8)
      expect(find('chat', 'chat:1', 'holder')).toMatchObject({ before: `pod-a (${inc(a)})`, after: `pod-b (${inc(b)})` })
      expect(find('chat', 'chat:1', 'fence')).toMatchObject({ before: String(t.fence), after: String(tb.fence) })
      expect(find('chat', 'chat:1', 'tickets')).toMatchObject({ before: '#2 pod-b', after: null })
      expect(find('lead', 'provider:x', 'leader')).toMatchObject({ before: `pod-a (${inc(a)})`, after: `pod-b (${inc(b)})` })
      expect(find('checkpoint', 'chat:1', 'revision')).toMatchObject({ before: String(rev1), after: String(rev2) })
      expect(find('checkpoint', 'chat:1', 'step')).toMatchObject({ before: 'order/address', after: 'order/confirm' })
      expect(find('replica', 'pod-c', 'added')).toMatchObject({ before: null, after: `pod-c (${inc(c)})` })
      // Only what changed: pod-a and pod-b are the same processes.
      expect(j.changes.filter((x: J) => x.kind === 'replica')).toHaveLength(1)
      await tb.release()

      const table = await runCli(['snapshot', 'diff', before, after])
      expect(table.stdout).toMatch(/^KIND\s+KEY\s+CHANGE\s+BEFORE\s+AFTER\n/)
      expect(table.stdout).toMatch(/chat\s+chat:1\s+holder\s+pod-a \(\w{8}\)\s+pod-b \(\w{8}\)/)
      expect(table.stderr).toMatch(/^from .*before-\w+\.json\.gz \(taken \d{4}-.*\) to .*after-\w+\.json\.gz \(.* later\)\n$/)
      const same = await runCli(['snapshot', 'diff', after, after])
      expect(same.stdout).toBe('')
      expect(same.stderr).toContain('no changes between the two snapshots')
      const bad = await runCli(['snapshot', 'diff', before, join(dir, 'missing.json.gz')])
      expect(bad.code).toBe(2)
    }, 90_000)
  })
}
