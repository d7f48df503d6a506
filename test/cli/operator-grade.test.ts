/**
 * The CLI as a new operator meets it: never the wrong database, one line instead of a stack trace,
 * quiet on closed pipes, a quick start that loads nothing it does not need, one duration rule, and
 * state that is not what the reader expects reported key by key. Subprocesses, real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { KeyLayout, RedisCoordinator } from '../../src/index.js'
import { freePort, redisUrl, uniquePrefix } from '../helpers/redis.js'
import { BIN, parseJson, runCli, type CliResult } from '../helpers/cli.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const oneLine = (r: CliResult) => {
  expect(r.stderr.trimEnd().split('\n'), r.stderr).toHaveLength(1)
  expect(r.stderr).toMatch(/^botmesh-coord: /)
  expect(r.stderr).not.toMatch(/\n\s+at |Error: /)
}

/**
 * Run a shell pipeline; the CLI's own stderr is captured apart from the pipeline's consumer. With
 * pipefail, the code is the CLI's own when it fails (a trace's exit 1, a SIGPIPE death's 141).
 */
function pipeline(cliArgs: string, consumer: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      'bash',
      ['-o', 'pipefail', '-c', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ${cliArgs} 2>&3 | ${consumer} >/dev/null`],
      {
        env: { ...process.env, NO_COLOR: '1', REDIS_URL: undefined },
        stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
      },
    )
    let stderr = ''
    child.stdio[3]!.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('close', (code) => resolve({ code, stderr }))
  })
}

describe('the target is checked, errors are classified', () => {
  let http: Server
  let httpPort: number
  beforeAll(async () => {
    http = createServer((_req, res) => res.end('hello'))
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()))
    httpPort = (http.address() as { port: number }).port
  })
  afterAll(() => new Promise<void>((r) => http.close(() => r())))

  it('a database that does not exist is an error, not database 0 (exit 2)', async () => {
    const r = await runCli(['--url', `${redisUrl()}/99`, 'leases', 'ls'])
    expect(r.code).toBe(2)
    oneLine(r)
    expect(r.stderr).toMatch(/database 99 is not available/)
    expect(r.stdout).toBe('')
  })

  it('a server that does not speak RESP (an HTTP server) is named as such (exit 4)', async () => {
    const rs = await Promise.all([
      runCli(['--url', `redis://127.0.0.1:${httpPort}`, 'leases', 'ls']),
      runCli(['--url', `redis://127.0.0.1:${httpPort}`, '--layout', 'standalone', 'chat', 'ls']),
      runCli(['--url', `redis://127.0.0.1:${httpPort}`, 'demo', '--duration', '1s']),
    ])
    for (const r of rs) {
      expect(r.code).toBe(4)
      oneLine(r)
      expect(r.stderr).toMatch(/does not speak the Redis protocol/)
      expect(r.stderr).not.toMatch(/Please report this|unexpected error/)
    }
  })

  it('an unreadable CA file, a bad URL: one line, exit 2', async () => {
    const rs = await Promise.all([
      runCli(['--url', redisUrl(), '--tls-ca', '/nonexistent/ca.pem', 'leases', 'ls']),
      runCli(['--url', 'http://127.0.0.1:6379', 'leases', 'ls']),
      runCli(['--url', 'redis://127.0.0.1:6379/abc', 'leases', 'ls']),
      runCli(['--url', 'not a url', 'leases', 'ls']),
    ])
    for (const r of rs) {
      expect(r.code).toBe(2)
      oneLine(r)
    }
    expect(rs[0]!.stderr).toMatch(/--tls-ca: cannot read \/nonexistent\/ca\.pem: no such file/)
    expect(rs[1]!.stderr).toMatch(/unsupported scheme http:/)
    // The hint reads as written (no part of it taken for a password and masked).
    expect(rs[3]!.stderr).toMatch(/not a Redis URL: not a url \(expected redis:\/\/host:port\[\/db\] or rediss:\/\/…/)
    expect(rs[3]!.stderr).not.toContain('***')
  })

  it("the Redis client's warnings come through the tool's one-line output, once", async () => {
    const u = new URL(redisUrl())
    const r = await runCli(['--url', `redis://:unneeded-pw@${u.host}`, '--prefix', uniquePrefix('warn'), 'leases', 'ls'])
    expect(r.code).toBe(0)
    const warnings = r.stderr.split('\n').filter((l) => /password/.test(l))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/^botmesh-coord: warning: .*does not require a password/)
    expect(r.stderr).not.toContain('[WARN]')
    expect(r.stderr + r.stdout).not.toContain('unneeded-pw')
  })

  it('with -o json / -o jsonl / --json, every error is one JSON object on stderr', async () => {
    const prefix = uniquePrefix('jsonerr')
    const rs = await Promise.all([
      runCli(['--url', `redis://127.0.0.1:${await freePort()}`, '-o', 'json', 'leases', 'ls']),
      runCli(['--url', `${redisUrl()}/99`, 'leases', 'ls', '--json']),
      runCli(['--url', redisUrl(), '--prefix', prefix, 'chat', 'inspect', 'chat:none', '-o', 'json']),
      runCli(['--url', redisUrl(), '--prefix', prefix, 'leases', 'ls', '--expiring', '5', '-o', 'jsonl']),
      runCli(['--url', redisUrl(), '--prefix', prefix, 'chat', 'release', 'chat:none', '--yes', '-o', 'json']),
    ])
    expect(rs.map((r) => r.code)).toEqual([4, 2, 3, 2, 3])
    for (const r of rs) {
      expect(r.stdout).toBe('')
      expect(r.stderr.trimEnd().split('\n'), r.stderr).toHaveLength(1)
      expect(JSON.parse(r.stderr)).toMatchObject({ kind: 'error', error: { code: r.code, message: expect.any(String) } })
    }
    expect(JSON.parse(rs[0]!.stderr).error.message).toMatch(/connection refused/)
    expect(JSON.parse(rs[1]!.stderr).error.message).toMatch(/database 99 is not available/)
  })

  it('a refused connection says why (exit 4)', async () => {
    const r = await runCli(['--url', `redis://127.0.0.1:${await freePort()}`, 'chat', 'ls'])
    expect(r.code).toBe(4)
    oneLine(r)
    expect(r.stderr).toMatch(/connection refused/)
  })
})

