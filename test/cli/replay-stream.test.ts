/**
 * `watch --replay` streams its file: refreshes are indexed as the file goes by and read one at a
 * time, so a recording far larger than the process's heap plays; a line cut off or corrupt is one
 * reported record and the rest plays. Recordings written by hand, as RecordingWriter writes them.
 */
import { mkdtempSync, closeSync, openSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'

const T0 = 1_796_000_000_000
const header = {
  format: 'botmesh-coord-recording',
  formatVersion: 1,
  tool: 'botmesh-coord test',
  target: { url: 'redis://127.0.0.1:6379', prefix: 'shop', layout: 'standalone' },
  includeState: false,
}
const refresh = (seq: number) => ({
  t: T0 + seq * 1000,
  seq,
  records: { nowMs: T0 + seq * 1000, nodes: [], hashes: {}, zsets: {}, streams: {} },
})
const line = (o: unknown) => `${JSON.stringify(o)}\n`
const dir = mkdtempSync(join(tmpdir(), 'botmesh-replay-'))

/** The refreshes a replay printed (--jsonl), by their Redis time. */
const played = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { redisTimeMs: number }).redisTimeMs)

describe('watch --replay streams the recording', () => {
  it('a corrupt or cut-off line is one reported record; the refreshes after it play', async () => {
    const file = join(dir, 'corrupt.jsonl')
    const fd = openSync(file, 'w')
    writeSync(fd, line(header))
    writeSync(fd, line(refresh(1)))
    writeSync(fd, `${line(refresh(2)).slice(0, 40)}\n`) // a refresh cut off, then written on
    writeSync(fd, 'garbage\n')
    writeSync(fd, line(refresh(4)))
    writeSync(fd, line(refresh(5)))
    writeSync(fd, line(refresh(6)).slice(0, 30)) // the watch killed mid-line
    closeSync(fd)
    const r = await runCli(['watch', '--replay', file, '--jsonl'])
    expect(r.code, r.stderr).toBe(0)
    expect(played(r.stdout)).toEqual([T0 + 1000, T0 + 4000, T0 + 5000])
    const skipped = r.stderr.trim().split('\n')
    expect(skipped).toHaveLength(3)
    expect(skipped.join('\n')).toMatch(/line 3 skipped: corrupt/)
    expect(skipped.join('\n')).toMatch(/line 4 skipped: not a refresh/)
    expect(skipped.join('\n')).toMatch(/line 7 skipped: cut off/)
  })

  it('a 200 MB recording plays in a 64 MB heap: its first refresh, and the rest without the line too large to be one', async () => {
    const file = join(dir, 'large.jsonl')
    const fd = openSync(file, 'w')
    writeSync(fd, line(header))
    writeSync(fd, line(refresh(1)))
    const big = line({ ...refresh(2), pad: '' })
    writeSync(fd, big.slice(0, -3)) // up to the opening quote of pad
    const chunk = Buffer.alloc(1 << 20, 'x')
    for (let i = 0; i < 200; i++) writeSync(fd, chunk)
    writeSync(fd, '"}\n')
    writeSync(fd, line(refresh(3)))
    closeSync(fd)
    const env = { NODE_OPTIONS: '--max-old-space-size=64' }
    const [first, all] = await Promise.all([
      runCli(['watch', '--replay', file, '--jsonl', '--count', '1'], { env, timeoutMs: 60_000 }),
      runCli(['watch', '--replay', file, '--jsonl'], { env, timeoutMs: 60_000 }),
    ])
    expect(first.code, first.stderr.slice(0, 500)).toBe(0)
    expect(played(first.stdout)).toEqual([T0 + 1000])
    expect(all.code, all.stderr.slice(0, 500)).toBe(0)
    expect(played(all.stdout)).toEqual([T0 + 1000, T0 + 3000])
    expect(all.stderr).toMatch(/line 3 skipped: \d+ bytes, more than a refresh holds/)
  }, 90_000)
})
