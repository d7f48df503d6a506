/**
 * The real built `botmesh-coord watch` in a terminal (tmux), against live replicas made by the
 * library: what it shows, a yield pressed on screen, and Redis going away under it.
 * Needs `npx tsup` first (npm test builds first).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { afterAll, describe, expect, it } from 'vitest'
import { redisUrl, startRedis, uniquePrefix } from '../helpers/redis.js'
import { BIN, runCli } from '../helpers/cli.js'
import { until } from '../helpers/wait.js'
import { liveState } from './read-fixture.js'

const hasTmux = spawnSync('tmux', ['-V']).status === 0
const sessions: string[] = []

function tmux(...args: string[]): string {
  return execFileSync('tmux', args, { encoding: 'utf8' })
}

function startWatch(url: string, prefix: string, size = { x: 120, y: 40 }): string {
  const name = `watch-${uniquePrefix('e2e')}`
  sessions.push(name)
  const cmd = `env -u REDIS_URL NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} --url ${url} --prefix ${prefix} watch --interval 300ms`
  tmux('new-session', '-d', '-s', name, '-x', String(size.x), '-y', String(size.y), cmd)
  return name
}

const screen = (s: string) => tmux('capture-pane', '-p', '-t', s)

/** The screen once it shows `what` (a capture is a subprocess: look every 150 ms). */
function waitForScreen(s: string, ok: (text: string) => boolean, what: string, timeoutMs = 10_000): Promise<string> {
  return until(
    () => {
      const text = screen(s)
      if (!ok(text)) throw new Error(`last screen:\n${text}`)
      return text
    },
    timeoutMs,
    `the dashboard to show ${what}`,
    150,
  )
}

afterAll(() => {
  for (const s of sessions) spawnSync('tmux', ['kill-session', '-t', s])
})

describe.skipIf(!hasTmux)('botmesh-coord watch in a terminal (tmux)', () => {
  it('shows live replicas, the held chat and the provider leader; y + confirmation hands the lead over', async () => {
    // The read tests' live state: pod-a holds chat:42 (pod-b waiting) and leads provider:whatsapp (pod-b standing).
    const live = await liveState(redisUrl(), uniquePrefix('watch'), 'standalone')
    try {
      const fenceBefore = live.ea.fence!
      const s = startWatch(redisUrl(), live.prefix)
      const text = await waitForScreen(
        s,
        (t) => /pod-a/.test(t) && /pod-b/.test(t) && /chat:42\s+pod-a\s+\d+\s+1\b/.test(t) && /provider:whatsapp\s+pod-a\s+\d+/.test(t),
        'the replicas, chat:42 held by pod-a with one waiting, and pod-a leading provider:whatsapp',
      )
      expect(text).toContain(`prefix ${live.prefix}`)
      expect(text).toMatch(new RegExp(`provider:whatsapp\\s+pod-a\\s+${fenceBefore}`))

      // Two leads are shown (provider:whatsapp, scheduler:report): focus the PROVIDER panel (its first row is selected).
      tmux('send-keys', '-t', s, 'BTab')
      await waitForScreen(s, (t) => /▸ PROVIDER/.test(t), 'the PROVIDER panel focused')
      tmux('send-keys', '-t', s, 'y')
      const ask = await waitForScreen(s, (t) => t.includes('confirm? [y/N]'), 'the confirmation')
      expect(ask).toContain(`yield provider:whatsapp: leader pod-a`)
      expect(ask).toContain(`provider yield provider:whatsapp --if-fence ${fenceBefore}`)
      tmux('send-keys', '-t', s, 'y')
      const after = await waitForScreen(
        s,
        (t) => /provider:whatsapp\s+pod-b\s+\d+/.test(t),
        'pod-b leading provider:whatsapp after the yield',
      )
      const fenceAfter = Number(/provider:whatsapp\s+pod-b\s+(\d+)/.exec(after)![1])
      expect(fenceAfter).toBeGreaterThan(fenceBefore)
      expect(live.eb.isLeader).toBe(true)
      await waitForScreen(
        s,
        (t) => /"provider yield provider:whatsapp --if-fence \d+" by \S+: requested/.test(t),
        'the intervention in the events',
      )

      tmux('send-keys', '-t', s, 'q')
      await waitForScreen(s, (t) => !t.includes('PROVIDER'), 'the terminal restored after q').catch(() => undefined)
    } finally {
      await live.stop()
    }
  })

  it('says so when Redis goes away, keeps retrying, and comes back when it returns on the same port', async () => {
    const redis = await startRedis()
    const prefix = uniquePrefix('watch')
    const s = startWatch(redis.url, prefix, { x: 80, y: 24 })
    let again: Awaited<ReturnType<typeof startRedis>> | null = null
    try {
      await waitForScreen(s, (t) => t.includes('● connected'), 'connected')
      await redis.stop()
      await waitForScreen(s, (t) => t.includes('REDIS UNREACHABLE'), 'the unreachable banner')
      again = await startRedis({ port: redis.port })
      await waitForScreen(s, (t) => t.includes('● connected') && !t.includes('UNREACHABLE'), 'reconnected', 15_000)
    } finally {
      await again?.stop()
      await redis.stop()
    }
  })
})

describe('botmesh-coord watch without a terminal', () => {
  it('says to use --json or watch --jsonl (one line, exit 2)', async () => {
    const r = await runCli(['--url', redisUrl(), 'watch'])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/watch needs a terminal: use --json .*watch --jsonl/)
  })

  it('--jsonl writes one JSON snapshot per refresh, --count stops it', async () => {
    const prefix = uniquePrefix('watch')
    const r = await runCli(['--url', redisUrl(), '--prefix', prefix, 'watch', '--jsonl', '--count', '2', '--interval', '200ms'])
    expect(r.code).toBe(0)
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines).toHaveLength(2)
    expect(lines[1]).toMatchObject({ kind: 'dashboard', seq: 2, prefix, layout: 'standalone', replicas: [], chats: [] })
    expect(typeof lines[0]!.commands).toBe('number')
    expect(typeof lines[0]!.redisTimeMs).toBe('number')
  })
})