describe('a closed stdout ends any command quietly', () => {
  it('help and version through | head -1: no EPIPE trace', async () => {
    const rs = await Promise.all([
      pipeline('--help', 'head -1'),
      pipeline('chat help inspect', 'head -1'),
      pipeline('completion bash', 'head -1'),
    ])
    for (const r of rs) {
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
    }
  })

  it('a reader that is gone before the first write (| true): no trace, exit 0, every time', async () => {
    // `head -1` may read everything before it exits, and a short help then meets no closed pipe;
    // `true` exits before the CLI has started, so its first write always meets one.
    const prefix = uniquePrefix('epipe')
    const c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-a', leaseMs: 30_000 })
    await c.start()
    try {
      await c.acquireTurn('chat:1') // something to list
      const rs = await Promise.all([
        pipeline('--help', 'true'),
        pipeline('chat help inspect', 'true'),
        pipeline('--version', 'true'),
        pipeline(`--url ${redisUrl()} --prefix ${prefix} leases ls`, 'true'),
      ])
      rs.forEach((r, i) => {
        expect(r.stderr, String(i)).toBe('')
        expect(r.code, String(i)).toBe(0)
      })
    } finally {
      await c.stop()
    }
  })

  it('events -f | head -2 ends (also when no new event comes), without a trace', async () => {
    const prefix = uniquePrefix('epipe')
    const c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-a', leaseMs: 30_000 })
    await c.start()
    await c.stop() // two events: replica-start, replica-stop
    // The interval is long: the command must notice the closed pipe without writing.
    const r = await pipeline(`--url ${redisUrl()} --prefix ${prefix} events -f --interval 10m`, 'head -1')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
  })

  it('events -f | head -2 while new events come: the follower meets the closed pipe quietly', async () => {
    const prefix = uniquePrefix('epipe')
    const make = (id: string) => new RedisCoordinator({ url: redisUrl(), prefix, replicaId: id, leaseMs: 30_000 })
    const first = make('pod-a')
    await first.start()
    await first.stop() // header and two lines: more than head -2 reads
    let done = false
    const ended = pipeline(`--url ${redisUrl()} --prefix ${prefix} events -f --interval 100ms`, 'head -2').finally(() => (done = true))
    // New events until the follower has ended (at most 15 s): each is a write to the pipe head closed.
    const deadline = Date.now() + 15_000
    for (let i = 0; !done && Date.now() < deadline; i++) {
      const c = make(`pod-${i}`)
      await c.start()
      await c.stop()
    }
    const r = await ended
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
  })
})

