/**
 * Redis Sentinel: one master, one replica and three sentinels, started once for this file. The
 * library and the CLI reach the master through the sentinels (URL and options), a coordinator keeps
 * granting turns across a SENTINEL FAILOVER, and a sentinel or a replica given where a master is
 * needed is named as such (a typed error; one CLI line and its exit code).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NotMasterError, RedisCoordinator, type LeaseLostError } from '../../src/index.js'
import { roleOf, startSentinels, withClient, type SentinelSet } from '../../scripts/redis-procs.mjs'
import { startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { until } from '../helpers/wait.js'

let set: SentinelSet
const cleanup: Array<() => Promise<unknown>> = []
beforeAll(async () => {
  set = await startSentinels()
}, 60_000)
afterAll(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
  await set?.stop()
})

const sentinelArgs = () => set.sentinels.flatMap((s) => ['--sentinel', `127.0.0.1:${s.port}`]).concat('--master-name', set.masterName)

describe('Redis Sentinel', () => {
  it('a sentinel or a replica given where a master is needed: a typed error in the library, one line in the CLI', async () => {
    const sentinel = `redis://127.0.0.1:${set.sentinels[0]!.port}`
    // After a failover the sentinels turn the old master into a replica of the new one: wait for it.
    const replicaPort = await until(
      async () => {
        const port = await set.replicaPort()
        return (await roleOf(port)) === 'slave' && port
      },
      20_000,
      'the other server to be a replica',
    )
    const replica = `redis://127.0.0.1:${replicaPort}`
    const onSentinel = new RedisCoordinator({ url: sentinel, prefix: uniquePrefix() })
    const err1 = await onSentinel.start().catch((e: unknown) => e)
    expect(err1).toBeInstanceOf(NotMasterError)
    expect(err1).toMatchObject({ role: 'sentinel', code: 'ERR_NOT_MASTER' })
    const onReplica = new RedisCoordinator({ url: replica, prefix: uniquePrefix() })
    const err2 = await onReplica.start().catch((e: unknown) => e)
    expect(err2).toBeInstanceOf(NotMasterError)
    expect(err2).toMatchObject({ role: 'replica' })

    const cli = await runCli(['--url', sentinel, 'doctor'])
    expect(cli.code).toBe(2)
    expect(cli.stderr.trim()).toMatch(
      /^botmesh-coord: not a Redis master at redis:\/\/127\.0\.0\.1:\d+: it is a Redis Sentinel; give the sentinels/,
    )
    expect(cli.stderr.split('\n').filter(Boolean)).toHaveLength(1)

    const doctor = await runCli(['--url', replica, 'doctor', '--json'])
    expect(doctor.code).toBe(1)
    const checks = parseJson<{ checks: Array<{ id: string; status: string; detail: string }> }>(doctor).checks
    expect(checks.find((c) => c.id === 'failover')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/is a read-only replica/),
    })
    expect(checks.find((c) => c.id === 'redis-version')?.detail).toMatch(/on 1 server \(a replica\)/)

    const unknown = await runCli(['--url', set.url.replace(/\/[^/]+$/, '/nope'), 'replicas', 'ls'])
    expect(unknown.code, unknown.stderr).toBe(2)
    expect(unknown.stderr).toMatch(/follow no master of that name/)
  })

  it('a coordinator on redis+sentinel:// keeps granting turns across a SENTINEL FAILOVER, fences growing', async () => {
    const prefix = uniquePrefix('sent')
    const a = await startCoordinator(() => new RedisCoordinator({ url: set.url, prefix, replicaId: 'a', leaseMs: 3000 }))
    const b = await startCoordinator(() => new RedisCoordinator({ url: set.url, prefix, replicaId: 'b', leaseMs: 3000 }))
    cleanup.push(
      () => a.stop(),
      () => b.stop(),
    )
    const fences: number[] = []
    const lost: LeaseLostError['reason'][] = []
    a.on('coordination:lease-lost', (e) => lost.push(e.reason))
    let stop = false
    let failures = 0
    // Two replicas take turns on the same chats while the master changes under them.
    const loop = async (c: RedisCoordinator, chat: string) => {
      while (!stop) {
        try {
          const t = await c.acquireTurn(chat, { waitMs: 20_000 })
          fences.push(t.fence)
          await t.release()
        } catch {
          failures++
        }
      }
    }
    const loops = [loop(a, 'chat:1'), loop(b, 'chat:1'), loop(a, 'chat:2')]
    await until(() => fences.length >= 20, 10_000, 'turns before the failover')
    const before = await set.master()
    const now = await set.failover()
    expect(now).not.toBe(before)
    const atFailover = fences.length
    await until(() => fences.length >= atFailover + 20, 20_000, 'turns after the failover')
    stop = true
    await Promise.all(loops)
    // Turns moved on over the new master, and a turn taken after it was on a later fence than any before.
    const last = await a.acquireTurn('chat:1')
    expect(last.fence).toBeGreaterThan(Math.max(...fences.slice(0, atFailover)))
    await last.release()
    expect(a.running && b.running).toBe(true)
    expect(failures).toBeLessThan(fences.length)
  })

  it('the CLI reaches the master through --url redis+sentinel:// and through --sentinel/--master-name', async () => {
    const prefix = uniquePrefix('sentcli')
    const c = await startCoordinator(() => new RedisCoordinator({ url: set.url, prefix, replicaId: 'pod-s', leaseMs: 5000 }))
    cleanup.push(() => c.stop())
    type Replicas = { replicas: Array<{ replicaId: string }> }
    const viaUrl = parseJson<Replicas>(await runCli(['--url', set.url, '--prefix', prefix, 'replicas', 'ls', '--json']))
    expect(viaUrl.replicas.map((r) => r.replicaId)).toEqual(['pod-s'])
    const viaOptions = parseJson<Replicas>(await runCli([...sentinelArgs(), '--prefix', prefix, 'replicas', 'ls', '--json']))
    expect(viaOptions.replicas.map((r) => r.replicaId)).toEqual(['pod-s'])
    const doctor = await runCli([...sentinelArgs(), '--prefix', prefix, 'doctor'])
    expect(doctor.stdout).toMatch(new RegExp(`failover +master "${set.masterName}" followed through 3 sentinel`))
  })

  it('a process that closes its store exits by itself: no connection to the sentinels is left open', async () => {
    const dist = new URL('../../dist/src/index.js', import.meta.url).href
    const script = `import { RedisStore } from ${JSON.stringify(dist)}
const store = new RedisStore({ url: process.env.SENTINEL_URL, prefix: 'exit-check' })
await store.getCheckpoint('chat:1')
await new Promise((r) => setTimeout(r, 300)) // the failover detector subscribes to the sentinels
await store.close()
console.log('closed')`
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, SENTINEL_URL: set.url } })
    cleanup.push(async () => child.kill('SIGKILL'))
    let out = ''
    child.stdout.on('data', (b: Buffer) => (out += b.toString()))
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    let code: number | null | undefined
    void exit.then((c) => (code = c))
    await until(() => code !== undefined, 15_000, 'the process to exit after store.close()')
    expect(code).toBe(0)
    expect(out).toContain('closed')
  })

  it('a context holds the sentinels and the master name', async () => {
    const prefix = uniquePrefix('sentctx')
    const dir = mkdtempSync(join(tmpdir(), 'botmesh-sent-'))
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }))
    const env = { BOTMESH_CONFIG: join(dir, 'config.json') }
    const made = await runCli([...sentinelArgs(), '--prefix', prefix, 'config', 'set-context', 'ha', '--current'], { env })
    expect(made.code, made.stderr).toBe(0)
    const view = parseJson<{ contexts: Array<{ sentinels: string; masterName: string; url: string | null }> }>(
      await runCli(['config', 'get-contexts', '--json'], { env }),
    )
    expect(view.contexts[0]).toMatchObject({ masterName: set.masterName, url: null })
    expect(view.contexts[0]!.sentinels.split(',')).toHaveLength(3)
    const c = await startCoordinator(() => new RedisCoordinator({ url: set.url, prefix, replicaId: 'pod-ctx', leaseMs: 5000 }))
    cleanup.push(() => c.stop())
    const ls = parseJson<{ replicas: Array<{ replicaId: string }> }>(
      await runCli(['--prefix', prefix, 'replicas', 'ls', '--json'], { env }),
    )
    expect(ls.replicas.map((r) => r.replicaId)).toEqual(['pod-ctx'])
    writeFileSync(join(dir, 'other.json'), JSON.stringify({ contexts: { bad: { sentinels: '127.0.0.1:1' } } }))
    const half = await runCli(['--context', 'bad', 'replicas', 'ls'], { env: { BOTMESH_CONFIG: join(dir, 'other.json') } })
    expect(half.code).toBe(2)
    expect(half.stderr).toMatch(/--master-name/)
  })
})

describe('Redis Sentinel with a password and an ACL user', () => {
  let secured: SentinelSet
  beforeAll(async () => {
    secured = await startSentinels({ password: 'default-pw' })
    // An ACL user on both data servers (ACL rules are not replicated): what an operator gives the bot.
    for (const server of secured.servers) {
      await withClient(server.port, (c) => c.call('ACL', 'SETUSER', 'bot', 'on', '>bot-pw', '~*', '&*', '+@all'), {
        password: 'default-pw',
      })
    }
  }, 60_000)
  const mine: Array<() => Promise<unknown>> = []
  afterAll(async () => {
    // Its coordinators first, while its servers still answer.
    for (const f of mine.splice(0).reverse()) await f().catch(() => {})
    await secured?.stop()
  })

  it('the library and the CLI reach the master as the ACL user through the sentinels; without the password the CLI says so (exit 5)', async () => {
    const prefix = uniquePrefix('sentacl')
    const url = secured.url.replace('redis+sentinel://', 'redis+sentinel://bot:bot-pw@')
    const c = await startCoordinator(() => new RedisCoordinator({ url, prefix, replicaId: 'pod-acl', leaseMs: 5000 }))
    mine.push(() => c.stop())
    const turn = await c.acquireTurn('chat:acl')
    await turn.release()
    const args = secured.sentinels.flatMap((s) => ['--sentinel', `127.0.0.1:${s.port}`]).concat('--master-name', secured.masterName)
    const ok = await runCli([...args, '--prefix', prefix, 'replicas', 'ls', '--json'], {
      env: { REDIS_PASSWORD: 'bot-pw', REDIS_USERNAME: undefined },
    })
    // The user comes with the URL form; the options form uses the default user's password here.
    expect(ok.code, ok.stderr).toBe(5)
    const asUser = await runCli(['--url', url, '--prefix', prefix, 'replicas', 'ls', '--json'])
    expect(asUser.code, asUser.stderr).toBe(0)
    expect(parseJson<{ replicas: Array<{ replicaId: string }> }>(asUser).replicas.map((r) => r.replicaId)).toEqual(['pod-acl'])
    expect(asUser.stdout + asUser.stderr).not.toContain('bot-pw')
    const withDefault = await runCli([...args, '--prefix', prefix, 'replicas', 'ls', '--json'], { env: { REDIS_PASSWORD: 'default-pw' } })
    expect(withDefault.code, withDefault.stderr).toBe(0)
    const none = await runCli([...args, '--prefix', prefix, 'replicas', 'ls'])
    expect(none.code).toBe(5)
    expect(none.stderr).toMatch(/authentication refused/)
  })
})
