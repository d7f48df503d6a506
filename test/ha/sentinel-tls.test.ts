/**
 * Redis Sentinel over TLS, with the sentinels' own password: every server and sentinel speaks TLS
 * only (replication and the sentinels' links too), and the sentinels ask for a password of their
 * own. The library follows the master through a failover on rediss+sentinel://; the CLI reaches it
 * with --sentinel … --tls and --sentinel-password-file, REDIS_SENTINEL_PASSWORD, or a context; a
 * refused sentinel password is one line with the authentication exit code (5), never echoing it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCoordinator } from '../../src/index.js'
import { startSentinels, type SentinelSet } from '../../scripts/redis-procs.mjs'
import { startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { makeCerts } from '../helpers/tls.js'

const SENTINEL_PW = 'sentinel-secret-7'
let dir: string
let ca: string
let set: SentinelSet
const cleanup: Array<() => Promise<unknown>> = []
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'botmesh-sent-tls-'))
  makeCerts(dir)
  ca = join(dir, 'ca.crt')
  set = await startSentinels({
    tls: { certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key'), caFile: ca },
    sentinelPassword: SENTINEL_PW,
  })
  writeFileSync(join(dir, 'sentinel.pw'), `${SENTINEL_PW}\n`)
  writeFileSync(join(dir, 'wrong.pw'), 'not-the-password\n')
}, 60_000)
afterAll(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
  await set?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

const sentinelArgs = () => set.sentinels.flatMap((s) => ['--sentinel', `127.0.0.1:${s.port}`]).concat('--master-name', set.masterName)
type Replicas = { replicas: Array<{ replicaId: string }> }

describe('Redis Sentinel over TLS, the sentinels with a password of their own', () => {
  it('a coordinator on rediss+sentinel:// with sentinelPassword takes turns before and after a SENTINEL FAILOVER', async () => {
    expect(set.url).toMatch(/^rediss\+sentinel:\/\//)
    const prefix = uniquePrefix('senttls')
    const c = await startCoordinator(
      () =>
        new RedisCoordinator({ url: set.url, tlsCaFile: ca, sentinelPassword: SENTINEL_PW, prefix, replicaId: 'pod-tls', leaseMs: 3000 }),
    )
    cleanup.push(() => c.stop())
    const before = await c.acquireTurn('chat:tls')
    await before.release()
    const master = await set.master()
    expect(await set.failover()).not.toBe(master)
    // The client heard of the failover from the sentinels (over TLS) and reached the new master.
    const after = await c.acquireTurn('chat:tls', { waitMs: 20_000 })
    expect(after.fence).toBeGreaterThan(before.fence)
    await after.release()
    expect(c.running).toBe(true)
  })

  it('the CLI: --sentinel … --tls with --sentinel-password-file, the URL with REDIS_SENTINEL_PASSWORD, and a context', async () => {
    const prefix = uniquePrefix('senttlscli')
    const c = await startCoordinator(
      () =>
        new RedisCoordinator({ url: set.url, tlsCaFile: ca, sentinelPassword: SENTINEL_PW, prefix, replicaId: 'pod-cli', leaseMs: 5000 }),
    )
    cleanup.push(() => c.stop())
    const viaOptions = await runCli([
      ...sentinelArgs(),
      '--tls',
      '--tls-ca',
      ca,
      '--sentinel-password-file',
      join(dir, 'sentinel.pw'),
      '--prefix',
      prefix,
      'replicas',
      'ls',
      '--json',
    ])
    expect(viaOptions.code, viaOptions.stderr).toBe(0)
    expect(parseJson<Replicas>(viaOptions).replicas.map((r) => r.replicaId)).toEqual(['pod-cli'])
    const viaUrl = await runCli(['--url', set.url, '--tls-ca', ca, '--prefix', prefix, 'replicas', 'ls', '--json'], {
      env: { REDIS_SENTINEL_PASSWORD: SENTINEL_PW },
    })
    expect(viaUrl.code, viaUrl.stderr).toBe(0)
    expect(parseJson<Replicas>(viaUrl).replicas.map((r) => r.replicaId)).toEqual(['pod-cli'])

    const env = { BOTMESH_CONFIG: join(dir, 'config.json') }
    const made = await runCli(
      [...sentinelArgs(), '--tls', '--tls-ca', ca, '--sentinel-password-file', join(dir, 'sentinel.pw'), '--prefix', prefix].concat(
        'config',
        'set-context',
        'ha-tls',
        '--current',
      ),
      { env },
    )
    expect(made.code, made.stderr).toBe(0)
    const view = parseJson<{ contexts: Array<{ tls: boolean; sentinelPasswordFile: string | null }> }>(
      await runCli(['config', 'get-contexts', '--json'], { env }),
    )
    expect(view.contexts[0]).toMatchObject({ tls: true, sentinelPasswordFile: join(dir, 'sentinel.pw') })
    const viaContext = await runCli(['replicas', 'ls', '--json'], { env })
    expect(viaContext.code, viaContext.stderr).toBe(0)
    expect(parseJson<Replicas>(viaContext).replicas.map((r) => r.replicaId)).toEqual(['pod-cli'])
  })

  it('a sentinel password refused or missing: one line, exit 5, the password never echoed', async () => {
    const wrong = await runCli([
      ...sentinelArgs(),
      '--tls',
      '--tls-ca',
      ca,
      '--sentinel-password-file',
      join(dir, 'wrong.pw'),
      'replicas',
      'ls',
    ])
    const missing = await runCli(['--url', set.url, '--tls-ca', ca, 'replicas', 'ls'], { env: { REDIS_SENTINEL_PASSWORD: undefined } })
    const wrongEnv = await runCli(['--url', set.url, '--tls-ca', ca, 'doctor'], { env: { REDIS_SENTINEL_PASSWORD: 'env-wrong-pw' } })
    for (const r of [wrong, missing, wrongEnv]) {
      expect(r.code, r.stderr).toBe(5)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
      expect(r.stderr).toMatch(/^botmesh-coord: authentication refused by the sentinels at rediss\+sentinel:\/\/.*--sentinel-password-file/)
      expect(r.stdout + r.stderr).not.toMatch(/not-the-password|env-wrong-pw|sentinel-secret/)
    }
  })
})
