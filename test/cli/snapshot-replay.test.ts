/**
 * Postmortems: `snapshot -o` captures the live state (real replicas, a stuck chat) and `--from` answers
 * the read commands from the file the way the live commands answered at capture time — the built
 * binary as a subprocess, on standalone Redis and the 3-master Cluster. Times are compared as
 * "a duration" (the live command ran a moment before the capture); everything else must be equal.
 */
import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clusterUrl, redisUrl, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { liveState, type LiveState } from './read-fixture.js'
import { timeless } from '../helpers/timeless.js'
import type { Layout } from '../../src/index.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const dir = mkdtempSync(join(tmpdir(), 'botmesh-snap-'))

for (const layout of ['standalone', 'cluster'] as Layout[]) {
  describe(`snapshot and --from on ${layout}`, () => {
    let s: LiveState
    const url = () => (layout === 'cluster' ? clusterUrl() : redisUrl())
    const cli = (...args: string[]) => runCli(['--url', url(), '--prefix', s.prefix, ...args])
    const file = join(dir, `incident-${layout}.json.gz`)
    /** The read commands compared, as --json. */
    const questions = [
      ['chat', 'inspect', 'chat:7', '--explain'],
      ['chat', 'inspect', 'chat:42', '--explain'],
      ['provider', 'status', 'whatsapp'],
      ['doctor'],
      ['replicas', 'ls'],
      ['leases', 'ls'],
      ['chat', 'ls'],
      ['provider', 'ls'],
      ['checkpoints', 'ls'],
      ['checkpoint', 'inspect', 'chat:9'],
      ['handover', 'ls'],
      ['handover', 'inspect', 'chat:7'],
      ['locks', 'ls'],
      ['events', '-n', '20'],
    ]
    const live: Record<string, J> = {}

    beforeAll(async () => {
      s = await liveState(url(), uniquePrefix(`snap-${layout.slice(0, 2)}`), layout)
      // The live answers, then the capture right after.
      for (const q of questions) {
        const r = await cli(...q, '--json')
        expect(r.code === 0 || (q[0] === 'doctor' && r.code === 1), `${q.join(' ')}: ${r.stderr}`).toBe(true)
        live[q.join(' ')] = parseJson<J>(r)
      }
      const snap = await cli('snapshot', '-o', file)
      expect(snap.stderr).toBe('')
      expect(snap.code).toBe(0)
      expect(snap.stdout).toMatch(new RegExp(`^snapshot of prefix ${s.prefix}: \\d+ keys, \\d+ records, read over .* → ${file}`))
    }, 120_000)
    afterAll(async () => {
      await s?.stop()
    })

    it('writes a private, gzipped file without the password or conversation state', () => {
      expect(statSync(file).mode & 0o777).toBe(0o600)
      const doc = JSON.parse(gunzipSync(readFileSync(file)).toString()) as J
      expect(doc).toMatchObject({ format: 'botmesh-coord-snapshot', formatVersion: 1, target: { prefix: s.prefix, layout } })
      expect(doc.capture.partial).toBeNull()
      expect(doc.capture.finishedAtMs).toBeGreaterThanOrEqual(doc.capture.startedAtMs)
      expect(doc.servers.length).toBe(layout === 'cluster' ? 3 : 1)
      expect(doc.servers[0].runId).toMatch(/^[0-9a-f]{40}$/)
      const text = JSON.stringify(doc)
      // chat:42's checkpoint holds {items:[1,2]} and the saved answer 'Calle 5': left out, their size kept.
      expect(text).not.toContain('Calle 5')
      const cp = Object.entries(doc.records.hashes as Record<string, J>).find(([k]) => k.includes(':cp:') && k.includes('chat:42'))![1]
      expect(cp.h.d).toBeUndefined()
      expect(cp.omitted.d).toBeGreaterThan(10)
      expect(cp.at).toBeGreaterThanOrEqual(doc.capture.startedAtMs)
    })

    it('replays every read command with the answers the live commands gave', async () => {
      for (const q of questions) {
        const r = await runCli(['--from', file, ...q, '--json'])
        expect(r.code === 0 || (q[0] === 'doctor' && r.code === 1), `${q.join(' ')}: ${r.stderr}`).toBe(true)
        expect(r.stderr).toMatch(new RegExp(`^snapshot ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: taken \\d{4}-`))
        const replayed = parseJson<J>(r)
        const expected = structuredClone(live[q.join(' ')]!)
        if (replayed.leftOutOfSnapshot?.includes('data')) {
          delete replayed.leftOutOfSnapshot
          replayed.handover.data = expected.handover.data
        }
        if (q[0] === 'checkpoint') {
          // Taken without --include-state: the state and the saved answer are not in the file, and it says so.
          expect(replayed.leftOutOfSnapshot).toEqual(['state', 'answer'])
          expect(replayed.checkpoint.state).toBeNull()
          delete replayed.leftOutOfSnapshot
          replayed.checkpoint.state = expected.checkpoint.state
        }
        expect(timeless(replayed), q.join(' ')).toEqual(timeless(expected))
      }
      // The verdicts themselves, not only equal: chat:7 is stuck behind a stale incarnation.
      expect(live['chat inspect chat:7 --explain']!.explain.verdict).toBe('stuck')
    }, 90_000) // 14 CLI processes one after another: 6 s alone, past 30 s beside the other test files on 2 busy cores

    it('keeps conversation state only with --include-state', async () => {
      const withState = join(dir, `with-state-${layout}.json`)
      const snap = await cli('snapshot', '-o', withState, '--include-state', '--json')
      expect(snap.code).toBe(0)
      expect(parseJson<J>(snap)).toMatchObject({ kind: 'snapshot', includeState: true, partial: null })
      expect(readFileSync(withState, 'utf8')).toContain('Calle 5')
      const [a, b] = await Promise.all([
        cli('checkpoint', 'inspect', 'chat:42', '--json'),
        runCli(['--from', withState, 'checkpoint', 'inspect', 'chat:42', '--json']),
      ])
      const replayed = parseJson<J>(b)
      expect(replayed.leftOutOfSnapshot).toBeUndefined()
      expect(replayed.checkpoint).toMatchObject({ state: { items: [1, 2] }, answer: { text: 'Calle 5' } })
      expect(timeless(replayed)).toEqual(timeless(parseJson<J>(a)))
      const t = await runCli(['--from', file, 'checkpoint', 'inspect', 'chat:42'])
      expect(t.stdout).toMatch(/state\s+\(not in the snapshot: it was taken without --include-state\)/)
    })

    it('says a capture cut by --max-keys is partial, in the file and in one line', async () => {
      const part = join(dir, `partial-${layout}.json.gz`)
      const r = await cli('snapshot', '-o', part, '--max-keys', '3')
      expect(r.code).toBe(0)
      expect(r.stderr).toBe('partial snapshot: stopped after --max-keys 3 keys; replayed commands will say so\n')
      const doc = JSON.parse(gunzipSync(readFileSync(part)).toString()) as J
      expect(doc.capture).toMatchObject({ keys: 3, partial: 'stopped after --max-keys 3 keys' })
      const ls = await runCli(['--from', part, 'chat', 'ls'])
      expect(ls.stderr).toMatch(/PARTIAL: stopped after --max-keys 3 keys/)
    })

    it('answers tables too, and refuses what needs a live Redis with one line', async () => {
      const t = await runCli(['--from', file, 'chat', 'inspect', 'chat:7', '--explain'])
      expect(t.code).toBe(0)
      expect(t.stdout).toContain('STUCK')
      const v = await runCli(['--from', file, 'version'])
      expect(v.code, v.stderr).toBe(0)
      expect(v.stdout).toMatch(
        new RegExp(`server +Redis \\d+\\.\\d+\\.\\d+ at .* \\(${layout}, ${layout === 'cluster' ? 3 : 1} masters?\\)`),
      )
      const w = await runCli(['--from', file, 'chat', 'release', 'chat:7', '--yes'])
      expect(w.code).toBe(7)
      expect(w.stderr).toMatch(
        /^botmesh-coord: --from answers read commands from a snapshot file; chat release changes state: it needs a live Redis \(drop --from\)\n$/,
      )
      const f = await runCli(['--from', file, 'events', '-f'])
      expect(f.code).toBe(2)
      const x = await runCli(['--from', file, 'exporter'])
      expect(x.code).toBe(7)
      const other = await runCli(['--from', file, '--prefix', 'other', 'chat', 'ls'])
      expect(other.code).toBe(2)
      expect(other.stderr).toContain(`the snapshot holds prefix ${s.prefix}`)
      const missing = await runCli(['--from', join(dir, 'nope.json.gz'), 'chat', 'ls'])
      expect(missing.code).toBe(2)
      expect(missing.stderr).toMatch(/--from: cannot read .*nope\.json\.gz: no such file/)
    })
  })
}
