/**
 * The conventions every listing shares (formats, --sort, --replica, -w, --all), one JSON schema per
 * kind across ls, inspect and watch --jsonl, one connection per command, and contexts with passwords
 * from files and variables. Subprocesses, real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { RedisCoordinator } from '../../src/index.js'
import { startRedis, uniquePrefix, type RedisProc } from '../helpers/redis.js'
import { BIN, parseJson, runCli } from '../helpers/cli.js'
import { until } from '../helpers/wait.js'
import { liveState, type LiveState } from './read-fixture.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

describe('listings, on a private Redis', () => {
  let redis: RedisProc
  let s: LiveState
  const base = () => ['--url', redis.url, '--prefix', s.prefix]
  beforeAll(async () => {
    redis = await startRedis()
    s = await liveState(redis.url, uniquePrefix('conv'), 'standalone')
  })
  afterAll(async () => {
    await s?.stop()
    await redis?.stop()
  })

  it('one connection per command', async () => {
    const admin = new Redis(redis.url)
    const connections = async () => Number(/total_connections_received:(\d+)/.exec(await admin.info('stats'))![1])
    for (const cmd of [['leases', 'ls'], ['chat', 'inspect', 'chat:42'], ['version']]) {
      const before = await connections()
      const r = await runCli([...base(), ...cmd])
      expect(r.code, r.stderr).toBe(0)
      expect((await connections()) - before, cmd.join(' ')).toBe(1)
    }
    await admin.quit()
  })

  it('-o name, -o jsonl, --no-headers, --sort and --replica', async () => {
    const [names, jsonl, bare, sorted, mine] = await Promise.all([
      runCli([...base(), 'leases', 'ls', '-o', 'name']),
      runCli([...base(), 'leases', 'ls', '-o', 'jsonl']),
      runCli([...base(), 'leases', 'ls', '--no-headers']),
      runCli([...base(), 'leases', 'ls', '--sort', 'key', '-o', 'json']),
      runCli([...base(), 'chat', 'ls', '--replica', 'pod-a', '-o', 'json']),
    ])
    expect(names.stdout.trim().split('\n')).toEqual([
      'chat/chat:42',
      'chat/chat:7',
      'provider/provider:whatsapp',
      'scheduler/scheduler:report',
      'lock/invoice:run',
    ])
    const lines = jsonl.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as J)
    expect(lines.map((l) => l.key)).toEqual(['chat:42', 'chat:7', 'provider:whatsapp', 'scheduler:report', 'invoice:run'])
    expect(bare.stdout).not.toMatch(/KIND\s+KEY/)
    expect(bare.stdout.trim().split('\n')).toHaveLength(5)
    expect(parseJson<J>(sorted).leases.map((l: J) => l.key)).toEqual([
      'chat:42',
      'chat:7',
      'invoice:run',
      'provider:whatsapp',
      'scheduler:report',
    ])
    expect(parseJson<J>(mine).chats.map((c: J) => c.key)).toEqual(['chat:42'])
  })

  it('replicas ls --all shows the restarted replica’s old incarnation still holding chat:7; chat ls --all the idle chat', async () => {
    const [all, chats] = await Promise.all([
      runCli([...base(), 'replicas', 'ls', '--all', '-o', 'json']),
      runCli([...base(), 'chat', 'ls', '--all', '-o', 'json']),
    ])
    const stale = parseJson<J>(all).replicas.find((r: J) => r.incarnation === s.oldC.incarnation)
    expect(stale).toMatchObject({ replicaId: 'pod-c', state: 'stale', turnsHeld: 1, leasesHeld: 1 })
    expect(parseJson<J>(chats).chats.map((c: J) => c.key)).toContain('chat:9') // released: idle
  })

  it('one JSON schema per kind: chat ls rows in chat inspect, listing rows in watch --jsonl', async () => {
    const [ls, inspect, watch, replicas, providers] = await Promise.all([
      runCli([...base(), 'chat', 'ls', '-o', 'json']),
      runCli([...base(), 'chat', 'inspect', 'chat:42', '-o', 'json']),
      runCli([...base(), 'watch', '--jsonl', '--count', '1']),
      runCli([...base(), 'replicas', 'ls', '-o', 'json']),
      runCli([...base(), 'provider', 'ls', '-o', 'json']),
    ])
    const row = parseJson<J>(ls).chats.find((c: J) => c.key === 'chat:42')
    const whole = parseJson<J>(inspect).chat
    expect(Object.keys(whole).slice(0, Object.keys(row).length)).toEqual(Object.keys(row))
    const snap = JSON.parse(watch.stdout.trim()) as J
    expect(Object.keys(snap.replicas[0]).sort()).toEqual(Object.keys(parseJson<J>(replicas).replicas[0]).sort())
    expect(Object.keys(snap.providers[0]).sort()).toEqual(Object.keys(parseJson<J>(providers).providers[0]).sort())
    const watched = snap.chats.find((c: J) => c.key === 'chat:42')
    for (const k of Object.keys(row)) expect(watched, k).toHaveProperty(k)
    expect(snap.leases[0]).toHaveProperty('holderAlive')
  })

  it('-w prints the listing again when it changes, until Ctrl-C', async () => {
    const child = spawn(process.execPath, [BIN, ...base(), 'chat', 'ls', '-w', '--interval', '100ms', '-o', 'json'], {
      env: { ...process.env, NO_COLOR: '1' },
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    const docs = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as J)
    await until(() => docs().length >= 1, 20_000, 'the first listing')
    const turn = await s.b.acquireTurn('chat:new')
    await until(() => docs().some((d) => d.chats.some((c: J) => c.key === 'chat:new')), 20_000, 'the listing with chat:new')
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)))
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    await turn.release()
    expect(docs()[0]!.chats.map((c: J) => c.key)).not.toContain('chat:new')
  })
})

describe('contexts and passwords', () => {
  const password = 'Ctx-secret-pw'
  let redis: RedisProc
  let dir: string
  let prefix: string
  let c: RedisCoordinator
  beforeAll(async () => {
    redis = await startRedis({ password })
    prefix = uniquePrefix('ctx')
    dir = mkdtempSync(join(tmpdir(), 'botmesh-ctx-'))
    writeFileSync(join(dir, 'pw'), `${password}\n`)
    const u = new URL(redis.url)
    c = new RedisCoordinator({ url: `redis://:${password}@${u.host}`, prefix, replicaId: 'pod-a', leaseMs: 30_000 })
    await c.start()
  })
  afterAll(async () => {
    await c?.stop()
    await redis?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('set-context, use-context, get-contexts, view; --context and BOTMESH_CONTEXT; the password from a file or a variable', async () => {
    const host = new URL(redis.url).host
    const env = { BOTMESH_CONFIG: join(dir, 'config.json') }
    const set = await runCli(
      ['--url', `redis://${host}`, '--prefix', prefix, '--password-file', join(dir, 'pw'), 'config', 'set-context', 'prod'],
      { env },
    )
    expect(set.code, set.stderr).toBe(0)
    const setStaging = await runCli(
      ['--url', `redis://${host}`, '--prefix', 'elsewhere', 'config', 'set-context', 'staging', '--password-env', 'STAGING_PW'],
      { env },
    )
    expect(setStaging.code, setStaging.stderr).toBe(0)
    expect((await runCli(['config', 'use-context', 'prod'], { env })).code).toBe(0)
    const list = await runCli(['config', 'get-contexts'], { env })
    expect(list.stdout).toMatch(/^\*\s+prod\s/m)
    const file = readFileSync(join(dir, 'config.json'), 'utf8')
    expect(file).not.toContain(password)
    const [view, viewJson, current] = await Promise.all([
      runCli(['config', 'view'], { env }),
      runCli(['config', 'view', '-o', 'json'], { env }),
      runCli(['config', 'current-context'], { env }),
    ])
    expect(view.code, view.stderr).toBe(0)
    expect(current.stdout.trim()).toBe('prod')
    expect(parseJson<J>(viewJson)).toMatchObject({
      kind: 'config',
      'current-context': 'prod',
      contexts: {
        prod: { url: `redis://${host}`, prefix, passwordFile: join(dir, 'pw') },
        staging: { url: `redis://${host}`, prefix: 'elsewhere', passwordEnv: 'STAGING_PW' },
      },
    })
    expect(view.stdout + viewJson.stdout).not.toContain(password)

    // The current context: its URL, prefix and password file.
    const ls = await runCli(['replicas', 'ls', '-o', 'json'], { env })
    expect(ls.code, ls.stderr).toBe(0)
    expect(parseJson<J>(ls).replicas.map((r: J) => r.replicaId)).toEqual(['pod-a'])
    // Another context by name (its password from a variable), and by BOTMESH_CONTEXT.
    const [byFlag, byEnv, noVar] = await Promise.all([
      runCli(['--context', 'staging', 'version', '-o', 'json'], { env: { ...env, STAGING_PW: password } }),
      runCli(['version', '-o', 'json'], { env: { ...env, BOTMESH_CONTEXT: 'staging', STAGING_PW: password } }),
      runCli(['--context', 'staging', 'version'], { env }),
    ])
    for (const r of [byFlag, byEnv]) {
      expect(r.code, r.stderr).toBe(0)
      expect(parseJson<J>(r).server.prefix).toBe('elsewhere')
    }
    expect(noVar.code).toBe(2)
    expect(noVar.stderr).toMatch(/STAGING_PW, which is not set/)
    // An option given on the command line wins over the context; REDIS_PASSWORD works without a context.
    const [flagWins, envPw] = await Promise.all([
      runCli(['--prefix', 'other', 'version', '-o', 'json'], { env }),
      runCli(['--url', `redis://${host}`, '--prefix', prefix, 'replicas', 'ls', '-o', 'json'], {
        env: { REDIS_PASSWORD: password, BOTMESH_CONFIG: join(dir, 'none.json') },
      }),
    ])
    expect(parseJson<J>(flagWins).server.prefix).toBe('other')
    expect(envPw.code, envPw.stderr).toBe(0)
    for (const r of [ls, byFlag, byEnv, flagWins, envPw]) expect(r.stdout + r.stderr).not.toContain(password)
    const unknown = await runCli(['--context', 'nope', 'leases', 'ls'], { env })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/no context "nope"/)
    const refusesPw = await runCli(['--url', `redis://:${password}@${host}`, 'config', 'set-context', 'bad'], { env })
    expect(refusesPw.code).toBe(2)
    expect(refusesPw.stderr).not.toContain(password)
    // A password written into a context's URL by hand is masked by view and get-contexts.
    const handEdited = { BOTMESH_CONFIG: join(dir, 'hand.json') }
    writeFileSync(
      handEdited.BOTMESH_CONFIG,
      JSON.stringify({ 'current-context': 'x', contexts: { x: { url: `redis://:${password}@${host}` } } }),
    )
    const shown = await Promise.all([
      runCli(['config', 'view'], { env: handEdited }),
      runCli(['config', 'get-contexts'], { env: handEdited }),
    ])
    for (const r of shown) {
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain(`redis://:***@${host}`)
      expect(r.stdout).not.toContain(password)
    }
  })
})
