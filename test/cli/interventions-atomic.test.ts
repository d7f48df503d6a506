/**
 * Interventions are all or nothing, and audited: an operator's ACL user without the wake channel
 * still applies the whole intervention (the wake-up refused is one warning line, the audit record
 * says it); one without XADD is refused before anything is written; a Redis that does not answer in
 * --timeout is "outcome unknown" (exit 9) within that bound, with how to check; a release is pinned
 * to the grant it showed, so a second operator never revokes the next holder.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CoordinationAdmin, OutcomeUnknownError, RedisCoordinator } from '../../src/index.js'
import { runCli } from '../helpers/cli.js'
import { hostPort, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { untilQueued } from '../helpers/shared-state.js'
import { until } from '../helpers/wait.js'
import { closers, hasTmux, onTerminal, useOpsFixture } from './ops-fixture.js'

useOpsFixture()

// A server of this file's own: its ACL users and CLIENT PAUSE touch no other test file's state.
let server: ChildProcess
let serverUrl = ''
beforeAll(async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port
      s.close(() => resolve(p))
    })
  })
  server = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  serverUrl = `redis://127.0.0.1:${port}`
  await until(
    async () => {
      const r = new Redis(serverUrl, { lazyConnect: true, retryStrategy: () => null })
      r.on('error', () => {})
      try {
        await r.connect()
        return (await r.ping()) === 'PONG'
      } finally {
        r.disconnect()
      }
    },
    10_000,
    'the redis-server of this file',
  )
})
afterAll(() => {
  server?.kill()
})

function world() {
  const url = serverUrl
  const prefix = uniquePrefix('atomic')
  const base = ['--url', url, '--prefix', prefix]
  const cli = (...args: string[]) => runCli([...base, ...args], { timeoutMs: 30_000 })
  const admin = new CoordinationAdmin({ url, prefix, layout: 'standalone' })
  closers.push(() => admin.close())
  const live = async (replicaId: string) => {
    const c = await startCoordinator(() => new RedisCoordinator({ url, prefix, layout: 'standalone', replicaId, leaseMs: 30_000 }))
    closers.push(() => c.stop())
    return c
  }
  const audit = async () => {
    const entries = await admin.redis.xrange(`${prefix}:events`, '-', '+')
    return entries.map(([, f]) => JSON.parse(f[1]!) as Record<string, unknown>).filter((e) => e.type === 'intervention')
  }
  return { url, prefix, base, cli, live, audit }
}

/** An ACL user with these rules; returns its URL. */
async function aclUser(url: string, rules: string[]): Promise<string> {
  const name = `op-${randomBytes(4).toString('hex')}`
  const password = randomBytes(8).toString('hex')
  const r = new Redis(url)
  try {
    await r.call('ACL', 'SETUSER', name, 'reset', 'on', `>${password}`, ...rules)
  } finally {
    await r.quit()
  }
  const { host, port } = hostPort(url)
  return `redis://${name}:${password}@${host}:${port}`
}

/** A chat held by `a` with `b` waiting behind it. */
async function heldWithWaiter(w: ReturnType<typeof world>, key: string) {
  const a = await w.live('pod-a')
  const b = await w.live('pod-b')
  const turnA = await a.acquireTurn(key)
  const waiting = b.acquireTurn(key, { waitMs: 20_000 })
  waiting.catch(() => {})
  await untilQueued(a, key, ['pod-b'])
  return { a, b, turnA, waiting }
}

const chatState = async (w: ReturnType<typeof world>, key: string) => {
  const r = new Redis(w.url)
  closers.push(() => r.quit())
  return r.hmget(`${w.prefix}:c:${key}`, 'h', 'f')
}

