/**
 * `botmesh-coord demo --no-tui --json` as a subprocess against the test Redis: replicas serve chats,
 * a killed replica's chats move to the others, the provider lead moves when its leader dies, and
 * Ctrl-C leaves no child process running.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BIN, parseJson, runCli } from '../helpers/cli.js'
import { timeless } from '../helpers/timeless.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

interface Summary {
  kind: 'demo-summary'
  replicas: Array<{ replicaId: string; pid: number | null; state: string; handled: number }>
  provider: { leader: string | null; fence: number | null }
  messages: { handled: number }
  servedBy: Record<string, string>
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The demo as a running subprocess: its JSON lines as they come, and a way to wait for one. */
function startDemo(args: string[]) {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1' })) if (v !== undefined && k !== 'REDIS_URL') env[k] = v
  const child = spawn(process.execPath, [BIN, 'demo', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  }) as unknown as ChildProcessWithoutNullStreams
  const lines: Array<Record<string, unknown>> = []
  let stdout = ''
  let stderr = ''
  let buf = ''
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString()
    buf += d.toString()
    let nl: number
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>)
      } catch {
        // not ours to judge here: the assertions below show stdout on failure
      }
    }
  })
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))

  /** What `pick` finds in the demo's output, once it finds it (a failure shows the output). */
  async function waitFor<T>(what: string, pick: () => T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
    try {
      return (await until(pick, timeoutMs, what, 100)) as T
    } catch (err) {
      throw new Error(`${(err as Error).message}\nstdout:\n${stdout.slice(-3000)}\nstderr:\n${stderr.slice(-2000)}`)
    }
  }
  const summaries = () => lines.filter((l) => l.kind === 'demo-summary') as unknown as Summary[]
  const latest = () => summaries().at(-1)
  return { child, lines, waitFor, latest, output: () => ({ stdout, stderr }) }
}

// The demo writes a context of its own (demo, demo-<prefix>): into a config file of these tests, not the user's.
process.env.BOTMESH_CONFIG = join(mkdtempSync(join(tmpdir(), 'botmesh-demo-config-')), 'config.json')
delete process.env.BOTMESH_CONTEXT

/** A command line the tool printed, as its words (the test pastes it: no shell, so no quotes in it). */
function pasted(line: string): string[] {
  const words = line.trim().split(/\s+/)
  expect(words[0], line).toBe('botmesh-coord')
  return words.slice(1)
}

const started: number[] = []
afterAll(() => {
  // A failed test must not leave its replicas behind either.
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone
    }
  }
})

