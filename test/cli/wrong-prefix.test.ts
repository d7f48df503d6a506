/**
 * A wrong or missing --prefix is not silence: a read listing under a prefix that holds no
 * botmesh-coord keys at all says so on stderr (one line) and names the prefixes that do, with the
 * listing and the exit code as before; a prefix in use but quiet lists nothing without the note.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCoordinator } from '../../src/index.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { startRedis, type RedisProc } from '../helpers/redis.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

describe('a prefix that holds nothing', () => {
  let redis: RedisProc
  let shop: RedisCoordinator
  let quiet: RedisCoordinator
  const cli = (prefix: string, ...args: string[]) => runCli(['--url', redis.url, '--prefix', prefix, ...args])
  beforeAll(async () => {
    redis = await startRedis()
    shop = new RedisCoordinator({ url: redis.url, prefix: 'shop', replicaId: 'pod-a' })
    await shop.start()
    await shop.tryLead('scheduler:report')
    // A prefix in use (its schema record written) where nothing is held now.
    quiet = new RedisCoordinator({ url: redis.url, prefix: 'quiet', replicaId: 'pod-q' })
    await quiet.start()
    await quiet.stop()
  }, 60_000)
  afterAll(async () => {
    await shop?.stop()
    await redis?.stop()
  })

  const listings = [
    ['leases', 'ls'],
    ['chat', 'ls'],
    ['replicas', 'ls'],
    ['provider', 'ls'],
    ['locks', 'ls'],
    ['checkpoints', 'ls'],
    ['handover', 'ls'],
    ['events'],
  ]

  it('every read listing: one line on stderr naming the prefixes with state; exit 0, the listing as before', async () => {
    for (const args of listings) {
      const r = await cli('botmesh', ...args)
      expect(r.code, args.join(' ')).toBe(0)
      const lines = r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('note:'))
      expect(lines, `${args.join(' ')}: ${r.stderr}`).toHaveLength(1)
      expect(lines[0]).toMatch(
        /^note: prefix botmesh holds no botmesh-coord keys at all \(is --prefix right\?\); prefixes with botmesh-coord state here: quiet, shop; pass one with --prefix or BOTMESH_PREFIX$/,
      )
      const j = await cli('botmesh', ...args, '--json')
      expect(j.code).toBe(0)
      parseJson<J>(j)
      expect(j.stderr).toMatch(/prefixes with botmesh-coord state here: quiet, shop/)
    }
  })

  it('a prefix in use lists nothing without the note', async () => {
    const r = await cli('quiet', 'leases', 'ls')
    expect(r.code).toBe(0)
    expect(r.stdout + r.stderr).toMatch(/no leases match under prefix quiet/)
    expect(r.stderr).not.toMatch(/note:/)
    const used = await cli('shop', 'chat', 'ls')
    expect(used.stderr).not.toMatch(/note:/)
  })

  it('chat inspect and doctor name the prefixes too, with their own exit codes', async () => {
    const r = await cli('botmesh', 'chat', 'inspect', 'chat:1')
    expect(r.code).toBe(3)
    expect(r.stderr).toMatch(/no chat "chat:1" under prefix botmesh .*prefixes with botmesh-coord state here: quiet, shop/)
    const d = parseJson<J>(await cli('botmesh', 'doctor', '--json'))
    const schema = d.checks.find((c: J) => c.id === 'schema')
    expect(schema).toMatchObject({ status: 'warn' })
    expect(schema.detail).toMatch(/no botmesh-coord key at all under it\); prefixes with botmesh-coord state here: quiet, shop/)
    expect(schema.fix).toMatch(/--prefix quiet/)
  })
})