describe('an intervention is all or nothing, and audited (standalone)', () => {
  it('an operator without the wake channel: the release is applied whole and audited; one line says the wake-up was refused and what to grant', async () => {
    const w = world()
    const { turnA, waiting } = await heldWithWaiter(w, 'chat:42')
    // Every command on the prefix's keys, no pub/sub channel (the Redis 7 default for a new user).
    const url = await aclUser(w.url, [`~${w.prefix}:*`, 'resetchannels', '+@all'])
    const r = await runCli(['--url', url, '--prefix', w.prefix, 'chat', 'release', 'chat:42', '--yes'], { timeoutMs: 30_000 })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/released chat:42: pod-a revoked/)
    expect(r.stderr).toMatch(/applied, but Redis refused the wake-up PUBLISH \(the ACL user lacks &<prefix>:wake:\*/)
    // Whole: the holder revoked and the next ticket granted in Redis (pod-b learns it by polling).
    const [holder, fence] = await chatState(w, 'chat:42')
    expect(holder).toBe('pod-b')
    expect(Number(fence)).toBeGreaterThan(turnA.fence)
    waiting.catch(() => {})
    const [rec] = await w.audit()
    expect(rec).toMatchObject({
      command: `chat release chat:42 --if-fence ${turnA.fence}`,
      result: 'released',
      changed: true,
      holder: { replicaId: 'pod-a' },
      wakeRefused: expect.stringMatching(/can't publish to the channel/),
    })
    expect(await w.audit()).toHaveLength(1)

    // The same operator retrying with the fence it saw (as another user) revokes nobody.
    const again = await w.cli('chat', 'release', 'chat:42', '--if-fence', String(turnA.fence), '--yes')
    expect(again.code).toBe(6)
    expect(again.stderr).toMatch(new RegExp(`is at fence ${fence}, not ${turnA.fence} \\(held now by pod-b, incarnation`))
    expect(await chatState(w, 'chat:42')).toEqual(['pod-b', fence])
  })

  it('an operator who may not write the audit record is refused before anything is written (exit 5)', async () => {
    const w = world()
    const { turnA } = await heldWithWaiter(w, 'chat:43')
    const url = await aclUser(w.url, [`~${w.prefix}:*`, '&*', '+@all', '-xadd'])
    const r = await runCli(['--url', url, '--prefix', w.prefix, 'chat', 'release', 'chat:43', '--yes'], { timeoutMs: 30_000 })
    expect(r.code).toBe(5)
    expect(r.stderr).toMatch(/permission refused .*XADD \(grant \+xadd\)/)
    expect(await chatState(w, 'chat:43')).toEqual(['pod-a', String(turnA.fence)])
    expect(await w.audit()).toEqual([])
  })
})

describe('a lead revoked by an operator without the wake channel (standalone)', () => {
  it('provider yield --force: revoked whole and audited, one warning line; a stale pin names who leads now', async () => {
    const w = world()
    const a = await w.live('pod-a')
    const ea = a.campaign('provider:wa', { sitOutMs: 60_000 })
    await until(() => ea.isLeader, 5000, 'pod-a leads')
    const f0 = ea.fence!
    const url = await aclUser(w.url, [`~${w.prefix}:*`, 'resetchannels', '+@all'])
    const r = await runCli(['--url', url, '--prefix', w.prefix, 'provider', 'yield', 'wa', '--force', '--yes'], { timeoutMs: 30_000 })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/revoked provider:wa from pod-a/)
    expect(r.stderr).toMatch(/applied, but Redis refused the wake-up PUBLISH \(the ACL user lacks &<prefix>:wake:\*/)
    const raw = new Redis(w.url)
    closers.push(() => raw.quit())
    const [holder, fence] = await raw.hmget(`${w.prefix}:l:provider:wa`, 'h', 'f')
    expect(holder).toBeNull()
    expect(Number(fence)).toBeGreaterThan(f0)
    expect(await w.audit()).toEqual([
      expect.objectContaining({
        command: `provider yield provider:wa --force --if-fence ${f0}`,
        result: 'revoked',
        wakeRefused: expect.stringMatching(/can't publish to the channel/),
      }),
    ])
    const again = await w.cli('provider', 'yield', 'wa', '--force', '--if-fence', String(f0), '--yes')
    expect(again.code).toBe(6)
    expect(again.stderr).toMatch(new RegExp(`provider:wa is at fence ${fence}, not ${f0} \\(nobody holds it now\\)`))
  })
})

describe('an operator without a command a script writes with (standalone)', () => {
  it('no +zpopmin: the release is refused before its first write (exit 5, the grant named), nothing revoked', async () => {
    const w = world()
    const { turnA } = await heldWithWaiter(w, 'chat:46')
    const url = await aclUser(w.url, [`~${w.prefix}:*`, '&*', '+@all', '-zpopmin'])
    const r = await runCli(['--url', url, '--prefix', w.prefix, 'chat', 'release', 'chat:46', '--yes'], { timeoutMs: 30_000 })
    expect(r.code).toBe(5)
    expect(r.stderr).toMatch(/may not run ZPOPMIN on the keys of the prefix \(grant \+zpopmin on ~<prefix>:\*\); nothing was written/)
    expect(await chatState(w, 'chat:46')).toEqual(['pod-a', String(turnA.fence)])
    expect(await w.audit()).toEqual([])
  })
})

describe('a Redis that does not answer before the intervention (standalone)', () => {
  it('the audit check times out: exit 4, nothing sent, nothing done', async () => {
    const w = world()
    const { turnA } = await heldWithWaiter(w, 'chat:47')
    const pauser = new Redis(w.url)
    closers.push(() => pauser.quit())
    // Paused until the check below unpauses it: a CLI slow to start on a busy machine still finds it paused.
    await pauser.call('CLIENT', 'PAUSE', '20000', 'WRITE')
    try {
      const r = await w.cli('--timeout', '300ms', 'chat', 'release', 'chat:47', '--yes')
      expect(r.code).toBe(4)
      expect(r.stderr).toMatch(/did not answer the audit check before chat release .*; nothing done/)
    } finally {
      await pauser.call('CLIENT', 'UNPAUSE')
    }
    expect(await chatState(w, 'chat:47')).toEqual(['pod-a', String(turnA.fence)])
    expect(await w.audit()).toEqual([])
  })
})

describe('every intervention Redis does not answer (library)', () => {
  it('is OutcomeUnknownError, saying how to learn it, for each kind; the unknown audit record is sent behind it', async () => {
    const w = world()
    const admin = new CoordinationAdmin({ url: w.url, prefix: w.prefix, layout: 'standalone', commandTimeoutMs: 200 })
    closers.push(() => admin.close())
    await admin.checkAudit()
    const pauser = new Redis(w.url)
    closers.push(() => pauser.quit())
    await pauser.call('CLIENT', 'PAUSE', '1500', 'WRITE')
    const calls: Record<string, Promise<unknown>> = {
      'chat release': admin.releaseChat('chat:1', { ifFence: 7, grantLeaseMs: 1000 }),
      'chat skip': admin.skipTicket('chat:1', 3, { grantLeaseMs: 1000 }),
      'provider yield': admin.requestYield('provider:wa', { ifFence: 7, audit: true }),
      'provider yield --force': admin.revokeLead('provider:wa', { ifFence: 7 }),
      'provider yield --cancel': admin.cancelYield('provider:wa', { ifRequestedAt: 5 }),
      'lock release': admin.releaseLock('job', { ifFence: 7 }),
      'checkpoint rm': admin.removeCheckpoint('chat:1', 4),
      'checkpoint extend': admin.extendCheckpoint('chat:1', 4, 60_000),
      'handover rm': admin.removeHandover('chat:1', { ifIncarnation: 'inc0' }),
      'replica evict': admin.evictReplica('pod-z', { ifIncarnation: 'inc0' }),
    }
    const said = [
      'chat release chat:1',
      'chat skip chat:1 3',
      'provider yield provider:wa',
      'provider yield provider:wa --force',
      'provider yield provider:wa --cancel',
      'lock release job',
      'checkpoint rm chat:1',
      'checkpoint extend chat:1',
      'handover rm chat:1',
      'replica evict pod-z',
    ]
    const errors = await Promise.all(
      Object.values(calls).map((p) =>
        p.then(
          () => null,
          (e: unknown) => e,
        ),
      ),
    )
    await pauser.call('CLIENT', 'UNPAUSE')
    for (const [i, what] of Object.keys(calls).entries()) {
      expect(errors[i], what).toBeInstanceOf(OutcomeUnknownError)
      const err = errors[i] as OutcomeUnknownError
      expect(err.code).toBe('ERR_OUTCOME_UNKNOWN')
      expect(err.intervention, what).toBe(said[i])
      expect(err.check).toMatch(/it was applied when|look at/)
    }
    // This client stayed connected: Redis ran the scripts after the pause (nothing there to change),
    // and each unknown outcome's record behind them.
    await until(
      async () => (await w.audit()).filter((e) => e.result === 'unknown').length === Object.keys(calls).length,
      5000,
      'the unknown records',
    )
  })
})

describe.skipIf(!hasTmux)('an intervention Redis does not answer, and two operators at once (standalone)', () => {
  it('chat release --timeout 500ms during a CLIENT PAUSE WRITE: outcome unknown (exit 9) within the bound, with how to check', async () => {
    const w = world()
    const { turnA } = await heldWithWaiter(w, 'chat:44')
    const t = onTerminal([...w.base, '--timeout', '500ms', 'chat', 'release', 'chat:44'])
    await t.question()
    const admin = new Redis(w.url)
    closers.push(() => admin.quit())
    // Paused until the check below unpauses it, however slowly the answer reaches the CLI.
    await admin.call('CLIENT', 'PAUSE', '20000', 'WRITE')
    try {
      const { code, out } = await t.answer()
      expect(code).toBe(9)
      expect(out).toMatchObject({ outcome: 'unknown', inspect: 'chat inspect chat:44' })
      expect(out.check).toMatch(new RegExp(`past fence ${turnA.fence}`))
      // The command ended while Redis was still paused: the pause, not the command, decides when writes run.
      expect(await chatState(w, 'chat:44')).toEqual(['pod-a', String(turnA.fence)])
    } finally {
      await admin.call('CLIENT', 'UNPAUSE')
    }
    // Its connection was dropped with the script still waiting: Redis dropped both the script and the
    // audit record sent behind it — nothing done, nothing recorded, as `chat inspect` shows.
    await admin.ping()
    expect(await chatState(w, 'chat:44')).toEqual(['pod-a', String(turnA.fence)])
    expect(await w.audit()).toEqual([])
    const inspect = await w.cli('chat', 'inspect', 'chat:44')
    expect(inspect.stdout).toMatch(new RegExp(`${turnA.fence}`))
  })

  it('two operators release at once: the second, pinned to the holder it showed, revokes nobody (exit 6, who holds it now)', async () => {
    const w = world()
    const { turnA, waiting } = await heldWithWaiter(w, 'chat:45')
    const t = onTerminal([...w.base, 'chat', 'release', 'chat:45', '--reason', 'second'])
    expect(await t.question()).toMatch(new RegExp(`fence +${turnA.fence}`))
    // The first operator releases meanwhile: pod-b is granted.
    const first = await w.cli('chat', 'release', 'chat:45', '--reason', 'first', '--yes')
    expect(first.code, first.stderr).toBe(0)
    const turnB = await waiting
    const { code, out } = await t.answer()
    expect(code).toBe(6)
    expect(out).toMatchObject({ status: 'changed', holder: { replicaId: 'pod-b' }, fence: turnB.fence, changed: true })
    expect(turnB.held).toBe(true)
    expect(await chatState(w, 'chat:45')).toEqual(['pod-b', String(turnB.fence)])
    expect(await w.audit()).toEqual([
      expect.objectContaining({ reason: 'first', result: 'released', command: `chat release chat:45 --if-fence ${turnA.fence}` }),
      expect.objectContaining({
        reason: 'second',
        result: 'changed',
        changed: false,
        command: `chat release chat:45 --if-fence ${turnA.fence}`,
      }),
    ])
  })
})
