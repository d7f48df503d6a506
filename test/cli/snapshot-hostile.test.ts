/**
 * `--from` files that are not honest snapshots: a gzip bomb stops at the documented size, a JSON
 * nested 100,000 deep and a forged snapshot (valid gzip, the format's tag, wrong shapes) each give one
 * clear line and exit 2 — never exit 70, never gigabytes of memory.
 */
import { mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCoordinator } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { runCli, type CliResult } from '../helpers/cli.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const dir = mkdtempSync(join(tmpdir(), 'botmesh-hostile-snap-'))
const READS = [['chat', 'ls'], ['replicas', 'ls'], ['events'], ['doctor'], ['chat', 'inspect', 'chat:1']]

const oneLine = (r: CliResult, pattern: RegExp) => {
  expect(r.code, r.stderr).toBe(2)
  expect(r.stderr.trim().split('\n')).toHaveLength(1)
  expect(r.stderr).toMatch(pattern)
  expect(r.stderr).not.toContain('a bug')
}

describe('hostile --from files', () => {
  const prefix = uniquePrefix('hsnap')
  const good = join(dir, 'good.json.gz')
  let c: RedisCoordinator
  let snap: J
  beforeAll(async () => {
    c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-a', leaseMs: 30_000 })
    await c.start()
    await c.acquireTurn('chat:1')
    const r = await runCli(['--url', redisUrl(), '--prefix', prefix, 'snapshot', '-o', good])
    expect(r.code, r.stderr).toBe(0)
    snap = JSON.parse(gunzipSync(readFileSync(good)).toString('utf8')) as J
  })
  afterAll(async () => {
    await c?.stop()
  })

  it('a gzip bomb stops where it inflates past what the heap holds, with one line (exit 2)', async () => {
    // 17 gzip members of 16 MiB of spaces each: 272 MiB decompressed from about 270 KiB, read by a
    // CLI given a 200 MB heap (a heap limit of 248 MiB with the young generation: it reads a
    // snapshot of at most as much).
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024, 0x20), { level: 9 })
    const bomb = join(dir, 'bomb.json.gz')
    writeFileSync(bomb, Buffer.concat(Array.from({ length: 17 }, () => member)))
    const started = Date.now()
    const r = await runCli(['--from', bomb, 'chat', 'ls'], { env: { NODE_OPTIONS: '--max-old-space-size=200' } })
    oneLine(
      r,
      /--from: .*bomb\.json\.gz: not read: larger than 248 MiB decompressed \(the most this process's heap holds: NODE_OPTIONS=--max-old-space-size=<MB> raises it\)/,
    )
    expect(Date.now() - started).toBeLessThan(20_000)
  })

  it('a file larger than a snapshot may be is refused before it is read (exit 2)', async () => {
    const big = join(dir, 'big.json')
    writeFileSync(big, '')
    truncateSync(big, 2049 * 1024 * 1024) // sparse: no disk used
    oneLine(await runCli(['--from', big, 'chat', 'ls']), /--from: .*big\.json: not read: larger than \d+ MiB decompressed/)
  })

  it('JSON nested 100,000 deep: one line (exit 2)', async () => {
    const deep = join(dir, 'deep.json.gz')
    const text = JSON.stringify({ ...snap, extra: 0 }).replace('"extra":0', `"extra":${'['.repeat(100_000)}${']'.repeat(100_000)}`)
    writeFileSync(deep, gzipSync(Buffer.from(text)))
    for (const args of READS) oneLine(await runCli(['--from', deep, ...args]), /not a snapshot: the JSON is nested deeper than 64 levels/)
  })

  const forgeries: Array<[string, (s: J) => void, RegExp]> = [
    ['a start time that is text', (s) => (s.capture.startedAtMs = 'x'), /capture\.startedAtMs is not a number of ms/],
    ['a start time past the end of dates', (s) => (s.capture.startedAtMs = 1e300), /capture\.startedAtMs is not a number of ms/],
    ['records.hashes a list', (s) => (s.records.hashes = [1, 2]), /records\.hashes is not an object/],
    ['a hash record that is a number', (s) => (s.records.hashes[Object.keys(s.records.hashes)[0]!] = 5), /is not a record/],
    ['hash fields that are numbers', (s) => (s.records.hashes['x'] = { h: { beat: 5 }, at: 1 }), /\.h is not a hash of text fields/],
    ['a sorted set without ids', (s) => (s.records.zsets = { x: { ids: 5, at: 1 } }), /records\.zsets\["x"\] is not \{ids, at\}/],
    ['a stream of text', (s) => (s.records.streams = { x: { entries: 'x', at: 1 } }), /records\.streams\["x"\] is not/],
    ['nodes that are text', (s) => (s.records.nodes = 'x'), /records\.nodes is not a list/],
  ]
  for (const [what, forge, pattern] of forgeries) {
    it(`a forged snapshot (${what}): one line (exit 2) from every read and snapshot diff`, async () => {
      const s = structuredClone(snap)
      forge(s)
      const file = join(dir, `forged-${what.replace(/\W+/g, '-')}.json.gz`)
      writeFileSync(file, gzipSync(Buffer.from(JSON.stringify(s))))
      const runs = await Promise.all([...READS.map((args) => runCli(['--from', file, ...args])), runCli(['snapshot', 'diff', good, file])])
      for (const r of runs) oneLine(r, new RegExp(`not a snapshot: .*${pattern.source}`))
    })
  }
})
