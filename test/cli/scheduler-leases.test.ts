/**
 * A scheduler lease from `store.leases()` is held under the store coordinator's live identity, and
 * every view agrees that its holder is a healthy replica: `leases ls` (holder alive, state ok),
 * `locks ls` (the scheduler lead), `doctor` (no zombie leases; `--strict` exits 0 on a healthy
 * Redis), `replicas ls --all` (one row for the holder, no invented restart or gone incarnation).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisStore, type SchedulerLease } from '../../src/index.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { startRedis, type RedisProc } from '../helpers/redis.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

describe('scheduler leases of store.leases()', () => {
  let redis: RedisProc
  let store: RedisStore
  let lease: SchedulerLease | null
  const prefix = 'sched'
  const cli = (...args: string[]) => runCli(['--url', redis.url, '--prefix', prefix, ...args])
  const json = async (...args: string[]) => parseJson<J>(await cli(...args, '--json'))
  beforeAll(async () => {
    redis = await startRedis({ persist: 'aof' })
    store = new RedisStore({ url: redis.url, prefix })
    lease = await store.leases().acquire('scheduler:nightly', '60s')
    expect(lease).not.toBeNull()
  }, 60_000)
  afterAll(async () => {
    if (lease) await store.leases().release(lease.name, lease.fence)
    await store?.close()
    await redis?.stop()
  })

  it('leases ls and locks ls: held by the store coordinator, alive, ok', async () => {
    const { replicaId, incarnation } = store.leases()
    const row = (await json('leases', 'ls')).leases.find((l: J) => l.key === 'scheduler:nightly')
    expect(row).toMatchObject({ kind: 'scheduler', replicaId, incarnation, holderAlive: true, state: 'ok', fence: lease!.fence })
    const table = await cli('leases', 'ls')
    expect(table.stdout).toMatch(new RegExp(`scheduler\\s+scheduler:nightly\\s+${replicaId}`))
    expect(table.stdout).not.toMatch(/\b(dead|stale|expired|gone)\b/)
    const locks = await json('locks', 'ls')
    expect(locks.leads.find((l: J) => l.key === 'scheduler:nightly')).toMatchObject({ replicaId, state: 'ok', holderAlive: true })
    expect((await json('leases', 'ls', '--stale')).leases).toEqual([])
  })

  it('doctor: no zombie leases; --strict exits 0', async () => {
    const d = await json('doctor')
    const check = (id: string) => d.checks.find((c: J) => c.id === id)
    expect(check('zombie-leases')).toMatchObject({ status: 'ok' })
    expect(check('expired-leases')).toMatchObject({ status: 'ok' })
    expect(check('replicas')).toMatchObject({ status: 'ok' })
    expect(d.checks.filter((c: J) => c.status !== 'ok' && c.status !== 'skip')).toEqual([])
    const strict = await cli('doctor', '--strict')
    expect(strict.code, strict.stdout).toBe(0)
  })

  it('replicas ls --all: the holder once, ok — no invented restart', async () => {
    const { replicaId, incarnation } = store.leases()
    const rows = (await json('replicas', 'ls', '--all')).replicas.filter((r: J) => r.replicaId === replicaId)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ incarnation, state: 'ok' })
  })
})
