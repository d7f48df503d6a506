/**
 * Handover markers and forward checkpoints changed as safely as turns: `handover inspect`,
 * `handover rm <key>`, `checkpoint extend`, and the bulk clean-ups `checkpoints rm --flow …` and
 * `handover rm --owner-dead` — the built binary as a subprocess against real Redis, standalone and
 * Cluster, with state made by the library (live replicas, the store). The changed-meanwhile rules are
 * tested with a real change made while the command waits for its confirmation on a terminal (tmux):
 * the changed entry is left alone and counted.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { CoordinationAdmin, RedisCoordinator, RedisStore, type Layout } from '../../src/index.js'
import { BIN, parseJson, runCli } from '../helpers/cli.js'
import { clusterUrl, redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const closers: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => {})
})

const TEN_MIN = 600_000
/** A replica that is gone: no heartbeat was ever written for it. */
const DEAD = { replicaId: 'pod-dead', incarnation: 'dead0dead0dead0de' }

function world(layout: Layout) {
  const url = layout === 'cluster' ? clusterUrl() : redisUrl()
  const prefix = uniquePrefix('hops')
  const base = ['--url', url, '--prefix', prefix]
  const cli = (...args: string[]) => runCli([...base, ...args], { timeoutMs: 30_000 })
  const admin = new CoordinationAdmin({ url, prefix, layout })
  closers.push(() => admin.close())
  const store = new RedisStore({ redis: admin.redis, prefix, layout })
  const live = async (replicaId: string) => {
    const c = await startCoordinator(() => new RedisCoordinator({ url, prefix, layout, replicaId, leaseMs: 30_000 }))
    closers.push(() => c.stop())
    return c
  }
  const audit = async () => {
    const entries = await admin.redis.xrange(`${prefix}:events`, '-', '+')
    return entries.map(([, f]) => JSON.parse(f[1]!) as J).filter((e) => e.type === 'intervention')
  }
  const pttl = (key: string) => admin.redis.pttl(admin.keys.chat(key).checkpoint)
  /** An ephemeral checkpoint of `flow` written by `owner`. */
  const forward = (key: string, flow: string, fingerprint: string, owner = DEAD) =>
    store.setCheckpointIf(key, { flow, step: 'address', state: { key }, owner, ephemeral: { ttlMs: TEN_MIN, fingerprint } }, null)
  return { url, prefix, base, cli, store, live, audit, pttl, forward }
}

// ---------------------------------------------------------------- a command waiting on a terminal

const hasTmux = spawnSync('tmux', ['-V']).status === 0
const sessions: string[] = []
afterAll(() => {
  for (const s of sessions) spawnSync('tmux', ['kill-session', '-t', s])
})

/**
 * Run botmesh-coord in a terminal (tmux) with JSON on stdout to a file: it previews and asks on the
 * terminal; `answer()` types y once the question is out (after the caller changed the state).
 */
