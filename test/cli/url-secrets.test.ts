/**
 * A password in the URL's query (`?password=…`, as ioredis reads it) is a password like `user:pass@`:
 * never printed (errors, version, config view, get-contexts), never written to a snapshot; and a
 * snapshot's or recording's header that carries one (written by another tool, or edited) is masked
 * when it is replayed.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { maskUrl, RedisCoordinator } from '../../src/index.js'
import { freePort, redisUrl, uniquePrefix } from '../helpers/redis.js'
import { runCli, type CliResult } from '../helpers/cli.js'

const SECRET = 'Qu3ry-s3cret'
const dir = mkdtempSync(join(tmpdir(), 'botmesh-url-secrets-'))
const all = (r: CliResult) => r.stdout + r.stderr

describe('a password in the URL query', () => {
  const prefix = uniquePrefix('qpw')
  const url = `${redisUrl()}/0?password=${SECRET}&db=0`
  let c: RedisCoordinator
  beforeAll(async () => {
    c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId: 'pod-a', leaseMs: 30_000 })
    await c.start()
    await c.acquireTurn('chat:1')
  })
  afterAll(async () => {
    await c?.stop()
  })

  it('maskUrl masks it, with or without a user:pass@', () => {
    expect(maskUrl(`redis://h:6379/0?password=${SECRET}`)).toBe('redis://h:6379/0?password=***')
    expect(maskUrl(`redis://u:p@h:6379?db=1&sentinelPassword=${SECRET}`)).toBe('redis://u:***@h:6379?db=1&sentinelPassword=***')
  })

  it('errors and version do not print it', async () => {
    const port = await freePort()
    const [down, version] = await Promise.all([
      runCli(['--url', `redis://127.0.0.1:${port}/?password=${SECRET}`, 'leases', 'ls']),
      runCli(['--url', url, '--prefix', prefix, 'version']),
    ])
    expect(down.code).toBe(4)
    expect(down.stderr).toContain('password=***')
    expect(version.code, version.stderr).toBe(0)
    for (const r of [down, version]) expect(all(r)).not.toContain(SECRET)
  })

  it('config view and get-contexts do not print it, and set-context refuses it', async () => {
    const config = join(dir, 'config.json')
    writeFileSync(config, JSON.stringify({ 'current-context': 'q', contexts: { q: { url, prefix } } }), { mode: 0o600 })
    const env = { BOTMESH_CONFIG: config }
    const [view, list, wide, set] = await Promise.all([
      runCli(['config', 'view'], { env }),
      runCli(['config', 'get-contexts'], { env }),
      runCli(['config', 'get-contexts', '-o', 'wide'], { env }),
      runCli(['--url', url, 'config', 'set-context', 'other'], { env }),
    ])
    for (const r of [view, list, wide]) {
      expect(r.code, r.stderr).toBe(0)
      expect(all(r)).not.toContain(SECRET)
    }
    expect(set.code).toBe(2)
    expect(all(set)).not.toContain(SECRET)
  })

  it('a snapshot does not keep it; a snapshot or recording header that has one is masked on replay', async () => {
    const file = join(dir, 'snap.json')
    const r = await runCli(['--url', url, '--prefix', prefix, 'snapshot', '-o', file])
    expect(r.code, r.stderr).toBe(0)
    expect(all(r)).not.toContain(SECRET)
    expect(readFileSync(file, 'utf8')).not.toContain(SECRET)
    // Another tool's snapshot, with the password in its header.
    const forged = join(dir, 'forged.json')
    const snap = JSON.parse(readFileSync(file, 'utf8')) as { target: { url: string } }
    snap.target.url = `redis://ops:${SECRET}@10.0.0.1:6379/?password=${SECRET}`
    writeFileSync(forged, JSON.stringify(snap))
    const replayed = await runCli(['--from', forged, 'chat', 'ls'])
    expect(replayed.code, replayed.stderr).toBe(0)
    expect(replayed.stderr).toContain('redis://ops:***@10.0.0.1:6379/?password=***')
    // A recording whose header carries it.
    const recording = join(dir, 'rec.jsonl')
    const header = {
      format: 'botmesh-coord-recording',
      formatVersion: 1,
      tool: 'other',
      target: { url: snap.target.url, prefix, layout: 'standalone' },
      includeState: false,
    }
    const refresh = { t: (snap as unknown as { records: { nowMs: number } }).records.nowMs, seq: 1, records: (snap as any).records } // eslint-disable-line @typescript-eslint/no-explicit-any
    writeFileSync(recording, `${JSON.stringify(header)}\n${JSON.stringify(refresh)}\n`)
    const played = await runCli(['watch', '--replay', recording, '--jsonl'])
    expect(played.code, played.stderr).toBe(0)
    expect(all(played)).toContain('***')
    expect(all(played)).not.toContain(SECRET)
  })
})
