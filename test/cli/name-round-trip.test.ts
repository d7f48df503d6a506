/**
 * Every name a listing prints with `-o name` is accepted back by the commands of its kind (the
 * `kind/` head dropped), and a name of another kind is a usage error that says which command takes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { liveState, type LiveState } from './read-fixture.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

describe('-o name output, accepted back', () => {
  let s: LiveState
  const cli = (...args: string[]) => runCli(['--url', redisUrl(), '--prefix', s.prefix, ...args])
  const names = async (...args: string[]) => {
    const r = await cli(...args, '-o', 'name')
    expect(r.code, r.stderr).toBe(0)
    return r.stdout.split('\n').filter(Boolean)
  }
  const ok = async (...args: string[]) => {
    const r = await cli(...args)
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0)
    return r
  }
  beforeAll(async () => {
    s = await liveState(redisUrl(), uniquePrefix('names'), 'standalone')
  }, 60_000)
  afterAll(async () => {
    await s?.stop()
  })

  it('chat ls names: chat inspect, release and skip take them', async () => {
    const chats = await names('chat', 'ls')
    expect(chats).toContain('chat/chat:42')
    for (const n of chats) {
      const j = parseJson<J>(await ok('chat', 'inspect', n, '--json'))
      expect(`chat/${j.chat.key}`).toBe(n)
    }
    const plan = await ok('chat', 'release', 'chat/chat:42', '--dry-run')
    expect(plan.stdout).toMatch(/chat:42/)
    const inspect = parseJson<J>(await ok('chat', 'inspect', 'chat/chat:42', '--json'))
    const ticket = String(inspect.chat.tickets[0].ticket)
    expect((await ok('chat', 'skip', 'chat/chat:42', ticket, '--dry-run')).stdout).toMatch(new RegExp(`ticket ${ticket}`))
  })

  it('leases ls names: each goes to the command of its kind', async () => {
    const leases = await names('leases', 'ls')
    expect(leases).toEqual(
      expect.arrayContaining(['chat/chat:42', 'provider/provider:whatsapp', 'scheduler/scheduler:report', 'lock/invoice:run']),
    )
    for (const n of leases) {
      if (n.startsWith('chat/')) await ok('chat', 'inspect', n)
      else if (n.startsWith('lock/')) expect((await ok('lock', 'release', n, '--dry-run')).stdout).toMatch(/invoice:run/)
      else {
        const j = parseJson<J>(await ok('provider', 'status', n, '--json'))
        expect(n).toBe(`${j[j.kind].kind}/${j[j.kind].key}`)
      }
    }
    expect((await ok('provider', 'yield', 'provider/provider:whatsapp', '--dry-run')).stdout).toMatch(/pod-a/)
  })

  it('provider ls, locks ls, checkpoints ls, handover ls names', async () => {
    for (const n of await names('provider', 'ls')) await ok('provider', 'status', n)
    for (const n of await names('locks', 'ls')) {
      if (n.startsWith('lock/')) await ok('lock', 'release', n, '--dry-run')
      else await ok('provider', 'status', n)
    }
    const cps = await names('checkpoints', 'ls')
    expect(cps).toContain('checkpoint/chat:9')
    for (const n of cps) {
      await ok('checkpoint', 'inspect', n)
      await ok('chat', 'inspect', n)
    }
    expect((await ok('checkpoint', 'rm', 'checkpoint/chat:9', '--dry-run')).stdout).toMatch(/chat:9/)
    const hos = await names('handover', 'ls')
    expect(hos).toContain('handover/chat:7')
    for (const n of hos) await ok('handover', 'inspect', n)
  })

  it('replicas ls names: replica evict, --replica and provider yield --to take them', async () => {
    const reps = await names('replicas', 'ls')
    expect(reps).toContain('replica/pod-a')
    expect((await ok('replica', 'evict', 'replica/pod-a', '--dry-run')).stdout).toMatch(/pod-a/)
    const rows = parseJson<J>(await ok('leases', 'ls', '--replica', 'replica/pod-a', '--json')).leases
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.every((r: J) => r.replicaId === 'pod-a')).toBe(true)
    expect((await ok('provider', 'yield', 'provider:whatsapp', '--to', 'replica/pod-b', '--dry-run')).stdout).toMatch(/pod-b/)
  })

  it('a name of another kind: a usage error naming the command that takes it', async () => {
    const r = await cli('chat', 'inspect', 'provider/provider:whatsapp')
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(
      /provider\/provider:whatsapp names a provider, not a chat: try botmesh-coord provider status provider:whatsapp/,
    )
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    const w = await cli('chat', 'release', 'replica/pod-a', '--dry-run')
    expect(w.code).toBe(2)
    expect(w.stderr).toMatch(/replica\/pod-a names a replica, not a chat: try botmesh-coord replicas ls --replica pod-a/)
    const l = await cli('lock', 'release', 'chat/chat:42', '--dry-run')
    expect(l.code).toBe(2)
    expect(l.stderr).toMatch(/names a chat, not a lock/)
  })
})
