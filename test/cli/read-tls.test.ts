/**
 * The read side over TLS: a redis-server with --tls-port and a certificate made here with openssl,
 * `rediss://` and `--tls-ca`; without the CA the certificate is refused (one line, exit 4).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RedisCoordinator } from '../../src/index.js'
import { startRedis, uniquePrefix, type RedisProc } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { makeCerts } from '../helpers/tls.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

describe('over TLS', () => {
  let dir: string
  let server: RedisProc
  let url: string
  let c: RedisCoordinator
  const prefix = uniquePrefix('tls')

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'botmesh-tls-'))
    makeCerts(dir)
    server = await startRedis({ dir, tls: { certFile: 'server.crt', keyFile: 'server.key', caFile: 'ca.crt' } })
    url = server.url
    c = new RedisCoordinator({ url, tlsCaFile: join(dir, 'ca.crt'), prefix, replicaId: 'pod-tls', leaseMs: 30_000 })
    await c.start()
    await c.acquireTurn('chat:tls')
  })
  afterAll(async () => {
    await c?.stop().catch(() => {})
    await server?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('rediss:// with --tls-ca: listings and inspection work', async () => {
    const base = ['--url', url, '--tls-ca', join(dir, 'ca.crt'), '--prefix', prefix]
    const [leases, table, inspect] = await Promise.all([
      runCli([...base, 'leases', 'ls', '--json']),
      runCli([...base, 'chat', 'ls']),
      runCli([...base, 'chat', 'inspect', 'chat:tls', '--json'], { env: { REDIS_TLS_CA: join(dir, 'ca.crt') } }),
    ])
    expect(leases.code).toBe(0)
    expect(parseJson<J>(leases).leases).toEqual([
      expect.objectContaining({ kind: 'chat', key: 'chat:tls', replicaId: 'pod-tls', incarnation: c.incarnation }),
    ])
    expect(table.stdout).toMatch(/chat:tls\s+pod-tls/)
    expect(parseJson<J>(inspect).chat).toMatchObject({ key: 'chat:tls', replicaId: 'pod-tls' })
  })

  it('without the CA the server certificate is refused: one line, exit 4', async () => {
    const r = await runCli(['--url', url, '--prefix', prefix, 'leases', 'ls'], { env: { REDIS_TLS_CA: undefined } })
    expect(r.code).toBe(4)
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/certificate/i)
  })
})
