/**
 * `provider yield --cancel` withdraws a pending yield request (one conditioned script), an
 * intervention that changed nothing is recorded as a no-op, clearly, and interventions read as
 * words in `events`. Subprocesses, real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CoordinationAdmin, RedisCoordinator } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

describe('provider yield --cancel and the audit of no-ops', () => {
  const prefix = uniquePrefix('ycancel')
  let a: RedisCoordinator
  let b: RedisCoordinator
  let admin: CoordinationAdmin
  const base = () => ['--url', redisUrl(), '--prefix', prefix]
  beforeAll(async () => {
    a = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-a', leaseMs: 30_000 })
    b = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-b', leaseMs: 30_000 })
    await Promise.all([a.start(), b.start()])
    // A tryLead leader does not act on yield requests: the request stays pending until cancelled.
    expect(await a.tryLead('provider:whatsapp')).not.toBeNull()
    await a.renewNow()
    admin = new CoordinationAdmin({ url: redisUrl(), prefix })
  })
  afterAll(async () => {
    await admin?.close()
    await Promise.all([a?.stop(), b?.stop()])
  })

  it('withdraws the pending request, audited; a second cancel finds nothing (exit 3)', async () => {
    const ask = await runCli([...base(), 'provider', 'yield', 'whatsapp', '--yes', '--reason', 'rotate the session'])
    expect(ask.code, ask.stderr).toBe(0)
    const before = parseJson<J>(await runCli([...base(), 'provider', 'status', 'whatsapp', '-o', 'json'])).provider
    expect(before.pendingYield).toMatchObject({ by: expect.any(String) })

    const dry = await runCli([...base(), 'provider', 'yield', 'whatsapp', '--cancel', '--dry-run'])
    expect(dry.code).toBe(0)
    expect(dry.stdout).toMatch(/cancel the yield request for provider:whatsapp/)

    const cancel = await runCli([...base(), 'provider', 'yield', 'whatsapp', '--cancel', '--yes', '-o', 'json'])
    expect(cancel.code, cancel.stderr).toBe(0)
    expect(parseJson<J>(cancel)).toMatchObject({
      kind: 'intervention',
      action: 'yield-cancel',
      status: 'cancelled',
      audit: { written: true },
    })
    const after = parseJson<J>(await runCli([...base(), 'provider', 'status', 'whatsapp', '-o', 'json'])).provider
    expect(after.pendingYield).toBeNull()
    expect(after.replicaId).toBe('pod-a') // the leader keeps leading

    const again = await runCli([...base(), 'provider', 'yield', 'whatsapp', '--cancel', '--yes'])
    expect(again.code).toBe(3)
    expect(again.stderr).toMatch(/no yield request is pending for provider:whatsapp/)
    const misuse = await runCli([...base(), 'provider', 'yield', 'whatsapp', '--cancel', '--force', '--yes'])
    expect(misuse.code).toBe(2)
  })

  it('an intervention that found the state changed is recorded as a no-op, and reads so', async () => {
    const held = await a.acquireTurn('chat:1')
    const r = await admin.releaseChat('chat:1', { ifFence: 1, command: 'chat release chat:1 --if-fence 1', reason: 'test' })
    expect(r.status).toBe('changed')
    await held.release()
    const events = parseJson<J>(await runCli([...base(), 'events', '--type', 'intervention', '-o', 'json'])).events as J[]
    const noop = events.find((e) => e.event.command === 'chat release chat:1 --if-fence 1')!
    expect(noop.event).toMatchObject({ result: 'changed', changed: false })
    const cancelled = events.find((e) => e.event.result === 'cancelled')!
    expect(cancelled.event).toMatchObject({ changed: true, command: 'provider yield provider:whatsapp --cancel' })
    const table = await runCli([...base(), 'events', '--type', 'intervention'])
    expect(table.stdout).toMatch(/"chat release chat:1 --if-fence 1" by \S+: nothing done \(changed\); reason "test"/)
    expect(table.stdout).toMatch(/"provider yield provider:whatsapp --cancel" by \S+: cancelled/)
    expect(table.stdout).not.toMatch(/[{}]/) // no raw JSON in the table
    const [recent, old, stamped] = await Promise.all([
      runCli([...base(), 'events', '--type', 'intervention', '--since', '10m', '-o', 'jsonl']),
      runCli([...base(), 'events', '--until', '1h', '-o', 'json']),
      runCli([...base(), 'events', '--type', 'intervention', '--timestamps']),
    ])
    expect(recent.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(2)
    expect(parseJson<J>(old).events).toEqual([])
    expect(stamped.stdout).toMatch(/^TIME\s+TYPE/)
    expect(stamped.stdout).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\s+intervention/)
  })

  it('names what the columns measure: who led before this leader, the last takeover', async () => {
    const [status, ls] = await Promise.all([runCli([...base(), 'provider', 'status', 'whatsapp']), runCli([...base(), 'provider', 'ls'])])
    expect(status.stdout).toMatch(/^before this leader\s/m)
    expect(status.stdout).toMatch(/^last takeover\s/m)
    expect(ls.stdout).toMatch(/LAST TAKEOVER/)
    expect(ls.stdout).not.toMatch(/LAST HANDOVER/)
  })
})
