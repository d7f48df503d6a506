/**
 * Redis out of memory (maxmemory reached with maxmemory-policy noeviction) while replicas run: it
 * refuses every write. The library's calls reject with a coded CoordinationError (reason
 * `redis-oom`; a turn's wait retries until turnWaitMs — memory may be freed — then rejects with it), `doctor` calls it
 * unsafe, and an intervention exits with the "Redis cannot serve" code — not as an internal error.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CoordinationError, CoordinationUnavailableError, RedisCoordinator, RedisStore } from '../../src/index.js'
import { EXIT } from '../../commands/output/exit-codes.js'
import { runCli } from '../helpers/cli.js'
import { startRedis, type RedisProc } from '../helpers/redis.js'

const fails = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  )

describe('Redis out of memory', () => {
  let redis: RedisProc
  let raw: Redis
  let store: RedisStore
  let replica: RedisCoordinator
  const prefix = 'shop'
  beforeAll(async () => {
    redis = await startRedis({ args: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] })
    store = new RedisStore({ url: redis.url, prefix })
    replica = store.coordinator({ replicaId: 'pod-a', leaseMs: '3s', turnWaitMs: '1s' })
    await replica.start()
    expect(await replica.tryLead('scheduler:report')).not.toBeNull()
    raw = new Redis(redis.url)
    // Fill until Redis refuses a write, then keep it there: a limit below what is used (memory
    // freed by a closed connection must not let a write in between two assertions).
    for (let i = 0; ; i++) {
      const err = await fails(raw.set(`fill:${i}`, 'x'.repeat(50_000)))
      if (err) {
        expect(String(err)).toMatch(/^ReplyError: OOM command not allowed/)
        break
      }
    }
    await raw.config('SET', 'maxmemory', '1')
  }, 60_000)
  afterAll(async () => {
    await raw?.config('SET', 'maxmemory', '0').catch(() => {})
    raw?.disconnect()
    await replica?.stop().catch(() => {})
    await store?.close().catch(() => {})
    await redis?.stop()
  })

  const oom = (err: unknown) => {
    expect(err).toBeInstanceOf(CoordinationUnavailableError)
    expect((err as CoordinationUnavailableError).code).toBe('ERR_COORDINATION_UNAVAILABLE')
    expect((err as CoordinationUnavailableError).reason).toBe('redis-oom')
    expect((err as Error).message).toMatch(/out of memory/)
  }

  it('tryLead, setCheckpointIf and start() reject as CoordinationUnavailableError redis-oom', async () => {
    oom(await fails(replica.tryLead('provider:whatsapp')))
    oom(await fails(store.setCheckpointIf('chat:1', { flow: 'f', step: 1, state: {} }, null)))
    const late = new RedisCoordinator({ url: redis.url, prefix, replicaId: 'pod-b' })
    oom(await fails(late.start()))
    await late.stop().catch(() => {})
  })

  it('acquireTurn rejects with redis-oom once its wait is over', async () => {
    // A refused take-ticket is retried like any unavailability until turnWaitMs (memory may be freed).
    const started = Date.now()
    const err = await fails(replica.acquireTurn('chat:1'))
    expect(err).toBeInstanceOf(CoordinationUnavailableError)
    expect((err as CoordinationError).code).toBe('ERR_COORDINATION_UNAVAILABLE')
    expect((err as CoordinationUnavailableError).reason).toBe('redis-oom')
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it('doctor: Redis out of memory is unsafe', async () => {
    const r = await runCli(['--url', redis.url, '--prefix', prefix, 'doctor'])
    expect(r.code, r.stdout + r.stderr).toBe(EXIT.unsafe)
    expect(r.stdout).toMatch(/FAIL\s+memory\s+Redis out of memory on 127\.0\.0\.1:\d+ .*refuses every write/)
    expect(r.stdout).not.toMatch(/nothing unsafe/)
  })

  it('an intervention exits "Redis cannot serve" (4) with one line, not as an internal error', async () => {
    const r = await runCli(['--url', redis.url, '--prefix', prefix, 'provider', 'yield', 'scheduler:report', '--yes'])
    expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1)
    expect(r.stderr).toMatch(/Redis is out of memory at redis:\/\/127\.0\.0\.1:\d+: it refuses writes/)
    expect(r.code).toBe(EXIT.unreachable)
  })
})
