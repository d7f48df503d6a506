/**
 * A frozen holder and leader (SIGSTOP) read `late` in every view — `leases ls`, `replicas ls`,
 * `provider ls/status`, `chat ls`, `chat inspect --explain`, `doctor` — while their leases still run:
 * each output that says `late` also says the lease has time left.
 */
import type { ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCoordinator, RedisStore, type Turn } from '../../src/index.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { untilQueued } from '../helpers/shared-state.js'
import { spawnTurnHolder } from '../helpers/turn-holder.js'
import { until } from '../helpers/wait.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

// Renewals every 10 s; late 15 s after the last one; the lease ends 30 s after it: 15 s in which every
// view must read late, CLI processes started on a loaded machine included.
const LEASE_MS = 30_000

describe('late renewals of a frozen replica', () => {
  const url = redisUrl()
  const prefix = uniquePrefix('late')
  let child: ChildProcess
  let waiter: RedisCoordinator
  let store: RedisStore
  let waiting: Promise<Turn | null>
  const cli = (...args: string[]) => runCli(['--url', url, '--prefix', prefix, ...args])
  const json = async (...args: string[]) => parseJson<J>(await cli(...args, '--json'))

  beforeAll(async () => {
    const holder = spawnTurnHolder([url, prefix, 'standalone', 'chat:frozen', String(LEASE_MS), 'provider:frozen'])
    child = holder.child
    const granted = (await holder.next()) as J
    expect(granted).toMatchObject({ granted: true, leads: true })
    store = new RedisStore({ url, prefix })
    waiter = await startCoordinator(() => new RedisCoordinator({ url, prefix, replicaId: 'waiter', leaseMs: LEASE_MS }))
    waiting = waiter.acquireTurn('chat:frozen', { waitMs: 60_000 }).catch(() => null)
    await untilQueued(store, 'chat:frozen', ['waiter'])
    child.kill('SIGSTOP')
  }, 60_000)

  afterAll(async () => {
    child.kill('SIGKILL')
    await waiter?.stop()
    await waiting
    await store?.close()
  })

  it('leases ls shows the turn and the lead late before they expire, and says why', async () => {
    const leases = await until(
      async () => {
        const j = await json('leases', 'ls')
        const mine = j.leases.filter((l: J) => l.replicaId === 'frozen-child')
        return mine.length === 2 && mine.every((l: J) => l.state === 'late') ? mine : null
      },
      LEASE_MS,
      'both leases of the frozen child late',
      200,
    )
    for (const l of leases) {
      expect(l.expiresInMs).toBeGreaterThan(0)
      expect(l.renewMs).toBe(LEASE_MS / 3)
      expect(l.renewalOverdueMs).toBeGreaterThan(LEASE_MS / 6)
      expect(l.reason).toMatch(/has not renewed for .* \(every 10s\): frozen or partitioned; its lease ends in /)
    }
    const table = await cli('leases', 'ls')
    expect(table.stdout).toMatch(/chat:frozen\s+frozen-child.*ago late \(every 10s\)/)
  })

  it('every other view agrees while the lease still runs', async () => {
    await until(async () => (await json('leases', 'ls', '--kind', 'chat')).leases[0]?.state === 'late', LEASE_MS, 'late', 200)
    // All at once: each must read the lease while it still runs.
    const [replicas, providers, status, chats, inspect, doctor, text] = await Promise.all([
      json('replicas', 'ls'),
      json('provider', 'ls'),
      json('provider', 'status', 'frozen'),
      json('chat', 'ls'),
      json('chat', 'inspect', 'chat:frozen', '--explain'),
      json('doctor'),
      cli('provider', 'status', 'frozen'),
    ])
    expect(replicas.replicas.find((r: J) => r.replicaId === 'frozen-child')).toMatchObject({ state: 'late' })
    expect(providers.providers[0]).toMatchObject({ key: 'provider:frozen', state: 'late', holderAlive: true })
    expect(providers.providers[0].expiresInMs).toBeGreaterThan(0)
    expect(status.provider).toMatchObject({ state: 'late' })
    expect(chats.chats[0]).toMatchObject({ key: 'chat:frozen', holderState: 'late', state: 'stuck', queueLength: 1 })
    expect(inspect.explain.verdict).toBe('stuck')
    expect(inspect.explain.findings[0]).toMatchObject({ code: 'holder-late', severity: 'problem' })
    expect(inspect.explain.summary).toMatch(/^stuck: holder frozen-child has not renewed for .*; its lease ends in .*; 1 waiting$/)
    expect(inspect.chat.holder.renewalOverdueMs).toBeGreaterThan(0)
    expect(inspect.chat.expiresInMs).toBeGreaterThan(0)
    expect(doctor.checks.find((c: J) => c.id === 'late-renewals')).toMatchObject({ status: 'warn' })
    expect(text.stdout).toMatch(/state\s+late/)
    expect(text.stdout).toMatch(/why\s+leader frozen-child has not renewed/)
  })
})
