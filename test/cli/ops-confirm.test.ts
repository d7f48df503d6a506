/**
 * The changed-meanwhile rules of `handover rm` (one and --owner-dead) and `checkpoint extend`, with a
 * real change made while the command waits for its confirmation on a terminal (tmux): nothing is done
 * to what changed. And the dashboard's h and e keys in a terminal, against real Redis.
 */
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { BIN } from '../helpers/cli.js'
import { uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'
import { DEAD, TEN_MIN, closers, hasTmux, onTerminal, sessions, useOpsFixture, world } from './ops-fixture.js'

useOpsFixture()

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
