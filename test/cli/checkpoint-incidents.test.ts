/**
 * Checkpoint incidents, diagnosed by one command and fixed by one — the binary as a subprocess, real
 * replicas, standalone Redis and the 3-master Cluster:
 * - a checkpoint written without the turn's fence by a replica that does not hold the chat (a stale
 *   owner): `chat inspect --explain` and `doctor` flag it and name `checkpoint rm <key> --if-revision <n>`,
 *   which removes it;
 * - ephemeral checkpoints of a flow version other than the deployed one (`--fingerprint flow=fp`, or a
 *   file): listed with the fallback the runtime applies (`changed`) and counted by `doctor`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCoordinator, RedisStore, type Layout, type Turn } from '../../src/index.js'
import { clusterUrl, redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const dir = mkdtempSync(join(tmpdir(), 'botmesh-cp-incidents-'))

for (const layout of ['standalone', 'cluster'] as Layout[]) {
  describe(`checkpoint incidents on ${layout}`, () => {
    const url = () => (layout === 'cluster' ? clusterUrl() : redisUrl())
    const prefix = uniquePrefix(`cpi-${layout.slice(0, 2)}`)
    const cli = (...args: string[]) => runCli(['--url', url(), '--prefix', prefix, ...args])
    let a: RedisCoordinator
    let b: RedisCoordinator
    let store: RedisStore
    let held: Turn

    beforeAll(async () => {
      const mk = (replicaId: string) => () => new RedisCoordinator({ url: url(), prefix, layout, replicaId, leaseMs: 60_000 })
      ;[a, b] = await Promise.all([startCoordinator(mk('pod-a')), startCoordinator(mk('pod-b'))])
      store = new RedisStore({ url: url(), prefix, layout })
      held = await a.acquireTurn('chat:held')
    }, 60_000)
    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()])
      await store?.close()
    })

    it('a write by the holder under its fence is not flagged (the check can tell)', async () => {
      await store.setCheckpointIf(
        'chat:held',
        { flow: 'order', step: 'address', state: { n: 1 }, owner: { replicaId: 'pod-a', incarnation: a.incarnation, fence: held.fence } },
        null,
      )
      const j = parseJson<J>(await cli('chat', 'inspect', 'chat:held', '--explain', '--json'))
      expect(j.chat.staleWrite).toBeNull()
      expect(j.explain.findings.map((f: J) => f.code)).not.toContain('checkpoint-stale-write')
      const d = parseJson<J>(await cli('doctor', '--json'))
      expect(d.checks.find((c: J) => c.id === 'stale-writes')).toMatchObject({ status: 'ok' })
    })

    it('flags an unfenced write by a replica that does not hold the turn, and checkpoint rm --if-revision removes it', async () => {
      const cp = (await store.getCheckpoint('chat:held'))!
      // pod-b's runtime writes without passing a turn's fence: Redis cannot refuse it.
      const rev = await store.setCheckpointIf(
        'chat:held',
        { flow: 'order', step: 'confirm', state: { n: 2 }, owner: { replicaId: 'pod-b', incarnation: b.incarnation } },
        cp.revision,
      )
      const r = await cli('chat', 'inspect', 'chat:held', '--explain', '--json')
      expect(r.code).toBe(0)
      const j = parseJson<J>(r)
      expect(j.chat.staleWrite).toMatchObject({ reason: 'another-holder', replicaId: 'pod-b', fence: null, revision: rev })
      const finding = j.explain.findings.find((f: J) => f.code === 'checkpoint-stale-write')
      expect(finding.severity).toBe('warning')
      expect(finding.message).toMatch(/written by pod-b \(\w{8}\) without a fence while pod-a held the turn/)
      expect(finding.fix).toContain(`botmesh-coord --url ${url()} --prefix ${prefix} checkpoint rm chat:held --if-revision ${rev}`)
      expect(j.explain.verdict).toBe('attention')
      const t = await cli('chat', 'inspect', 'chat:held', '--explain')
      expect(t.stdout).toContain('[checkpoint-stale-write]')

      const d = await cli('doctor', '--json')
      expect(d.code).toBe(1)
      const check = parseJson<J>(d).checks.find((c: J) => c.id === 'stale-writes')
      expect(check).toMatchObject({ status: 'fail' })
      expect(check.detail).toContain(`chat:held (revision ${rev} by pod-b without a fence)`)
      expect(check.fix).toContain(`botmesh-coord --url ${url()} --prefix ${prefix} checkpoint rm chat:held --if-revision ${rev}`)

      // The fix, as named: compare-and-set on the revision shown.
      expect((await cli('checkpoint', 'rm', 'chat:held', '--if-revision', String(rev - 1), '--yes')).code).toBe(6)
      const rm = await cli('checkpoint', 'rm', 'chat:held', '--if-revision', String(rev), '--yes', '--reason', 'stale write')
      expect(rm.code).toBe(0)
      expect(await store.getCheckpoint('chat:held')).toBeNull()
      const after = parseJson<J>(await cli('doctor', '--json'))
      expect(after.checks.find((c: J) => c.id === 'stale-writes')).toMatchObject({ status: 'ok' })
    })

    it('flags an unfenced write by a replica that held none of the chat’s last turns', async () => {
      await (await a.acquireTurn('chat:idle')).release()
      const rev = await store.setCheckpointIf(
        'chat:idle',
        { flow: 'order', step: 'how-many', state: {}, owner: { replicaId: 'pod-b', incarnation: b.incarnation } },
        null,
      )
      const j = parseJson<J>(await cli('chat', 'inspect', 'chat:idle', '--explain', '--json'))
      expect(j.chat.staleWrite).toMatchObject({ reason: 'not-a-holder', revision: rev })
      expect(j.explain.findings.find((f: J) => f.code === 'checkpoint-stale-write').message).toMatch(
        /neither the chat's holder nor its last holders \(pod-a\)/,
      )
      await store.clearCheckpointIf('chat:idle', rev)
    })

    it('lists ephemeral checkpoints of another flow version with the fallback changed, and doctor counts them', async () => {
      const t = await a.acquireTurn('chat:faq')
      await store.setCheckpointIf(
        'chat:faq',
        {
          flow: 'faq',
          step: 'topic',
          state: {},
          owner: { replicaId: 'pod-a', incarnation: a.incarnation, fence: t.fence },
          ephemeral: { ttlMs: 600_000, fingerprint: 'v1fp' },
        },
        null,
      )
      await t.release()
      const ls = parseJson<J>(await cli('checkpoints', 'ls', '--fingerprint', 'faq=v2fp', '--json'))
      const row = ls.checkpoints.find((c: J) => c.key === 'chat:faq')
      expect(row).toMatchObject({ fingerprint: 'v1fp', deployedFingerprint: 'v2fp', fallback: 'changed' })
      const same = parseJson<J>(await cli('checkpoints', 'ls', '--fingerprint', 'faq=v1fp', '--json'))
      expect(same.checkpoints.find((c: J) => c.key === 'chat:faq')).toMatchObject({ fallback: null })
      const only = parseJson<J>(await cli('checkpoints', 'ls', '--fingerprint', 'faq=v2fp', '--mismatched', '--json'))
      expect(only.checkpoints.map((c: J) => c.key)).toEqual(['chat:faq'])
      const table = await cli('checkpoints', 'ls', '--fingerprint', 'faq=v2fp', '--mismatched')
      expect(table.stdout).toMatch(/ephemeral v1fp ≠ deployed v2fp: changed/)
      expect((await cli('checkpoints', 'ls', '--mismatched')).code).toBe(2)

      const file = join(dir, `fingerprints-${layout}.txt`)
      writeFileSync(file, '# deployed now\nfaq=v2fp\norder=o9\n')
      const j = parseJson<J>(await cli('chat', 'inspect', 'chat:faq', '--fingerprint-file', file, '--json'))
      const f = j.explain.findings.find((x: J) => x.code === 'fingerprint-mismatch')
      expect(f.message).toContain('fallback changed')
      const d = parseJson<J>(await cli('doctor', '--fingerprint-file', file, '--json'))
      expect(d.checks.find((c: J) => c.id === 'flow-versions')).toMatchObject({
        status: 'warn',
        detail: expect.stringMatching(/^1 ephemeral checkpoint\(s\) of a flow version no longer deployed: faq 1 \(deployed v2fp\)/),
        fix: `botmesh-coord --url ${url()} --prefix ${prefix} checkpoints rm --flow faq --ephemeral --fingerprint-not v2fp`,
      })
      const ok = parseJson<J>(await cli('doctor', '--fingerprint', 'faq=v1fp', '--json'))
      expect(ok.checks.find((c: J) => c.id === 'flow-versions')).toMatchObject({ status: 'ok' })
      const bad = await cli('checkpoints', 'ls', '--fingerprint', 'faq=')
      expect(bad.code).toBe(2)
    })
  })
}
