/**
 * A frozen holder (SIGSTOP) past its lease, nobody waiting: the turn is not held, and every view says
 * so — `chat inspect --explain` (verdict expired, never OK), `chat ls`, `leases ls`, `doctor`
 * (expired-leases, and the replica gone) — while `replicas ls` keeps the frozen replica, `gone`
 * with its last beat and what it held (never `dead`: it is only frozen), and the exporter counts it
 * in botmesh_replicas_gone. Woken, it beats again and reads ok.
 */
import type { ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseJson, runCli } from '../helpers/cli.js'
import { startExporter, type ExporterProc } from '../helpers/exporter.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { spawnTurnHolder } from '../helpers/turn-holder.js'
import { until } from '../helpers/wait.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const LEASE_MS = 3_000

describe('a frozen holder past its lease', () => {
  const url = redisUrl()
  const prefix = uniquePrefix('frz')
  let child: ChildProcess
  let exporter: ExporterProc | undefined
  const cli = (...args: string[]) => runCli(['--url', url, '--prefix', prefix, ...args])
  const json = async (...args: string[]) => parseJson<J>(await cli(...args, '--json'))

  beforeAll(async () => {
    const holder = spawnTurnHolder([url, prefix, 'standalone', 'chat:frz', String(LEASE_MS)])
    child = holder.child
    expect(await holder.next()).toMatchObject({ granted: true })
    // Its last heartbeat lists the turn it holds.
    child.stdin!.write('renew\n')
    expect(await holder.next()).toMatchObject({ renewed: true })
    child.kill('SIGSTOP')
    // Past the lease by Redis's clock: the chat hash still names the holder.
    await until(async () => (await json('leases', 'ls')).leases[0]?.state === 'expired', 20_000, 'the lease expired', 200)
  }, 60_000)

  afterAll(async () => {
    await exporter?.stop()
    child?.kill('SIGKILL')
  })

  it('chat inspect --explain: the turn is not held, and what happens next', async () => {
    const j = await json('chat', 'inspect', 'chat:frz', '--explain')
    expect(j.chat.state).toBe('expired')
    expect(j.explain.verdict).toBe('expired')
    expect(j.explain.summary).toMatch(/not held: frozen-child's lease expired .* ago/)
    expect(j.explain.summary).toMatch(/the chat is free, its next message gets the turn at once/)
    const text = await cli('chat', 'inspect', 'chat:frz', '--explain')
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/verdict\s+EXPIRED\s+expired: the turn is not held/)
    expect(text.stdout).not.toMatch(/verdict\s+OK/)
    expect(text.stdout).toMatch(/lease left\s+expired .* ago: not held/)
  })

  it('chat ls and leases ls say expired, not held', async () => {
    const [chats, leases] = await Promise.all([json('chat', 'ls'), json('leases', 'ls')])
    expect(chats.chats[0]).toMatchObject({ key: 'chat:frz', state: 'expired', holderState: 'expired' })
    expect(leases.leases[0]).toMatchObject({ key: 'chat:frz', state: 'expired' })
    expect(leases.leases[0].reason).toMatch(/^not held: the holder frozen-child's lease expired .* ago .*next waiter's poll/)
  })

  it('replicas ls keeps the frozen replica: gone, its last beat, what it held — never dead', async () => {
    const j = await json('replicas', 'ls')
    const r = j.replicas.find((x: J) => x.replicaId === 'frozen-child')
    expect(r).toMatchObject({ state: 'gone', turnsHeld: 1 })
    expect(r.heartbeatAgeMs).toBeGreaterThan(LEASE_MS)
    expect(r.reason).toMatch(/no heartbeat from frozen-child for .*: frozen, cut off or killed/)
    const all = await json('replicas', 'ls', '--all')
    const rows = all.replicas.filter((x: J) => x.replicaId === 'frozen-child')
    expect(rows.map((x: J) => x.state)).toEqual(['gone'])
    const table = await cli('replicas', 'ls', '--all')
    expect(table.stdout).toMatch(/frozen-child\s+\S+\s+gone/)
    expect(table.stdout).not.toMatch(/\bdead\b/)
  })

  it('doctor warns: the expired lease and the gone replica', async () => {
    const r = await cli('doctor', '--json')
    const j = parseJson<J>(r)
    const check = (id: string) => j.checks.find((c: J) => c.id === id)
    expect(check('expired-leases')).toMatchObject({ status: 'warn' })
    expect(check('expired-leases').detail).toMatch(/not held: chat chat:frz \(the holder frozen-child's lease expired/)
    expect(check('replicas')).toMatchObject({ status: 'warn' })
    expect(check('replicas').detail).toMatch(
      /1 replica\(s\) gone without an orderly stop: frozen-child \(no heartbeat for .*, held chat chat:frz\)/,
    )
    const strict = await cli('doctor', '--strict')
    expect(strict.code).toBe(1)
  })

  it('the exporter counts it in botmesh_replicas_gone', async () => {
    exporter = await startExporter(['--url', url, '--prefix', prefix])
    await until(async () => (await exporter!.sample('botmesh_replicas_gone')) === 1, 30_000, 'botmesh_replicas_gone 1', 100)
  }, 40_000)

  it('woken, it beats again and reads ok', async () => {
    child.kill('SIGCONT')
    await until(
      async () => (await json('replicas', 'ls')).replicas.find((x: J) => x.replicaId === 'frozen-child')?.state === 'ok',
      20_000,
      'frozen-child ok again',
      200,
    )
  })
})
