/**
 * Help and completion: one line pointing to `botmesh-coord options` in every leaf's help, `help <group> <leaf>`, examples in
 * every group, unknown commands as one line with a suggestion, and completion scripts that complete
 * option values and names read from Redis (replica ids, leads, locks, chat keys).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RedisCoordinator, RedisStore } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { BIN, runCli } from '../helpers/cli.js'

describe('help', () => {
  it('leaf help points to the global options in one line; help <group> <leaf> reaches the leaf', async () => {
    const [leaf, viaHelp, viaGroupHelp] = await Promise.all([
      runCli(['chat', 'inspect', '--help']),
      runCli(['help', 'chat', 'inspect']),
      runCli(['chat', 'help', 'inspect']),
    ])
    for (const r of [leaf, viaHelp, viaGroupHelp]) {
      expect(r.code).toBe(0)
      expect(r.stdout).toMatch(/^Usage: botmesh-coord chat inspect/)
      expect(r.stdout).not.toMatch(/Global Options:|--url <url>|--sentinel-password-file/)
      expect(r.stdout).toContain('\nGlobal options (--url, --context, --prefix, -o, --read-only, …): botmesh-coord options\n')
      expect(r.stdout.split('\n').length).toBeLessThan(40)
      expect(r.stdout).toMatch(/Examples?:\n\s+botmesh-coord/)
    }
  })

  it('botmesh-coord options lists the global options, once', async () => {
    const r = await runCli(['options'])
    expect(r.code).toBe(0)
    for (const o of [
      '--url <url>',
      '--context <name>',
      '--prefix <prefix>',
      '-o, --output <format>',
      '--read-only',
      '--timeout <duration>',
    ])
      expect(r.stdout).toContain(o)
    expect(r.stdout).toContain('env: REDIS_URL')
  })

  it('every group and every leaf has examples', async () => {
    const tree = JSON.parse(
      execFileSync(process.execPath, ['-e', TREE], { env: { ...process.env, BOTMESH_COORD_NO_MAIN: '1' } }).toString(),
    ) as string[][]
    // Four at a time: all at once (about 60 processes on 2 cores) ran into runCli's timeout under load.
    const rs: Awaited<ReturnType<typeof runCli>>[] = []
    for (let i = 0; i < tree.length; i += 4)
      rs.push(...(await Promise.all(tree.slice(i, i + 4).map((path) => runCli([...path, '--help'])))))
    rs.forEach((r, i) => {
      expect(r.code, tree[i]!.join(' ')).toBe(0)
      expect(r.stdout, tree[i]!.join(' ')).toMatch(/Examples?:\n\s+(botmesh-coord|source)/)
    })
  })

  it('an unknown command is one line with the suggestion (exit 2)', async () => {
    const rs = await Promise.all([runCli(['chta', 'ls']), runCli(['leases', 'lss']), runCli(['help', 'chat', 'inspekt'])])
    for (const r of rs) {
      expect(r.code).toBe(2)
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(r.stdout).toBe('')
    }
    expect(rs[0]!.stderr).toMatch(/unknown command 'chta' \(Did you mean chat\?\)/)
    expect(rs[1]!.stderr).toMatch(/unknown command 'lss' \(Did you mean ls\?\)/)
  })

  it('with -o json, usage errors are JSON on stderr too', async () => {
    const r = await runCli(['-o', 'json', 'leases', 'lss'])
    expect(r.code).toBe(2)
    expect(JSON.parse(r.stderr)).toMatchObject({
      kind: 'error',
      error: { code: 2, message: expect.stringContaining("unknown command 'lss'") },
    })
  })
})

/** The command paths of the built CLI (groups and leaves, not the hidden ones). */
const TREE = `
import(${JSON.stringify(new URL('../../dist/commands/cli.js', import.meta.url).href)}).then(({ buildProgram }) => {
  const out = []
  const walk = (c, path) => { for (const s of c.commands) { if (s._hidden || s.name() === 'help') continue; out.push([...path, s.name()]); walk(s, [...path, s.name()]) } }
  walk(buildProgram(), [])
  console.log(JSON.stringify(out))
})`