describe('demo', () => {
  it('serves chats, survives a dead replica and a dead leader, and leaves nothing running', async () => {
    const prefix = uniquePrefix('demo')
    const demo = startDemo([
      '--no-tui',
      '--json',
      '--url',
      redisUrl(),
      '--prefix',
      prefix,
      '--replicas',
      '3',
      '--chats',
      '12',
      '--rate',
      '20',
      '--lease-ms',
      '1500ms',
      '--provider-down-ms',
      '3s',
    ])
    const allPids = new Set<number>()
    try {
      const start = await demo.waitFor('the start line', () => demo.lines.find((l) => l.kind === 'demo-start'))
      for (const pid of start.pids as number[]) {
        allPids.add(pid)
        started.push(pid)
      }
      expect((start.replicas as unknown[]).length).toBe(3)
      // The URL (a password in it) reaches the replicas through their environment, never their command line.
      for (const r of start.replicas as Array<{ pid: number }>) {
        expect(readFileSync(`/proc/${r.pid}/cmdline`, 'utf8').split('\0')).not.toContain('--url')
      }

      // Every replica serves, and one leads the provider.
      const first = await demo.waitFor('all replicas serving and a provider leader', () => {
        const s = demo.latest()
        return s && s.provider.leader && s.replicas.every((r) => r.handled > 0) && Object.keys(s.servedBy).length >= 6 ? s : null
      })

      // Kill a replica that does not lead, through the demo: its chats move to the others.
      const victim = first.replicas
        .map((r) => r.replicaId)
        .find((id) => id !== first.provider.leader && Object.values(first.servedBy).includes(id))!
      expect(victim).toBeTruthy()
      const victimChats = Object.entries(first.servedBy)
        .filter(([, r]) => r === victim)
        .map(([chat]) => chat)
      const kill = await runCli(['--prefix', prefix, 'demo', 'kill', victim])
      expect(kill.code, kill.stderr).toBe(0)
      expect(kill.stdout).toMatch(new RegExp(`killed ${victim} \\(pid \\d+\\)`))
      const afterKill = await demo.waitFor(`${victim}'s chats (${victimChats.join(', ')}) served by the others`, () => {
        const s = demo.latest()
        return s &&
          s.replicas.find((r) => r.replicaId === victim)?.state === 'dead' &&
          victimChats.every((c) => s.servedBy[c] && s.servedBy[c] !== victim)
          ? s
          : null
      })

      // Kill the provider's leader: a standby takes the lead, with a higher fence.
      const leader = afterKill.provider.leader!
      const fence = afterKill.provider.fence!
      expect((await runCli(['--prefix', prefix, 'demo', 'kill', leader])).code).toBe(0)
      const moved = await demo.waitFor('the provider lead to move', () => {
        const s = demo.latest()
        return s && s.provider.leader && s.provider.leader !== leader ? s : null
      })
      expect(moved.provider.fence!).toBeGreaterThan(fence)
      const survivor = moved.provider.leader!
      expect([victim, leader]).not.toContain(survivor)
      // The last replica keeps serving.
      const handled = moved.messages.handled
      await demo.waitFor('messages still being handled', () => (demo.latest()!.messages.handled > handled + 5 ? true : null))

      // A rolling deploy of a changed flow: the killed replica comes back running flow version 2.
      const again = await runCli(['--prefix', prefix, 'demo', 'start', victim, '--flow-version', '2'])
      expect(again.code, again.stderr).toBe(0)
      const pid = Number(new RegExp(`started ${victim} again \\(pid (\\d+), .*flow version 2\\)`).exec(again.stdout)?.[1])
      expect(pid, again.stdout).toBeGreaterThan(0)
      allPids.add(pid)
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')).toContain('--flow-version 2')

      // Ctrl-C: every child stops, by pid.
      for (const l of demo.lines)
        if (l.kind === 'demo-summary') for (const r of (l as unknown as Summary).replicas) if (r.pid) allPids.add(r.pid)
      demo.child.kill('SIGINT')
      const code = await demo.waitFor('the demo to exit after Ctrl-C', () => demo.child.exitCode !== null && { code: demo.child.exitCode })
      expect(code.code, JSON.stringify(demo.output())).toBe(0)
      const stop = demo.lines.find((l) => l.kind === 'demo-stop')
      expect(stop, demo.output().stdout).toBeTruthy()
      for (const pid of stop!.stoppedPids as number[]) allPids.add(pid)
      expect(allPids.size).toBeGreaterThanOrEqual(3)
      const alive = [...allPids].filter(isAlive)
      expect(alive, `still running: ${alive.join(', ')}`).toEqual([])

      // The control socket is gone with it.
      const late = await runCli(['--prefix', prefix, 'demo', 'status'])
      expect(late.code).toBe(3)
      expect(late.stderr.trim().split('\n')).toHaveLength(1)
    } finally {
      if (demo.child.exitCode === null && demo.child.signalCode === null) demo.child.kill('SIGKILL')
    }
  }, 45_000)

  it('rehearses a stale checkpoint write and a flow deploy: diagnosed, snapshotted, replayed with the same answers, fixed', async () => {
    const prefix = uniquePrefix('demoinc')
    const cli = (...args: string[]) => runCli(['--url', redisUrl(), '--prefix', prefix, ...args])
    const demo = startDemo(['--no-tui', '--json', '--url', redisUrl(), '--prefix', prefix, '--chats', '40', '--rate', '4'])
    const dir = mkdtempSync(join(tmpdir(), 'botmesh-demo-inc-'))
    try {
      const start = await demo.waitFor('the start line', () => demo.lines.find((l) => l.kind === 'demo-start'))
      started.push(...(start.pids as number[]))
      // Conversations in progress (checkpoints), and a provider leader.
      await demo.waitFor('checkpoints of both flows and a provider leader', () => {
        const s = demo.latest()
        return s?.provider.leader && s.messages.handled > 30 ? s : null
      })
      const w = await until(
        async () => {
          const r = await cli('demo', 'stale-write', 'r2')
          return r.code === 0 ? r : null
        },
        20_000,
        'a chat with a checkpoint that r2 holds no part of',
        200,
      )
      const m = /checkpoint of (chat:\d+) without the turn's fence \(revision (\d+)\)/.exec(w.stdout)
      expect(m, w.stdout).toBeTruthy()
      const [, chat, rev] = m!
      // Printed with the connection it came from (the demo's context): it reaches this Redis as pasted.
      expect(w.stdout).toContain(`Fix: botmesh-coord --context demo-${prefix} checkpoint rm ${chat} --if-revision ${rev}`)
      const explained = parseJson<{ explain: { findings: Array<{ code: string; fix?: string }> } }>(
        await cli('chat', 'inspect', chat!, '--explain', '--json'),
      )
      expect(explained.explain.findings.find((f) => f.code === 'checkpoint-stale-write')?.fix).toContain(
        `botmesh-coord --url ${redisUrl()} --prefix ${prefix} checkpoint rm ${chat} --if-revision ${rev}`,
      )

      // Diagnosed by one command; the snapshot taken in the incident answers as the live commands did.
      const questions = [['chat', 'inspect', chat!, '--explain'], ['provider', 'status', 'demo'], ['doctor']]
      const file = join(dir, 'incident.json.gz')
      await until(
        async () => {
          const [live, snap] = await Promise.all([Promise.all(questions.map((q) => cli(...q, '--json'))), cli('snapshot', '-o', file)])
          expect(snap.code, snap.stderr).toBe(0)
          const replay = await Promise.all(questions.map((q) => runCli(['--from', file, ...q, '--json'])))
          const [j] = live.map((r) => parseJson<Record<string, any>>(r)) // eslint-disable-line @typescript-eslint/no-explicit-any
          expect(j!.explain.findings.map((f: { code: string }) => f.code)).toContain('checkpoint-stale-write')
          expect(
            parseJson<{ checks: Array<{ id: string; status: string }> }>(live[2]!).checks.find((c) => c.id === 'stale-writes')?.status,
          ).toBe('fail')
          questions.forEach((q, i) => expect(timeless(parseJson(replay[i]!)), q.join(' ')).toEqual(timeless(parseJson(live[i]!))))
          return true
        },
        30_000,
        'live answers and the snapshot taken with them, replayed, to agree',
        100,
      )
      // Fixed by one command.
      const rm = await cli('checkpoint', 'rm', chat!, '--if-revision', rev!, '--yes', '--reason', 'stale write rehearsal')
      expect([0, 6], rm.stderr).toContain(rm.code) // 6: the conversation wrote over it first (also gone)
      const after = parseJson<{ chat: { staleWrite: unknown } }>(await cli('chat', 'inspect', chat!, '--json'))
      expect(after.chat.staleWrite).toBeNull()

      // A flow deploy: the old version's forward checkpoints are listed as not resumed (changed) and counted.
      await demo.waitFor('faq conversations in progress', async () => {
        const r = parseJson<{ checkpoints: unknown[] }>(await cli('checkpoints', 'ls', '--ephemeral', '--flow', 'faq', '--json'))
        return r.checkpoints.length > 0 ? true : null
      })
      const dep = await cli('demo', 'deploy-flow', 'faq')
      expect(dep.code, dep.stderr).toBe(0)
      const fp = /fingerprint \w+ → (\w+)/.exec(dep.stdout)?.[1]
      expect(fp, dep.stdout).toBeTruthy()
      const mism = parseJson<{ checkpoints: Array<{ fallback: string }> }>(
        await cli('checkpoints', 'ls', '--fingerprint', `faq=${fp}`, '--mismatched', '--json'),
      )
      expect(mism.checkpoints.length).toBeGreaterThan(0)
      expect(mism.checkpoints.every((c) => c.fallback === 'changed')).toBe(true)
      const doc = parseJson<{ checks: Array<{ id: string; status: string; detail: string }> }>(
        await cli('doctor', '--fingerprint', `faq=${fp}`, '--json'),
      )
      expect(doc.checks.find((c) => c.id === 'flow-versions')).toMatchObject({ status: 'warn', detail: expect.stringContaining('faq') })
    } finally {
      demo.child.kill('SIGINT')
      await demo.waitFor('the demo to exit', () => demo.child.exitCode !== null || demo.child.signalCode !== null, 20_000).catch(() => {})
      if (demo.child.exitCode === null && demo.child.signalCode === null) demo.child.kill('SIGKILL')
    }
  }, 120_000)

  it('rehearses a stuck chat from the commands it prints: demo hang, chat inspect --explain, the pinned fix, the chat moves on', async () => {
    const prefix = uniquePrefix('demohang')
    const demo = startDemo(
      ['--no-tui', '--json', '--url', redisUrl(), '--prefix', prefix, '--chats', '10', '--rate', '8'].concat([
        '--lease-ms',
        '2s',
        '--turn-wait',
        '6s',
      ]),
    )
    try {
      const start = await demo.waitFor('the start line', () => demo.lines.find((l) => l.kind === 'demo-start'))
      started.push(...(start.pids as number[]))
      const context = start.context as string
      expect(context).toBe(`demo-${prefix}`)
      await demo.waitFor('messages handled', () => (demo.latest()?.messages.handled ?? 0) > 5 || null)

      // The rehearsal command, with the connection the demo printed: the handler of chat:1 hangs holding its turn.
      const hang = await runCli(['--context', context, 'demo', 'hang', 'r1', 'chat:1'])
      expect(hang.code, hang.stderr + hang.stdout).toBe(0)
      const fence = Number(/holds the turn of chat:1 \(fence (\d+)\)/.exec(hang.stdout)?.[1])
      expect(fence, hang.stdout).toBeGreaterThan(0)
      const diagnose = /Diagnose: (botmesh-coord .*?--explain --turn-wait \S+)/.exec(hang.stdout)?.[1]
      expect(diagnose, hang.stdout).toContain(`--context ${context} chat inspect chat:1`)

      // Pasted as printed: --explain flags the holder once messages wait behind it, and names a pinned fix.
      const fix = await until(
        async () => {
          const r = await runCli(pasted(diagnose!))
          expect(r.code, r.stderr).toBe(0)
          return /→ .*hand the turn on: (botmesh-coord \S.*)$/m.exec(r.stdout)?.[1] ?? null
        },
        30_000,
        'chat inspect --explain to name the fix of the hung holder',
        300,
      )
      expect(fix).toBe(`botmesh-coord --context ${context} chat release chat:1 --if-fence ${fence}`)

      // The fix, pasted (--yes: no terminal here to confirm on): the hung turn is revoked and the chat moves on.
      const rel = await runCli([...pasted(fix), '--yes', '--reason', 'rehearsal: handler hung'])
      expect(rel.code, rel.stderr + rel.stdout).toBe(0)
      const after = Number(/fence \d+ → (\d+)/.exec(rel.stdout + rel.stderr)?.[1])
      expect(after, rel.stdout + rel.stderr).toBeGreaterThan(fence)
      await until(
        async () => {
          const j = parseJson<{ chat: { fence: number | null } }>(
            await runCli(['--context', context, 'chat', 'inspect', 'chat:1', '--json']),
          )
          return (j.chat.fence ?? 0) > after ? true : null
        },
        20_000,
        "chat:1 granted again after the release (a fence above the release's)",
        200,
      )
      // The same fix pasted again is refused: the chat moved on since it was printed.
      const again = await runCli([...pasted(fix), '--yes'])
      expect(again.code).toBe(6)
    } finally {
      demo.child.kill('SIGINT')
      await demo.waitFor('the demo to exit', () => demo.child.exitCode !== null || demo.child.signalCode !== null, 20_000).catch(() => {})
      if (demo.child.exitCode === null && demo.child.signalCode === null) demo.child.kill('SIGKILL')
    }
  }, 90_000)

  it('without --url starts a redis-server of its own and says so, and stops it by pid', async () => {
    const prefix = uniquePrefix('demoown')
    const demo = startDemo(['--no-tui', '--json', '--prefix', prefix, '--replicas', '1', '--rate', '2', '--duration', '3s'])
    try {
      const start = await demo.waitFor('the start line', () => demo.lines.find((l) => l.kind === 'demo-start'))
      const redis = start.redis as { pid: number; port: number } | null
      expect(redis, JSON.stringify(start)).not.toBeNull()
      started.push(...(start.pids as number[]))
      expect(start.url).toBe(`redis://127.0.0.1:${redis!.port}`)
      expect(redis!.port).not.toBe(6379)
      expect(demo.output().stderr).toContain(
        `no --url given: started a redis-server of its own at redis://127.0.0.1:${redis!.port} (pid ${redis!.pid}`,
      )
      await demo.waitFor('the demo to stop by itself', () => demo.child.exitCode !== null || null, 20_000)
      expect(isAlive(redis!.pid)).toBe(false)
    } finally {
      if (demo.child.exitCode === null && demo.child.signalCode === null) demo.child.kill('SIGKILL')
    }
  }, 40_000)

  it('says so in one line when no demo runs on the prefix', async () => {
    const r = await runCli(['--prefix', uniquePrefix('nodemo'), 'demo', 'kill', 'r1'])
    expect(r.code).toBe(3)
    expect(r.stderr).toMatch(/^botmesh-coord: no demo running with prefix nodemo-\w+/)
  })
})
