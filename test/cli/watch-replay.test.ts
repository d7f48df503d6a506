/**
 * `watch --record` keeps each refresh's raw reads while an operator releases a chat; `watch --replay`
 * plays them in a real terminal (tmux) with the dashboard's own screen: pause, step, speed and jump
 * to a time. Needs `npx tsup` first (npm test builds first).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { BIN, runCli } from '../helpers/cli.js'
import { until } from '../helpers/wait.js'
import { liveState } from './read-fixture.js'

const hasTmux = spawnSync('tmux', ['-V']).status === 0
const sessions: string[] = []
const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' })
const screen = (s: string) => tmux('capture-pane', '-p', '-t', s)
const waitForScreen = (s: string, ok: (t: string) => boolean, what: string, timeoutMs = 10_000) =>
  until(
    () => {
      const text = screen(s)
      if (!ok(text)) throw new Error(`last screen:\n${text}`)
      return text
    },
    timeoutMs,
    `the replay to show ${what}`,
    150,
  )

afterAll(() => {
  for (const s of sessions) spawnSync('tmux', ['kill-session', '-t', s])
})

describe.skipIf(!hasTmux)('watch --record and --replay (tmux)', () => {
  it('records a release as it happens and plays it back with pause, step, speed and jump', async () => {
    const live = await liveState(redisUrl(), uniquePrefix('replay'), 'standalone')
    const dir = mkdtempSync(join(tmpdir(), 'botmesh-replay-'))
    const file = join(dir, 'incident.jsonl')
    try {
      // Recording in the background, one refresh every 300 ms, until interrupted.
      const env: Record<string, string> = {}
      for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1' })) if (v !== undefined && k !== 'REDIS_URL') env[k] = v
      const rec = spawn(
        process.execPath,
        [BIN, '--url', redisUrl(), '--prefix', live.prefix, 'watch', '--jsonl', '--interval', '300ms', '--record', file],
        { env, stdio: ['ignore', 'ignore', 'pipe'] },
      )
      const done = new Promise<number | null>((resolve) => rec.on('close', resolve))
      const lines = () => readFileSync(file, 'utf8').split('\n').filter(Boolean)
      await until(() => lines().length >= 3, 10_000, 'two refreshes recorded')
      expect((await runCli(['--url', redisUrl(), '--prefix', live.prefix, 'chat', 'release', 'chat:42', '--yes'])).code).toBe(0)
      const seen = lines().length
      await until(() => lines().length >= seen + 3, 10_000, 'three refreshes recorded after the release')
      rec.kill('SIGINT')
      expect(await done).toBe(0)
      expect(statSync(file).mode & 0o777).toBe(0o600)
      const [header, ...refreshes] = lines().map((l) => JSON.parse(l) as Record<string, any>) // eslint-disable-line @typescript-eslint/no-explicit-any
      expect(header).toMatchObject({ format: 'botmesh-coord-recording', target: { prefix: live.prefix, layout: 'standalone' } })
      const n = refreshes.length
      expect(n).toBeGreaterThanOrEqual(5)
      // A recording is never overwritten.
      const again = await runCli(['--url', redisUrl(), '--prefix', live.prefix, 'watch', '--jsonl', '--count', '1', '--record', file])
      expect(again.code).toBe(2)
      expect(again.stderr).toMatch(/the file exists/)

      // The recorded refreshes as JSON: chat:42 held by pod-a, then by pod-b.
      const j = await runCli(['watch', '--replay', file, '--jsonl'])
      expect(j.code, j.stderr).toBe(0)
      const holders = j.stdout
        .trim()
        .split('\n')
        .map(
          (l) => (JSON.parse(l) as { chats: Array<{ key: string; replicaId: string }> }).chats.find((c) => c.key === 'chat:42')?.replicaId,
        )
      expect(holders[0]).toBe('pod-a')
      expect(holders.at(-1)).toBe('pod-b')

      // On screen: it plays to the end at the recorded pace, then stops.
      const s = `replay-${uniquePrefix('e2e')}`
      sessions.push(s)
      tmux(
        'new-session',
        '-d',
        '-s',
        s,
        '-x',
        '140',
        '-y',
        '40',
        `env -u REDIS_URL NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} watch --replay ${file} --interval 200ms`,
      )
      await waitForScreen(
        s,
        (t) => new RegExp(`REPLAY .*refresh ${n}/${n}\\s+❚❚ ×1`).test(t) && /chat:42\s+pod-b/.test(t),
        'the last refresh, chat:42 held by pod-b',
      )
      // Keys one at a time, each once the screen answered (keys read together are one input).
      tmux('send-keys', '-t', s, ',')
      await waitForScreen(s, (t) => t.includes(`refresh ${n - 1}/${n}`), 'one refresh back')
      // Jump to the time of the first refresh: pod-a held chat:42.
      const first = new Date(refreshes[0]!.t as number).toISOString().slice(11, 23)
      tmux('send-keys', '-t', s, 'g')
      await waitForScreen(s, (t) => t.includes('jump to (HH:MM:SS UTC, Enter)'), 'the jump prompt')
      tmux('send-keys', '-t', s, first)
      await waitForScreen(s, (t) => t.includes(`jump to (HH:MM:SS UTC, Enter): ${first}`), 'the time typed')
      tmux('send-keys', '-t', s, 'Enter')
      await waitForScreen(s, (t) => t.includes(`refresh 1/${n}`) && /chat:42\s+pod-a/.test(t), `a jump to ${first}: chat:42 held by pod-a`)
      tmux('send-keys', '-t', s, '.')
      await waitForScreen(s, (t) => t.includes(`refresh 2/${n}`), 'refresh 2 after a step')
      tmux('send-keys', '-t', s, '+')
      await waitForScreen(s, (t) => /❚❚ ×2/.test(t), 'speed ×2')
      // Play from there at twice the pace: it runs to the end again.
      tmux('send-keys', '-t', s, ' ')
      await waitForScreen(s, (t) => new RegExp(`refresh ${n}/${n}\\s+❚❚ ×2`).test(t), 'played to the end')
      // Interventions cannot change a recording.
      tmux('send-keys', '-t', s, 'q')
    } finally {
      await live.stop()
    }
  }, 90_000)
})