describe('completion', () => {
  const prefix = uniquePrefix('compl')
  let dir: string
  let a: RedisCoordinator
  let store: RedisStore
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'botmesh-compl-'))
    // `botmesh-coord` on PATH, as an installed CLI would be.
    writeFileSync(join(dir, 'botmesh-coord'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`)
    chmodSync(join(dir, 'botmesh-coord'), 0o755)
    a = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-a', leaseMs: 30_000 })
    store = new RedisStore({ url: redisUrl(), prefix })
    await a.start()
    await a.acquireTurn('chat:42')
    await a.tryLead('provider:whatsapp')
    await store.acquireLockFenced('invoice:run', 60_000)
    await a.renewNow()
  })
  afterAll(async () => {
    await a?.stop()
    await store?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  /** What bash completes for a command line whose last word is being typed. */
  const complete = (line: string[]): string[] => {
    const script = `source <(botmesh-coord completion bash)
COMP_WORDS=(${line.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${line.length - 1}; COMPREPLY=()
_botmesh_coord; printf '%s\\n' "\${COMPREPLY[@]}"`
    const r = spawnSync('bash', ['-c', script], {
      env: { ...process.env, PATH: `${dir}:${process.env.PATH}`, REDIS_URL: undefined },
      encoding: 'utf8',
    })
    expect(r.status, r.stderr).toBe(0)
    return r.stdout.split('\n').filter(Boolean)
  }
  const target = () => ['botmesh-coord', '--url', redisUrl(), '--prefix', prefix]

  it('completes names read from Redis: chat keys, leads, locks, replica ids', () => {
    expect(complete([...target(), 'chat', 'inspect', ''])).toContain('chat:42')
    expect(complete([...target(), 'provider', 'yield', ''])).toContain('provider:whatsapp')
    expect(complete([...target(), 'lock', 'release', ''])).toContain('invoice:run')
    expect(complete([...target(), 'replicas', 'evict', ''])).toEqual(['pod-a'])
    expect(complete([...target(), 'leases', 'ls', '--replica', ''])).toEqual(['pod-a'])
  })

  it("completes each command's own option values and the global ones", () => {
    expect(complete(['botmesh-coord', 'leases', 'ls', '--sort', ''])).toEqual([
      'kind',
      'key',
      'replica',
      'fence',
      'expires',
      'renewal',
      'held',
    ])
    expect(complete(['botmesh-coord', 'chat', 'ls', '--sort', ''])).toContain('wait')
    expect(complete(['botmesh-coord', '-o', ''])).toEqual(['table', 'wide', 'json', 'jsonl', 'name'])
    expect(complete(['botmesh-coord', 'events', '--type', 'lease'])).toEqual(['lease-lost'])
    expect(complete(['botmesh-coord', '--layout', 'c'])).toEqual(['cluster'])
    expect(complete(['botmesh-coord', 'chat', ''])).toEqual(expect.arrayContaining(['ls', 'inspect', 'release', 'skip', '--url']))
  })

  // zsh and fish themselves (.ci/run installs them): what the shell offers, not only what the script says.
  const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0
  const shellEnv = () => ({ ...process.env, PATH: `${dir}:${process.env.PATH}`, REDIS_URL: undefined })

  it.skipIf(!has('zsh'))('zsh, installed on $fpath as documented, completes at the first Tab: values, names read from Redis', async () => {
    const fpath = join(dir, 'zsh-functions')
    mkdirSync(fpath, { recursive: true })
    writeFileSync(join(fpath, '_botmesh-coord'), (await runCli(['completion', 'zsh'])).stdout)
    const harness = fileURLToPath(new URL('../fixtures/zsh-complete.zsh', import.meta.url))
    const complete = (line: string): string[] => {
      const r = spawnSync('zsh', ['-f', harness, dir, fpath, line], { env: shellEnv(), encoding: 'utf8', timeout: 20_000 })
      expect(r.status, `${line}\n${r.stderr}`).toBe(0)
      return r.stdout.split('\n').filter(Boolean)
    }
    const t = `botmesh-coord --url ${redisUrl()} --prefix ${prefix}`
    expect(complete(`${t} chat inspect `)).toEqual(['chat:42'])
    expect(complete(`${t} leases ls --replica `)).toEqual(['pod-a'])
    expect(complete(`${t} provider yield `)).toContain('provider:whatsapp')
    expect(complete('botmesh-coord leases ls --sort ').sort()).toEqual(['expires', 'fence', 'held', 'key', 'kind', 'renewal', 'replica'])
    expect(complete('botmesh-coord -o ').sort()).toEqual(['json', 'jsonl', 'name', 'table', 'wide'])
  })

  it.skipIf(!has('fish'))('fish completes values and names read from Redis; a typed subcommand is not offered again', () => {
    const complete = (line: string): string[] => {
      const r = spawnSync('fish', ['--no-config', '-c', `botmesh-coord completion fish | source; complete -C '${line}'`], {
        env: shellEnv(),
        encoding: 'utf8',
        timeout: 20_000,
      })
      expect(r.status, r.stderr).toBe(0)
      return r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[0]!)
    }
    const t = `botmesh-coord --url ${redisUrl()} --prefix ${prefix}`
    expect(complete(`${t} chat inspect `)).toEqual(['chat:42'])
    expect(complete(`${t} locks release `)).toEqual(['invoice:run'])
    expect(complete(`${t} leases ls --replica `)).toEqual(['pod-a'])
    expect(complete('botmesh-coord leases ls --sort ').sort()).toEqual(['expires', 'fence', 'held', 'key', 'kind', 'renewal', 'replica'])
    expect(complete('botmesh-coord chat ')).toEqual(expect.arrayContaining(['inspect', 'ls', 'release', 'skip']))
  })

  it('fish and zsh scripts carry the same choices and dynamic names', async () => {
    const [fish, zsh] = await Promise.all([runCli(['completion', 'fish']), runCli(['completion', 'zsh'])])
    expect(fish.stdout).toContain('-l sort -xa "kind key replica fence expires renewal held"')
    expect(fish.stdout).toContain('__complete chat')
    expect(zsh.stdout).toMatch(/^#compdef botmesh-coord/)
    expect(zsh.stdout).toContain('_botmesh_coord_dynamic')
  })
})
