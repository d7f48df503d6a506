/**
 * The read side's edges: bad input, unreachable Redis, wrong password, corrupt values, a Redis ACL
 * user that may only read, doctor's exit code, help and completion. Subprocesses, real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout, RedisCoordinator } from '../../src/index.js'
import { freePort, redisUrl, startRedis, uniquePrefix, type RedisProc } from '../helpers/redis.js'
import { BIN, parseJson, runCli } from '../helpers/cli.js'
import { startExporter } from '../helpers/exporter.js'
import { until } from '../helpers/wait.js'
import { spawn } from 'node:child_process'
import { liveState, type LiveState } from './read-fixture.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const oneLine = (s: string) => expect(s.trimEnd().split('\n')).toHaveLength(1)

describe('bad input', () => {
  it('unknown command, missing argument, bad option values, empty prefix: one line, exit 2', async () => {
    const url = redisUrl()
    const [unknown, missing, expiring, emptyPrefix, shell] = await Promise.all([
      runCli(['--url', url, 'leases', 'lss']),
      runCli(['--url', url, 'chat', 'inspect']),
      runCli(['--url', url, 'leases', 'ls', '--expiring', 'soon']),
      runCli(['--url', url, '--prefix', '', 'leases', 'ls']),
      runCli(['completion', 'tcsh']),
    ])
    for (const r of [unknown, missing, expiring, emptyPrefix, shell]) {
      expect(r.code).toBe(2)
      oneLine(r.stderr)
      expect(r.stderr).toMatch(/^botmesh-coord: /)
      expect(r.stdout).toBe('')
    }
    expect(missing.stderr).toMatch(/missing required argument 'key'/)
    expect(emptyPrefix.stderr).toMatch(/--prefix: prefix must be a non-empty string/)
    expect(expiring.stderr).toMatch(/--expiring/)
  })

  it('unknown chat, checkpoint or provider: exit 3', async () => {
    const base = ['--url', redisUrl(), '--prefix', uniquePrefix('nf')]
    const rs = await Promise.all([
      runCli([...base, 'chat', 'inspect', 'chat:nope']),
      runCli([...base, 'checkpoint', 'inspect', 'chat:nope']),
      runCli([...base, 'provider', 'status', 'telegram']),
    ])
    for (const r of rs) {
      expect(r.code).toBe(3)
      oneLine(r.stderr)
    }
    expect(rs[0]!.stderr).toContain('no chat "chat:nope"')
    expect(rs[2]!.stderr).toContain('"provider:telegram"')
  })

  it('unreachable Redis: exit 4, says why', async () => {
    const port = await freePort()
    const r = await runCli(['--url', `redis://127.0.0.1:${port}`, 'chat', 'ls'])
    expect(r.code).toBe(4)
    oneLine(r.stderr)
    expect(r.stderr).toMatch(/Redis unreachable at redis:\/\/127\.0\.0\.1:\d+: connection refused/)
  })

  it('help for every read command has an example; completion scripts', async () => {
    const cmds = [
      ['replicas', 'ls'],
      ['leases', 'ls'],
      ['chat', 'ls'],
      ['chat', 'inspect'],
      ['provider', 'ls'],
      ['provider', 'status'],
      ['checkpoints', 'ls'],
      ['checkpoint', 'inspect'],
      ['handover', 'ls'],
      ['locks', 'ls'],
      ['events'],
      ['doctor'],
      ['completion'],
    ]
    const rs = await Promise.all(cmds.map((c) => runCli([...c, '--help'])))
    rs.forEach((r, i) => {
      expect(r.code, cmds[i]!.join(' ')).toBe(0)
      expect(r.stdout, cmds[i]!.join(' ')).toMatch(/Examples?:\n\s+(botmesh-coord|source)/)
    })
    const [bash, fish] = await Promise.all([runCli(['completion', 'bash']), runCli(['completion', 'fish'])])
    expect(bash.stdout).toContain('complete -F _botmesh_coord botmesh-coord')
    expect(bash.stdout).toContain('"chat") words="ls list inspect')
    expect(fish.stdout).toContain('complete -c botmesh-coord -l prefix -r')
  })
})

describe('corrupt values under the prefix', () => {
  const prefix = uniquePrefix('corrupt')
  const keys = new KeyLayout(prefix, 'standalone')
  let c: RedisCoordinator
  let raw: Redis
  beforeAll(async () => {
    c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-ok', leaseMs: 30_000 })
    await c.start()
    await c.acquireTurn('chat:fine')
    raw = new Redis(redisUrl())
    await raw.set(keys.chat('chat:wrongtype').state, 'not a hash')
    const now = Date.now()
    await raw.hset(keys.replica('pod-broken'), { id: 'pod-broken', inc: 'x', beat: now, exp: now + 60_000, info: '{broken json' })
    await raw.pexpire(keys.replica('pod-broken'), 60_000)
  })
  afterAll(async () => {
    await c?.stop()
    await raw?.quit()
  })

  it('listings report the corrupt key and go on; doctor fails', async () => {
    const base = ['--url', redisUrl(), '--prefix', prefix]
    const [chats, chatsTable, replicas, doctor] = await Promise.all([
      runCli([...base, 'chat', 'ls', '--json']),
      runCli([...base, 'chat', 'ls']),
      runCli([...base, 'replicas', 'ls', '--json']),
      runCli([...base, 'doctor', '--json']),
    ])
    expect(chats.code).toBe(0)
    const cj = parseJson<J>(chats)
    expect(cj.chats.map((x: J) => x.key)).toEqual(['chat:fine'])
    expect(cj.corrupt).toContainEqual({ rawKey: keys.chat('chat:wrongtype').state, error: 'wrong Redis type' })
    expect(chatsTable.code).toBe(0)
    expect(chatsTable.stdout).toContain('chat:fine')
    expect(chatsTable.stderr).toContain(`corrupt: ${keys.chat('chat:wrongtype').state}: wrong Redis type`)
    const rj = parseJson<J>(replicas)
    expect(rj.replicas.map((x: J) => x.replicaId)).toEqual(['pod-ok'])
    expect(rj.corrupt[0]).toMatchObject({
      rawKey: keys.replica('pod-broken'),
      error: expect.stringContaining('field info is not valid JSON'),
    })
    expect(doctor.code).toBe(1)
    expect(parseJson<J>(doctor).checks.find((x: J) => x.id === 'corrupt')).toMatchObject({ status: 'fail' })
  })
  it('events -f follows the stream (one JSON object per line) until interrupted', async () => {
    const child = spawn(
      process.execPath,
      [BIN, '--url', redisUrl(), '--prefix', prefix, 'events', '-f', '--json', '--type', 'replica-start', '--interval', '100ms'],
      {
        env: { ...process.env, NO_COLOR: '1' },
      },
    )
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)))
    const seen = (n: number) => out.split('\n').filter(Boolean).length >= n
    await until(() => seen(1), 10_000, "pod-ok's start printed", 50)
    const late = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-late', leaseMs: 30_000 })
    await late.start()
    await until(() => seen(2), 10_000, "pod-late's start printed", 50)
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    await late.stop()
    const lines = out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as J)
    expect(lines.map((e) => [e.type, e.replicaId])).toEqual([
      ['replica-start', 'pod-ok'],
      ['replica-start', 'pod-late'],
    ])
  })
})

describe('a password-protected Redis with an evicting policy, and a read-only ACL user', () => {
  const password = 'Sup3r-secret-pw'
  let server: RedisProc
  let s: LiveState
  let port: number
  beforeAll(async () => {
    server = await startRedis({ password, args: ['--maxmemory', '200mb', '--maxmemory-policy', 'allkeys-lru'] })
    port = Number(new URL(server.url).port)
    const admin = new Redis({ port, password })
    // The documented read-only user: reads, TIME, INFO (connection check, layout detection), nothing else.
    await admin.call(
      'ACL',
      'SETUSER',
      'reader',
      'on',
      '>reader-pw',
      '~*',
      'resetchannels',
      '-@all',
      '+@read',
      '+@connection',
      '+info',
      '+time',
      '+cluster|slots',
      '+cluster|info',
    )
    await admin.quit()
    s = await liveState(server.url, uniquePrefix('acl'), 'standalone')
  })
  afterAll(async () => {
    await s?.stop()
    await server?.stop()
  })

  it('a wrong password: exit 5, and no password in any output', async () => {
    const wrong = 'Wr0ng-pw-never-echoed'
    const [r, user] = await Promise.all([
      runCli(['--url', `redis://:${wrong}@127.0.0.1:${port}`, 'leases', 'ls']),
      runCli(['leases', 'ls'], { env: { REDIS_URL: `redis://reader:${wrong}@127.0.0.1:${port}` } }),
    ])
    for (const x of [r, user]) {
      expect(x.code).toBe(5)
      expect(x.stderr).toMatch(/^botmesh-coord: authentication refused by Redis at redis:\/\/.*127\.0\.0\.1/)
      expect(x.stderr + x.stdout).not.toContain(wrong)
      oneLine(x.stderr)
    }
  })

  it('every read command runs as the read-only ACL user; doctor says which check it could not run', async () => {
    const base = ['--url', `redis://reader:reader-pw@127.0.0.1:${port}`, '--prefix', s.prefix]
    const cmds = [
      ['replicas', 'ls'],
      ['leases', 'ls'],
      ['chat', 'ls'],
      ['chat', 'inspect', 'chat:7', '--explain'],
      ['provider', 'ls'],
      ['provider', 'status', 'whatsapp'],
      ['checkpoints', 'ls'],
      ['checkpoint', 'inspect', 'chat:42'],
      ['handover', 'ls'],
      ['locks', 'ls'],
      ['events'],
    ]
    const rs = await Promise.all(cmds.map((c) => runCli([...base, ...c, '--json'])))
    rs.forEach((r, i) => {
      expect(r.stderr, cmds[i]!.join(' ')).toBe('')
      expect(r.code, cmds[i]!.join(' ')).toBe(0)
      expect(parseJson<J>(r).schemaVersion).toBe(1)
      expect(r.stdout).not.toContain('reader-pw')
    })
    expect(parseJson<J>(rs[1]!).leases).toHaveLength(5)
    const doc = await runCli([...base, 'doctor', '--json'])
    expect(doc.code).toBe(0) // it could not see the evicting policy: a skip, not a pass
    expect(parseJson<J>(doc).checks.find((x: J) => x.id === 'eviction-policy')).toMatchObject({
      status: 'skip',
      fix: expect.stringContaining('+config|get'),
    })
  })

  it('the exporter runs as the read-only ACL user, and its error info never shows the password', async () => {
    const exporter = await startExporter(['--url', `redis://reader:reader-pw@127.0.0.1:${port}`, '--prefix', s.prefix])
    try {
      const { text } = await exporter.get('/metrics')
      expect(text).toMatch(/^botmesh_redis_up 1$/m)
      expect(text).toMatch(/^botmesh_lead_leader_present\{lead="provider:whatsapp",kind="provider"\} 1$/m)
      expect(text).not.toContain('reader-pw')
    } finally {
      await exporter.stop()
    }
  })

  it('doctor as the admin finds the evicting policy: exit 1 (unsafe)', async () => {
    const [j, t] = await Promise.all([
      runCli(['--url', server.url, '--prefix', s.prefix, 'doctor', '--json']),
      runCli(['--url', server.url, '--prefix', s.prefix, 'doctor']),
    ])
    expect(j.code).toBe(1)
    expect(parseJson<J>(j).checks.find((x: J) => x.id === 'eviction-policy')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('allkeys-lru'),
    })
    expect(t.code).toBe(1)
    expect(t.stdout).toMatch(/FAIL\s+eviction-policy/)
    expect(t.stdout + t.stderr).not.toContain(password)
  })
})
