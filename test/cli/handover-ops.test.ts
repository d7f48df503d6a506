/**
 * Handover markers changed as safely as turns: `handover inspect`, `handover rm <key>` and
 * `handover rm --owner-dead`, the built binary as a subprocess against real Redis, standalone and
 * Cluster, with state made by the library (live replicas, the store).
 */
import { describe, expect, it } from 'vitest'
import type { Layout } from '../../src/index.js'
import { parseJson } from '../helpers/cli.js'
import { DEAD, TEN_MIN, useOpsFixture, world, type J } from './ops-fixture.js'

useOpsFixture()

for (const layout of ['standalone', 'cluster'] as Layout[]) {
  describe(`handover markers (${layout})`, () => {
    it('inspect says who left it, whether it is alive, its data, TTL and what the next owner does; rm is conditioned and audited', async () => {
      const w = world(layout)
      const a = await w.live('pod-a')
      await w.store.setHandoverMarker('chat:7', { name: 'survey', ...DEAD, data: { question: 2 } })
      await w.store.setHandoverMarker('chat:8', { name: 'refund', replicaId: 'pod-a', incarnation: a.incarnation, ttlMs: TEN_MIN })

      const [dead, alive, human, none] = await Promise.all([
        w.cli('handover', 'inspect', 'chat:7', '-o', 'json'),
        w.cli('handover', 'inspect', 'chat:8', '-o', 'json'),
        w.cli('handover', 'inspect', 'chat:7'),
        w.cli('handover', 'inspect', 'chat:404'),
      ])
      expect(parseJson<J>(dead).handover).toMatchObject({
        key: 'chat:7',
        name: 'survey',
        replicaId: 'pod-dead',
        incarnation: DEAD.incarnation,
        ownerAlive: false,
        ownerStatus: 'dead',
        dataBytes: JSON.stringify({ question: 2 }).length,
        data: { question: 2 },
      })
      // Written without ttlMs: it still expires by itself, 5 minutes after its last write (the store's default).
      expect(parseJson<J>(dead).handover.expiresInMs).toBeGreaterThan(0)
      expect(parseJson<J>(dead).handover.expiresInMs).toBeLessThanOrEqual(5 * 60_000)
      expect(parseJson<J>(dead).handover.next).toMatch(/gone with pod-dead: the next replica to take the chat .*fallback .*"survey"/)
      const al = parseJson<J>(alive).handover
      expect(al).toMatchObject({ ownerAlive: true, ownerStatus: 'alive', dataBytes: 0 })
      expect(al.expiresInMs).toBeGreaterThan(TEN_MIN - 60_000)
      expect(al.next).toMatch(/^pod-a holds the conversation in memory/)
      expect(human.stdout).toMatch(/^owner\s+pod-dead \S+ no heartbeat$/m)
      expect(human.stdout).toMatch(/^remove\s+botmesh-coord --url \S+ --prefix \S+ handover rm chat:7 --if-incarnation dead0dead0dead0de$/m)
      expect(none.code).toBe(3)

      // A preview, a missing confirmation, a stale incarnation: nothing done, nothing recorded.
      const [dry, noTty, stale, warned] = await Promise.all([
        w.cli('handover', 'rm', 'chat:7', '--dry-run'),
        w.cli('handover', 'rm', 'chat:7'),
        w.cli('handover', 'rm', 'chat:7', '--if-incarnation', 'another', '--yes'),
        w.cli('handover', 'rm', 'chat:8', '--dry-run'),
      ])
      expect(dry.code, dry.stderr).toBe(0)
      expect(dry.stdout).toMatch(/remove the handover marker of chat:7/)
      expect(dry.stdout).toMatch(/dry run: nothing changed/)
      expect(noTty.code).toBe(7)
      expect(stale.code).toBe(6)
      expect(stale.stderr).toMatch(/state changed since you looked/)
      expect(warned.stdout).toMatch(/pod-a is alive and holds "refund"/)
      expect(await w.store.getHandoverMarker('chat:7')).not.toBeNull()
      expect(await w.audit()).toEqual([])

      const rm = await w.cli(
        'handover',
        'rm',
        'chat:7',
        '--if-incarnation',
        DEAD.incarnation,
        '--reason',
        'pod died',
        '--yes',
        '-o',
        'json',
      )
      expect(rm.code, rm.stderr).toBe(0)
      expect(parseJson<J>(rm)).toMatchObject({
        action: 'handover-rm',
        status: 'removed',
        key: 'chat:7',
        name: 'survey',
        audit: { written: true },
      })
      expect(await w.store.getHandoverMarker('chat:7')).toBeNull()
      expect(await w.store.getHandoverMarker('chat:8')).not.toBeNull()
      expect(await w.audit()).toEqual([
        expect.objectContaining({
          kind: 'handover',
          key: 'chat:7',
          command: `handover rm chat:7 --if-incarnation ${DEAD.incarnation}`,
          reason: 'pod died',
          result: 'removed',
          changed: true,
        }),
      ])
      const [gone, neither, both] = await Promise.all([
        w.cli('handover', 'rm', 'chat:7', '--yes'),
        w.cli('handover', 'rm', '--yes'),
        w.cli('handover', 'rm', 'chat:8', '--owner-dead', '--yes'),
      ])
      expect(gone.code).toBe(3)
      expect([neither.code, both.code]).toEqual([2, 2])
    })

    it('rm --owner-dead previews the markers whose owner is gone and removes only those, with one audit record of counts', async () => {
      const w = world(layout)
      const a = await w.live('pod-a')
      const keys = ['chat:1', 'chat:2', 'chat:3', 'chat:4']
      for (const k of keys.slice(0, 3)) await w.store.setHandoverMarker(k, { name: 'survey', ...DEAD })
      // One written by another tool, without `since`: only its incarnation can be compared.
      await w.store.redis.hset(w.store.keys.chat('chat:4').handover, 'name', 'survey', 'rid', DEAD.replicaId, 'inc', DEAD.incarnation)
      await w.store.setHandoverMarker('chat:5', { name: 'survey', replicaId: 'pod-a', incarnation: a.incarnation })

      const dry = await w.cli('handover', 'rm', '--owner-dead', '--dry-run', '-o', 'json')
      expect(dry.code, dry.stderr).toBe(0)
      const plan = parseJson<J>(dry)
      expect(plan).toMatchObject({ dryRun: true, plan: { action: 'handovers-rm', count: 4 } })
      expect(plan.plan.entries.map((e: J) => e.key).sort()).toEqual(keys)
      expect(dry.stderr).toMatch(/remove 4 handover markers/)

      const r = await w.cli('handover', 'rm', '--owner-dead', '--reason', 'after the deploy', '--yes', '-o', 'json')
      expect(r.code, r.stderr).toBe(0)
      expect(parseJson<J>(r).counts).toEqual({ listed: 4, removed: 4, changed: 0, absent: 0, failed: 0 })
      for (const k of keys) expect(await w.store.getHandoverMarker(k)).toBeNull()
      expect(await w.store.getHandoverMarker('chat:5')).not.toBeNull()
      const [rec] = await w.audit()
      expect(rec).toMatchObject({
        kind: 'handover',
        command: 'handover rm --owner-dead',
        reason: 'after the deploy',
        counts: { listed: 4, removed: 4, changed: 0 },
        filter: { ownerDead: true },
        result: 'removed',
      })
      expect([...rec!.removedKeys].sort()).toEqual(keys)
      const events = await w.cli('events', '--type', 'intervention')
      expect(events.stdout).toMatch(/"handover rm --owner-dead" by \S+: 4 of 4 removed; reason "after the deploy"/)
      expect((await w.cli('handover', 'rm', '--owner-dead', '--yes')).code).toBe(3)
    })
  })
}
