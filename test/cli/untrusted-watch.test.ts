/**
 * The real `botmesh-coord watch` in a terminal (tmux) over state full of hostile strings (the
 * fixture of the CLI's untrusted-text test): every byte the dashboard writes is recorded
 * (`pipe-pane`), and none of the strings' escape sequences, controls, bidi or invisible characters
 * is among them — the screen shows them escaped, the window title stays, the chat detail and the
 * release confirmation show the key as the CLI takes it. Needs `npx tsup` first.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { BIN } from '../helpers/cli.js'
import { until } from '../helpers/wait.js'
import { SEED, hostileState } from './untrusted-fixture.js'

const hasTmux = spawnSync('tmux', ['-V']).status === 0
const sessions: string[] = []
const dir = mkdtempSync(join(tmpdir(), 'untrusted-watch-'))

const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' })
const screen = (s: string) => tmux('capture-pane', '-p', '-t', s)

function waitForScreen(s: string, ok: (text: string) => boolean, what: string): Promise<string> {
  return until(
    () => {
      const text = screen(s)
      if (!ok(text)) throw new Error(`last screen:\n${text}`)
      return text
    },
    30_000,
    `the dashboard to show ${what}`,
    150,
  )
}

afterAll(() => {
  for (const s of sessions) spawnSync('tmux', ['kill-session', '-t', s])
  rmSync(dir, { recursive: true, force: true })
})

/** Raw sequences of the hostile strings that ink's drawing never writes. */
// eslint-disable-next-line no-control-regex
const RAW = /\u001b\]|\u0007|\u001b\[5m|\u001b\[31m|\u009b|\u0085|[\u0000-\u0006\u0008\u000b\u000c\u000e-\u001a\u001c-\u001f\u007f]/
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\u00a0\u{e0000}-\u{e007f}]/u

describe.skipIf(!hasTmux)(`watch over untrusted text (seed ${SEED})`, () => {
  it('draws nothing raw: hostile keys, ids and names are shown escaped, in the panels, the detail and a confirmation', async () => {
    const url = redisUrl()
    const prefix = uniquePrefix('untrusted-w')
    const state = await hostileState(url, prefix)
    try {
      const name = `untrusted-${uniquePrefix('w')}`
      sessions.push(name)
      tmux('new-session', '-d', '-s', name, '-x', '160', '-y', '45', 'sleep 600')
      tmux('set-option', '-t', name, 'remain-on-exit', 'on')
      const raw = join(dir, 'pane.raw')
      tmux('pipe-pane', '-o', '-t', name, `cat >> ${raw}`)
      const title = tmux('display', '-p', '-t', name, '#{pane_title}')
      tmux(
        'respawn-pane',
        '-k',
        '-t',
        name,
        `env -u REDIS_URL NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} --url ${url} --prefix ${prefix} watch --interval 300ms`,
      )
      const shown = await waitForScreen(name, (t) => t.includes('chat:\\x1b]0;pwned\\x07'), 'the OSC key escaped')
      expect(shown).toContain('pod\\x1b[31m-red\\u202e')
      // The chat detail of the selected chat, then the release confirmation, then cancel.
      tmux('send-keys', '-t', name, 'Enter')
      await waitForScreen(name, (t) => /^\s*holder {5}pod\\x1b\[31m-red\\u202e/m.test(t) && /^\s*queue {6}/m.test(t), 'the chat detail')
      tmux('send-keys', '-t', name, 'r')
      const ask = await waitForScreen(name, (t) => t.includes('confirm? [y/N]'), 'the release confirmation')
      expect(ask).toMatch(/chat release \S*\\/)
      // One key at a time, each once the screen answered the last: keys read together are one input
      // (an ESC and a q read as Alt-q), and the dashboard would never see its q.
      tmux('send-keys', '-t', name, 'n')
      await waitForScreen(name, (t) => !t.includes('confirm? [y/N]'), 'the confirmation answered')
      tmux('send-keys', '-t', name, 'q')
      await until(() => tmux('display', '-p', '-t', name, '#{pane_dead}').trim() === '1', 20_000, 'the dashboard to quit')
      const bytes = readFileSync(raw, 'utf8')
      expect(bytes.length).toBeGreaterThan(1000)
      const bad = RAW.exec(bytes) ?? INVISIBLE.exec(bytes)
      expect(
        bad,
        `raw ${JSON.stringify(bad?.[0])} at ${bad?.index}: ${JSON.stringify(bytes.slice(Math.max(0, (bad?.index ?? 0) - 80), (bad?.index ?? 0) + 80))}`,
      ).toBeNull()
      expect(tmux('display', '-p', '-t', name, '#{pane_title}')).toBe(title)
    } finally {
      await state.stop()
    }
  })
})
