/**
 * Forward checkpoints changed as safely as turns: `checkpoint extend` and the bulk clean-up
 * `checkpoints rm --flow …`, the built binary as a subprocess against real Redis, standalone and
 * Cluster; a checkpoint changed while the bulk removal waits for its confirmation (tmux) is skipped
 * and counted.
 */
import { describe, expect, it } from 'vitest'
import type { Layout } from '../../src/index.js'
import { parseJson } from '../helpers/cli.js'
import { DEAD, TEN_MIN, hasTmux, onTerminal, useOpsFixture, world, type J } from './ops-fixture.js'

useOpsFixture()

for (const layout of ['standalone', 'cluster'] as Layout[]) {
  describe(`checkpoint extend and bulk removal (${layout})`, () => {
    it('checkpoint extend keeps an ephemeral checkpoint alive longer at the same revision; refuses a persistent one and a stale revision', async () => {
      const w = world(layout)
      const rev = await w.forward('chat:42', 'order', 'f1')
      await w.store.setCheckpointIf('chat:9', { flow: 'signup', step: 'email', state: {} }, null)

      const [dry, stale, persistent, noTtl, none] = await Promise.all([
        w.cli('checkpoint', 'extend', 'chat:42', '--ttl', '2h', '--dry-run'),
        w.cli('checkpoint', 'extend', 'chat:42', '--ttl', '2h', '--if-revision', String(rev - 1), '--yes'),
        w.cli('checkpoint', 'extend', 'chat:9', '--ttl', '2h', '--yes'),
        w.cli('checkpoint', 'extend', 'chat:42', '--yes'),
        w.cli('checkpoint', 'extend', 'chat:404', '--ttl', '1h', '--yes'),
      ])
      expect(dry.code, dry.stderr).toBe(0)
      expect(dry.stdout).toMatch(/→ in 2h/)
      expect(stale.code).toBe(6)
      expect(await w.pttl('chat:42')).toBeLessThanOrEqual(TEN_MIN) // neither the preview nor the stale one extended it
      expect(persistent.code).toBe(7)
      expect(persistent.stderr.trim().split('\n')).toEqual([
        'botmesh-coord: the checkpoint of chat:9 is persistent: it has no TTL to extend (it stays until removed); nothing done',
      ])
      expect(noTtl.code).toBe(2) // --ttl is required
      expect(none.code).toBe(3)

      const r = await w.cli('checkpoint', 'extend', 'chat:42', '--ttl', '2h', '--reason', 'rollout stuck', '--yes', '-o', 'json')
      expect(r.code, r.stderr).toBe(0)
      expect(parseJson<J>(r)).toMatchObject({ action: 'checkpoint-extend', status: 'extended', revision: rev, ttlMs: 7_200_000 })
      expect(await w.pttl('chat:42')).toBeGreaterThan(7_000_000)
      expect((await w.store.getCheckpoint('chat:42'))!.revision).toBe(rev)
      // The conversation's compare-and-set goes on at that revision.
      await w.store.setCheckpointIf(
        'chat:42',
        { flow: 'order', step: 'pay', state: {}, owner: DEAD, ephemeral: { ttlMs: TEN_MIN, fingerprint: 'f1' } },
        rev,
      )

      const shorter = await w.cli('checkpoint', 'extend', 'chat:42', '--ttl', '1m', '--yes')
      expect(shorter.code, shorter.stderr).toBe(0)
      expect(shorter.stdout).toMatch(/later than the 1m asked: left as it is/)
      expect(await w.pttl('chat:42')).toBeGreaterThan(60_000)
      expect(await w.audit()).toEqual([
        expect.objectContaining({
          kind: 'checkpoint',
          key: 'chat:42',
          reason: 'rollout stuck',
          result: 'extended',
          ttlMs: 7_200_000,
          changed: true,
        }),
        expect.objectContaining({ result: 'unchanged', changed: false }),
      ])
    })

    it('checkpoints rm --flow selects by flow, ephemeral, fingerprint, age and dead writer; previews, removes each at its revision, one audit record', async () => {
      const w = world(layout)
      const a = await w.live('pod-a')
      const old = ['chat:10', 'chat:11', 'chat:12', 'chat:13', 'chat:14']
      for (const k of old) await w.forward(k, 'order', 'v1')
      await w.forward('chat:20', 'order', 'v2') // the new flow version: kept
      await w.forward('chat:21', 'order', 'v1', { replicaId: 'pod-a', incarnation: a.incarnation }) // a live writer
      await w.forward('chat:30', 'faq', 'v1') // another flow
      await w.store.setCheckpointIf('chat:31', { flow: 'order', step: 'address', state: {} }, null) // persistent

      const count = async (...filters: string[]) => {
        const r = await w.cli('checkpoints', 'rm', '--flow', 'order', ...filters, '--dry-run', '-o', 'json')
        expect(r.code, r.stderr).toBe(0)
        return (parseJson<J>(r).plan.entries as J[]).map((e) => e.key).sort()
      }
      const [all, ephemeral, otherVersion, otherDead, older, noFlow, noTty, human] = await Promise.all([
        count(),
        count('--ephemeral'),
        count('--fingerprint-not', 'v2'),
        count('--fingerprint-not', 'v2', '--owner-dead'),
        w.cli('checkpoints', 'rm', '--flow', 'order', '--older-than', '1h', '--dry-run'),
        w.cli('checkpoints', 'rm', '--ephemeral', '--yes'),
        w.cli('checkpoints', 'rm', '--flow', 'order', '--fingerprint-not', 'v2'),
        w.cli('checkpoints', 'rm', '--flow', 'order', '--fingerprint-not', 'v2', '--dry-run'),
      ])
      expect(all).toEqual([...old, 'chat:20', 'chat:21', 'chat:31'])
      expect(ephemeral).toEqual([...old, 'chat:20', 'chat:21'])
      expect(otherVersion).toEqual([...old, 'chat:21'])
      expect(otherDead).toEqual(old)
      expect(older.code).toBe(3) // nothing written an hour ago
      expect(noFlow.code).toBe(2) // --flow is required
      expect(noTty.code).toBe(7) // no terminal, no --yes
      expect(human.stdout).toMatch(/remove 6 checkpoints \(flow order, fingerprint not v2\)/)
      expect(human.stdout).toMatch(/1 of them were written by a live replica/)

      const r = await w.cli(
        'checkpoints',
        'rm',
        '--flow',
        'order',
        '--fingerprint-not',
        'v2',
        '--owner-dead',
        '--reason',
        'deploy 42',
        '--yes',
        '-o',
        'json',
      )
      expect(r.code, r.stderr).toBe(0)
      expect(parseJson<J>(r).counts).toEqual({ listed: 5, removed: 5, changed: 0, absent: 0, failed: 0 })
      for (const k of old) expect(await w.store.getCheckpoint(k)).toBeNull()
      for (const k of ['chat:20', 'chat:21', 'chat:30', 'chat:31']) expect(await w.store.getCheckpoint(k), k).not.toBeNull()
      expect(await w.audit()).toEqual([
        expect.objectContaining({
          kind: 'checkpoint',
          command: 'checkpoints rm --flow order --fingerprint-not v2 --owner-dead',
          reason: 'deploy 42',
          counts: { listed: 5, removed: 5, changed: 0, absent: 0, failed: 0 },
          filter: { flow: 'order', fingerprintNot: 'v2', ownerDead: true },
        }),
      ])
    })

    it.skipIf(!hasTmux)(
      'a checkpoint changed while the bulk removal waits for its confirmation is skipped and counted, never removed',
      async () => {
        const w = world(layout)
        const keys = ['chat:50', 'chat:51', 'chat:52', 'chat:53']
        const revs = new Map<string, number>()
        for (const k of keys) revs.set(k, await w.forward(k, 'order', 'v1'))
        const t = onTerminal([...w.base, 'checkpoints', 'rm', '--flow', 'order', '--reason', 'flow changed'])
        const asked = await t.question()
        expect(asked).toMatch(/remove 4 checkpoints \(flow order\)\? \[y\/N\]/)
        // The conversation on chat:51 moves on meanwhile: a new revision.
        const moved = await w.store.setCheckpointIf(
          'chat:51',
          { flow: 'order', step: 'pay', state: {}, owner: DEAD, ephemeral: { ttlMs: TEN_MIN, fingerprint: 'v1' } },
          revs.get('chat:51')!,
        )
        const { code, out } = await t.answer()
        expect(code).toBe(6)
        expect(out.counts).toEqual({ listed: 4, removed: 3, changed: 1, absent: 0, failed: 0 })
        expect(out.entries).toContainEqual({ key: 'chat:51', status: 'changed' })
        expect((await w.store.getCheckpoint('chat:51'))!.revision).toBe(moved)
        for (const k of ['chat:50', 'chat:52', 'chat:53']) expect(await w.store.getCheckpoint(k)).toBeNull()
        const [rec] = await w.audit()
        expect(rec).toMatchObject({
          reason: 'flow changed',
          counts: { removed: 3, changed: 1 },
          changedKeys: ['chat:51'],
          result: 'removed',
        })
        const events = await w.cli('events', '--type', 'intervention')
        expect(events.stdout).toMatch(
          /"checkpoints rm --flow order" by \S+: 3 of 4 removed, 1 skipped \(changed meanwhile\); reason "flow changed"/,
        )
      },
    )
  })
}