describe('start-up: only what the command needs is loaded', () => {
  const trace = fileURLToPath(new URL('../fixtures/load-trace.mjs', import.meta.url))
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'botmesh-load-trace-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const loaded = async (args: string[], name: string): Promise<string[]> => {
    const log = join(dir, `${name}.log`)
    const r = await runCli(args, { env: { NODE_OPTIONS: `--import=${trace}`, BOTMESH_LOAD_TRACE: log } })
    expect(r.code, r.stderr).toBe(0)
    return readFileSync(log, 'utf8').split('\n').filter(Boolean)
  }

  it('--version, --help and completion load no Redis client and no ink/react; a listing loads no ink/react', async () => {
    for (const [name, args] of [
      ['version', ['--version']],
      ['help', ['--help']],
      ['completion', ['completion', 'zsh']],
    ] as const) {
      const pkgs = await loaded([...args], name)
      expect(pkgs, name).toContain('commander')
      for (const heavy of ['ioredis', 'ink', 'react', 'yoga-layout']) expect(pkgs, `${name} loads ${heavy}`).not.toContain(heavy)
    }
    const ls = await loaded(['--url', redisUrl(), '--prefix', uniquePrefix('load'), 'leases', 'ls'], 'leases')
    expect(ls).toContain('ioredis')
    for (const heavy of ['ink', 'react', 'yoga-layout']) expect(ls).not.toContain(heavy)
  })
})

describe('one duration rule', () => {
  it('compound values, case-insensitive units and the units the tool prints are accepted', async () => {
    const base = ['--url', redisUrl(), '--prefix', uniquePrefix('dur')]
    const rs = await Promise.all([
      runCli([...base, '--timeout', '1s', 'leases', 'ls']),
      runCli([...base, 'leases', 'ls', '--expiring', '1m30s']),
      runCli([...base, 'leases', 'ls', '--expiring', '5S']),
      runCli([...base, 'leases', 'ls', '--expiring', '1.5s']),
    ])
    for (const r of rs) expect(r.code, r.stderr).toBe(0)
  })

  it('a bare number is refused with a hint; intervals have a floor; choices and durations are validated', async () => {
    const base = ['--url', redisUrl()]
    const rs = await Promise.all([
      runCli([...base, 'leases', 'ls', '--expiring', '5']),
      runCli([...base, '--timeout', '5000', 'leases', 'ls']),
      runCli([...base, 'events', '-f', '--interval', '0']),
      runCli([...base, 'events', '--type', 'bogus']),
      runCli([...base, 'chat', 'inspect', 'chat:1', '--turn-wait', 'abc']),
      runCli(['demo', '--duration', '40']),
    ])
    for (const r of rs) {
      expect(r.code, r.stderr).toBe(2)
      oneLine(r)
    }
    expect(rs[0]!.stderr).toMatch(/5 has no unit: write 5ms or 5s/)
    expect(rs[2]!.stderr).toMatch(/at least 100ms/)
    expect(rs[3]!.stderr).toMatch(/bogus/)
    // demo --duration takes a duration: 40s and 1m30s are read, and the demo goes on to look for its
    // Redis (none answers at this --url: exit 4, not a usage error about --duration).
    const nobody = `redis://127.0.0.1:${await freePort()}`
    for (const d of ['40s', '1m30s']) {
      const demo = await runCli(['--url', nobody, 'demo', '--duration', d])
      expect(demo.code, demo.stderr).toBe(4)
      oneLine(demo)
      expect(demo.stderr).toMatch(
        /Redis unreachable at \S+: connection refused; without --url \/ REDIS_URL \/ --context the demo starts its own redis-server/,
      )
    }
  })

  it('Ctrl-C during a long follow interval ends the command at once', async () => {
    const prefix = uniquePrefix('sigint')
    const child = spawn(process.execPath, [BIN, '--url', redisUrl(), '--prefix', prefix, 'events', '-f', '--interval', '10m'], {
      env: { ...process.env, NO_COLOR: '1' },
    })
    let err = ''
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    // Wait until it follows (the empty listing says so on stderr), then interrupt.
    await new Promise<void>((r) => {
      const check = () => (err.includes('following') ? r() : setTimeout(check, 20))
      check()
    })
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)))
    child.kill('SIGINT')
    expect(await exited).toBe(0)
  })
})