function onTerminal(args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'hops-'))
  const name = `hops-${uniquePrefix('t')}`
  sessions.push(name)
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
  const line = `env -u REDIS_URL NO_COLOR=1 ${q(process.execPath)} ${q(BIN)} ${args.map(q).join(' ')} -o json > ${dir}/out.json; echo $? > ${dir}/rc; sleep 600`
  execFileSync('tmux', ['new-session', '-d', '-s', name, '-x', '200', '-y', '50', line])
  const screen = () => execFileSync('tmux', ['capture-pane', '-p', '-t', name], { encoding: 'utf8' })
  return {
    question: () => until(() => /\[y\/N\]/.test(screen()) && screen(), 20_000, 'the confirmation question', 100),
    answer: async () => {
      execFileSync('tmux', ['send-keys', '-t', name, 'y', 'Enter'])
      await until(() => existsSync(`${dir}/rc`) && readFileSync(`${dir}/rc`, 'utf8').trim() !== '', 20_000, 'the command to finish', 50)
      const code = Number(readFileSync(`${dir}/rc`, 'utf8').trim())
      const out = JSON.parse(readFileSync(`${dir}/out.json`, 'utf8')) as J
      rmSync(dir, { recursive: true, force: true })
      spawnSync('tmux', ['kill-session', '-t', name])
      return { code, out }
    },
  }
}

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
        expiresInMs: null,
        dataBytes: JSON.stringify({ question: 2 }).length,
        data: { question: 2 },
      })
      expect(parseJson<J>(dead).handover.next).toMatch(/gone with pod-dead: the next replica to take the chat .*fallback .*"survey"/)
      const al = parseJson<J>(alive).handover
      expect(al).toMatchObject({ ownerAlive: true, ownerStatus: 'alive', dataBytes: 0 })
      expect(al.expiresInMs).toBeGreaterThan(TEN_MIN - 60_000)
      expect(al.next).toMatch(/^pod-a holds the conversation in memory/)
      expect(human.stdout).toMatch(/^owner\s+pod-dead \S+ no heartbeat$/m)
      expect(human.stdout).toMatch(/^remove\s+botmesh-coord handover rm chat:7 --if-incarnation dead0dead0dead0de$/m)
      expect(none.code).toBe(3)

      const dry = await w.cli('handover', 'rm', 'chat:7', '--dry-run')
      expect(dry.code, dry.stderr).toBe(0)
      expect(dry.stdout).toMatch(/remove the handover marker of chat:7/)
      expect(dry.stdout).toMatch(/dry run: nothing changed/)
      const noTty = await w.cli('handover', 'rm', 'chat:7')
      expect(noTty.code).toBe(7)
      const stale = await w.cli('handover', 'rm', 'chat:7', '--if-incarnation', 'another', '--yes')
      expect(stale.code).toBe(6)
      expect(stale.stderr).toMatch(/state changed since you looked/)
      expect(await w.store.getHandoverMarker('chat:7')).not.toBeNull()
      expect(await w.audit()).toEqual([])

      const warned = await w.cli('handover', 'rm', 'chat:8', '--dry-run')
      expect(warned.stdout).toMatch(/pod-a is alive and holds "refund"/)

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
      expect((await w.cli('handover', 'rm', 'chat:7', '--yes')).code).toBe(3)
      expect((await w.cli('handover', 'rm', '--yes')).code).toBe(2)
      expect((await w.cli('handover', 'rm', 'chat:8', '--owner-dead', '--yes')).code).toBe(2)
    })

    it('rm --owner-dead previews the markers whose owner is gone and removes only those, with one audit record of counts', async () => {
      const w = world(layout)
      const a = await w.live('pod-a')
      const keys = ['chat:1', 'chat:2', 'chat:3', 'chat:4']
      for (const k of keys) await w.store.setHandoverMarker(k, { name: 'survey', ...DEAD })
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

  describe(`checkpoint extend and bulk removal (${layout})`, () => {
    it('checkpoint extend keeps an ephemeral checkpoint alive longer at the same revision; refuses a persistent one and a stale revision', async () => {
      const w = world(layout)
      const rev = await w.forward('chat:42', 'order', 'f1')
      await w.store.setCheckpointIf('chat:9', { flow: 'signup', step: 'email', state: {} }, null)

      const dry = await w.cli('checkpoint', 'extend', 'chat:42', '--ttl', '2h', '--dry-run')
      expect(dry.code, dry.stderr).toBe(0)
      expect(dry.stdout).toMatch(/→ in 2h/)
      expect(await w.pttl('chat:42')).toBeLessThanOrEqual(TEN_MIN)
      const stale = await w.cli('checkpoint', 'extend', 'chat:42', '--ttl', '2h', '--if-revision', String(rev - 1), '--yes')
      expect(stale.code).toBe(6)
      expect(await w.pttl('chat:42')).toBeLessThanOrEqual(TEN_MIN)
      const persistent = await w.cli('checkpoint', 'extend', 'chat:9', '--ttl', '2h', '--yes')
      expect(persistent.code).toBe(7)
      expect(persistent.stderr.trim().split('\n')).toEqual([
        'botmesh-coord: the checkpoint of chat:9 is persistent: it has no TTL to extend (it stays until removed); nothing done',
      ])
      expect((await w.cli('checkpoint', 'extend', 'chat:42', '--yes')).code).toBe(2) // --ttl is required
      expect((await w.cli('checkpoint', 'extend', 'chat:404', '--ttl', '1h', '--yes')).code).toBe(3)

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
      expect(await count()).toEqual([...old, 'chat:20', 'chat:21', 'chat:31'])
      expect(await count('--ephemeral')).toEqual([...old, 'chat:20', 'chat:21'])
      expect(await count('--fingerprint-not', 'v2')).toEqual([...old, 'chat:21'])
      expect(await count('--fingerprint-not', 'v2', '--owner-dead')).toEqual(old)
      expect((await w.cli('checkpoints', 'rm', '--flow', 'order', '--older-than', '1h', '--dry-run')).code).toBe(3)
      expect((await w.cli('checkpoints', 'rm', '--ephemeral', '--yes')).code).toBe(2) // --flow is required
      expect((await w.cli('checkpoints', 'rm', '--flow', 'order', '--fingerprint-not', 'v2')).code).toBe(7) // no terminal

      const human = await w.cli('checkpoints', 'rm', '--flow', 'order', '--fingerprint-not', 'v2', '--dry-run')
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
      },
    )
  })
}

describe.skipIf(!hasTmux)('changed while the operator confirms (standalone)', () => {
  it('handover rm: a marker left again by another replica meanwhile stays (exit 6)', async () => {
    const w = world('standalone')
    await w.store.setHandoverMarker('chat:7', { name: 'survey', ...DEAD })
    const t = onTerminal([...w.base, 'handover', 'rm', 'chat:7'])
    await t.question()
    await w.store.setHandoverMarker('chat:7', { name: 'survey', replicaId: 'pod-b', incarnation: 'b0b0b0b0b0b0b0b0' })
    const { code, out } = await t.answer()
    expect(code).toBe(6)
    expect(out).toMatchObject({ status: 'changed', replicaId: 'pod-b', incarnation: 'b0b0b0b0b0b0b0b0', changed: true })
    expect(await w.store.getHandoverMarker('chat:7')).toMatchObject({ replicaId: 'pod-b' })
    expect(await w.audit()).toEqual([expect.objectContaining({ result: 'changed', changed: false })])
  })

  it('handover rm --owner-dead: a marker written again for another wait meanwhile is skipped and counted', async () => {
    const w = world('standalone')
    for (const k of ['chat:1', 'chat:2', 'chat:3']) await w.store.setHandoverMarker(k, { name: 'survey', ...DEAD })
    const t = onTerminal([...w.base, 'handover', 'rm', '--owner-dead'])
    expect(await t.question()).toMatch(/remove 3 handover markers/)
    // Same incarnation, another conversation: another wait (its `since` is new).
    await w.store.setHandoverMarker('chat:2', { name: 'refund', ...DEAD })
    const { code, out } = await t.answer()
    expect(code).toBe(6)
    expect(out.counts).toMatchObject({ listed: 3, removed: 2, changed: 1 })
    expect(await w.store.getHandoverMarker('chat:2')).toMatchObject({ name: 'refund' })
  })

  it('checkpoint extend: a checkpoint rewritten meanwhile is not extended (exit 6)', async () => {
    const w = world('standalone')
    const rev = await w.forward('chat:42', 'order', 'v1')
    const t = onTerminal([...w.base, 'checkpoint', 'extend', 'chat:42', '--ttl', '3h'])
    await t.question()
    await w.store.setCheckpointIf(
      'chat:42',
      { flow: 'order', step: 'pay', state: {}, owner: DEAD, ephemeral: { ttlMs: TEN_MIN, fingerprint: 'v1' } },
      rev,
    )
    const { code, out } = await t.answer()
    expect(code).toBe(6)
    expect(out).toMatchObject({ status: 'changed', step: 'pay' })
    expect(await w.pttl('chat:42')).toBeLessThanOrEqual(TEN_MIN)
  })
})

describe.skipIf(!hasTmux)('the dashboard in a terminal (tmux): h and e in the chat detail', () => {
  it('removes the marker and extends the checkpoint of the open chat, with the conditions shown, audited', async () => {
    const w = world('standalone')
    const a = await w.live('pod-a')
    const turn = await a.acquireTurn('chat:42')
    closers.push(() => turn.release())
    await w.store.setHandoverMarker('chat:42', { name: 'survey', ...DEAD })
    const rev = await w.forward('chat:42', 'order', 'v1')
    const name = `hops-watch-${uniquePrefix('t')}`
    sessions.push(name)
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
    execFileSync('tmux', [
      'new-session',
      '-d',
      '-s',
      name,
      '-x',
      '200',
      '-y',
      '40',
      `env -u REDIS_URL NO_COLOR=1 ${q(process.execPath)} ${q(BIN)} ${w.base.map(q).join(' ')} watch --interval 300ms`,
    ])
    const screen = () => execFileSync('tmux', ['capture-pane', '-p', '-t', name], { encoding: 'utf8' })
    const waitFor = (re: RegExp, what: string) => until(() => re.test(screen()) && screen(), 15_000, what, 150)
    const press = (k: string) => execFileSync('tmux', ['send-keys', '-t', name, k])

    await waitFor(/chat:42\s+pod-a/, 'chat:42 held by pod-a in CHAT')
    press('Enter')
    await waitFor(/handover +survey by pod-dead .*\(h remove\)/, 'the chat detail with the marker')
    press('h')
    const ask = await waitFor(/confirm\? \[y\/N\]/, 'the confirmation of h')
    expect(ask).toContain(`= handover rm chat:42 --if-incarnation ${DEAD.incarnation}`)
    press('y')
    await waitFor(/removed the handover marker of chat:42/, 'the marker removed')
    expect(await w.store.getHandoverMarker('chat:42')).toBeNull()

    press('e')
    const askE = await waitFor(/confirm\? \[y\/N\]/, 'the confirmation of e')
    expect(askE).toContain(`= checkpoint extend chat:42 --ttl 1h --if-revision ${rev}`)
    press('y')
    await waitFor(/the checkpoint of chat:42 expires in 1h now/, 'the checkpoint extended')
    expect(await w.pttl('chat:42')).toBeGreaterThan(TEN_MIN)
    expect(await w.audit()).toEqual([
      expect.objectContaining({
        command: `handover rm chat:42 --if-incarnation ${DEAD.incarnation}`,
        reason: 'from botmesh-coord watch',
        result: 'removed',
      }),
      expect.objectContaining({ command: `checkpoint extend chat:42 --ttl 1h --if-revision ${rev}`, result: 'extended' }),
    ])
    press('q')
  })
})