describe('state that is not what the reader expects', () => {
  const prefix = uniquePrefix('odd')
  const keys = new KeyLayout(prefix, 'standalone')
  let raw: Redis
  let c: RedisCoordinator
  const base = () => ['--url', redisUrl(), '--prefix', prefix]
  beforeAll(async () => {
    raw = new Redis(redisUrl())
    c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-a', leaseMs: 30_000 })
    await c.start()
    await c.acquireTurn('chat:fine')
    await c.tryLead('scheduler:report')
    await c.renewNow()
  })
  afterAll(async () => {
    await c?.stop()
    await raw?.quit()
  })

  it('version prints the client, server and key schema versions', async () => {
    const [text, json] = await Promise.all([runCli([...base(), 'version']), runCli([...base(), 'version', '-o', 'json'])])
    expect(text.code, text.stderr).toBe(0)
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    const redisVersion = /^redis_version:(.*)$/m.exec(await raw.info('server'))![1]!.trim()
    expect(text.stdout.split('\n').filter(Boolean)).toEqual([
      `client      botmesh-coord ${pkg.version} (key schema 1, Node ${process.version})`,
      `server      Redis ${redisVersion} at ${redisUrl()} (standalone, 1 master)`,
      `key schema  1 under prefix ${prefix}`,
    ])
    expect(parseJson<J>(json)).toMatchObject({
      kind: 'version',
      client: { version: pkg.version, keySchema: 1 },
      server: { redisVersions: [redisVersion], layout: 'standalone', prefix, keySchema: 1 },
    })
  })

  it('every lead name is reachable in provider status', async () => {
    const r = await runCli([...base(), 'provider', 'status', 'scheduler:report', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(parseJson<J>(r).provider).toMatchObject({ key: 'scheduler:report', replicaId: 'pod-a' })
  })

  it('an event whose e is not a JSON object is one corrupt entry', async () => {
    await raw.xadd(keys.events, '*', 'e', JSON.stringify('just a string'))
    const [t, j] = await Promise.all([runCli([...base(), 'events']), runCli([...base(), 'events', '--json'])])
    expect(t.stdout).toMatch(/corrupt\s+-\s+corrupt entry: "just a string"/)
    expect(t.stdout).not.toContain('0=j')
    expect(parseJson<J>(j).events.at(-1)).toMatchObject({ type: 'corrupt' })
  })

  it('a malformed ticket field: leases ls reports the chat as corrupt, like chat ls', async () => {
    const state = keys.chat('chat:badticket').state
    await raw.hset(state, { f: '1', h: 'pod-a', hi: c.incarnation, ht: '1', exp: String(Date.now() + 60_000), 't:2': 'garbage' })
    // Queued, as the layout has it: a listing reads the fields of the tickets at the head of the queue.
    await raw.zadd(keys.chat('chat:badticket').queue, 2, '2')
    try {
      const [leases, chats] = await Promise.all([
        runCli([...base(), 'leases', 'ls', '--json']),
        runCli([...base(), 'chat', 'ls', '--json']),
      ])
      for (const r of [leases, chats]) {
        expect(r.code).toBe(0)
        expect(parseJson<J>(r).corrupt).toContainEqual({ rawKey: state, error: expect.stringContaining('ticket field t:2 is malformed') })
      }
      expect(parseJson<J>(leases).leases.map((l: J) => l.key)).toContain('chat:fine')
      expect(parseJson<J>(leases).leases.map((l: J) => l.key)).not.toContain('chat:badticket')
    } finally {
      await raw.del(state, keys.chat('chat:badticket').queue)
    }
  })

  it('a wrong-type replica index is one corrupt key; the rest is listed', async () => {
    await raw.del(keys.replicaIndex)
    await raw.set(keys.replicaIndex, 'oops')
    try {
      const r = await runCli([...base(), 'leases', 'ls'])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain('chat:fine')
      expect(r.stderr).toContain(`corrupt: ${keys.replicaIndex}: wrong Redis type`)
    } finally {
      await raw.del(keys.replicaIndex)
      await c.renewNow() // the next beat writes the index again
    }
  })

  it('a schema newer than this release is refused by every read (exit 8); a corrupt one is one failing doctor check', async () => {
    const schema = keys.schema
    const saved = await raw.hgetall(schema)
    try {
      await raw.hset(schema, 'version', '99')
      const reads = await Promise.all([
        runCli([...base(), 'leases', 'ls']),
        runCli([...base(), 'chat', 'inspect', 'chat:fine']),
        runCli([...base(), 'events']),
      ])
      for (const r of reads) {
        expect(r.code).toBe(8)
        oneLine(r)
        expect(r.stderr).toMatch(/schema 99 is newer than this release understands/)
      }
      const newer = await runCli([...base(), 'version'])
      expect(newer.code).toBe(8)
      expect(newer.stdout).toMatch(/^key schema {2}99 under prefix \S+: newer than this release/m)
      await raw.hset(schema, 'version', 'x')
      const [version, versionJson] = await Promise.all([runCli([...base(), 'version']), runCli([...base(), 'version', '-o', 'json'])])
      expect(version.code).toBe(8)
      expect(version.stdout).toMatch(/^key schema {2}unreadable under prefix \S+: .*field version is not a whole number/m)
      expect(parseJson<J>(versionJson).server).toMatchObject({
        keySchema: null,
        keySchemaError: expect.stringContaining('not a whole number'),
      })
      const doc = await runCli([...base(), 'doctor', '--json'])
      expect(parseJson<J>(doc).checks.find((x: J) => x.id === 'schema')).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('version is not a whole number'),
      })
      expect(JSON.stringify(parseJson<J>(doc))).not.toContain('NaN')
      await raw.del(schema)
      await raw.set(schema, 'not a hash')
      const [wrongType, versionWrongType] = await Promise.all([runCli([...base(), 'doctor', '--json']), runCli([...base(), 'version'])])
      const checks = parseJson<J>(wrongType).checks as J[]
      expect(checks.find((x) => x.id === 'schema')).toMatchObject({ status: 'fail', detail: expect.stringContaining('wrong Redis type') })
      expect(checks.length).toBeGreaterThan(5)
      expect(versionWrongType.code).toBe(8)
      expect(versionWrongType.stdout).toMatch(/^key schema {2}unreadable under prefix \S+: .*wrong Redis type/m)
    } finally {
      await raw.del(schema)
      if (Object.keys(saved).length) await raw.hset(schema, saved)
    }
  })
})
