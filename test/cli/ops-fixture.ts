/**
 * What the tests of the handover and checkpoint interventions share (test/cli/handover-ops,
 * checkpoint-ops, ops-confirm): a world on a fresh prefix (the CLI, the store, live replicas, the
 * audit trail), and a command run on a terminal (tmux) that waits for its confirmation, so a test can
 * change the state between the preview and the answer. Call useOpsFixture() once per file.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach } from 'vitest'
import { CoordinationAdmin, RedisCoordinator, RedisStore, type Layout } from '../../src/index.js'
import { BIN, runCli } from '../helpers/cli.js'
import { clusterUrl, redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

export type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

export const closers: Array<() => Promise<unknown>> = []
export const sessions: string[] = []

/** Stops what a test started (replicas, clients) after each test, and the tmux sessions at the end. */
export function useOpsFixture(): void {
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => {})
  })
  afterAll(() => {
    for (const s of sessions.splice(0)) spawnSync('tmux', ['kill-session', '-t', s])
  })
}

export const TEN_MIN = 600_000
/** A replica that is gone: no heartbeat was ever written for it. */
export const DEAD = { replicaId: 'pod-dead', incarnation: 'dead0dead0dead0de' }

export function world(layout: Layout) {
  const url = layout === 'cluster' ? clusterUrl() : redisUrl()
  const prefix = uniquePrefix('hops')
  const base = ['--url', url, '--prefix', prefix]
  const cli = (...args: string[]) => runCli([...base, ...args], { timeoutMs: 30_000 })
  const admin = new CoordinationAdmin({ url, prefix, layout })
  closers.push(() => admin.close())
  const store = new RedisStore({ redis: admin.redis, prefix, layout })
  const live = async (replicaId: string) => {
    const c = await startCoordinator(() => new RedisCoordinator({ url, prefix, layout, replicaId, leaseMs: 30_000 }))
    closers.push(() => c.stop())
    return c
  }
  const audit = async () => {
    const entries = await admin.redis.xrange(`${prefix}:events`, '-', '+')
    return entries.map(([, f]) => JSON.parse(f[1]!) as J).filter((e) => e.type === 'intervention')
  }
  const pttl = (key: string) => admin.redis.pttl(admin.keys.chat(key).checkpoint)
  /** An ephemeral checkpoint of `flow` written by `owner`. */
  const forward = (key: string, flow: string, fingerprint: string, owner = DEAD) =>
    store.setCheckpointIf(key, { flow, step: 'address', state: { key }, owner, ephemeral: { ttlMs: TEN_MIN, fingerprint } }, null)
  return { url, prefix, base, cli, store, live, audit, pttl, forward }
}

// ---------------------------------------------------------------- a command waiting on a terminal

export const hasTmux = spawnSync('tmux', ['-V']).status === 0
/**
 * Run botmesh-coord in a terminal (tmux) with JSON on stdout to a file: it previews and asks on the
 * terminal; `answer()` types y once the question is out (after the caller changed the state).
 */
export function onTerminal(args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'hops-'))
  const name = `hops-${uniquePrefix('t')}`
  sessions.push(name)
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
  const line = `env -u REDIS_URL NO_COLOR=1 ${q(process.execPath)} ${q(BIN)} ${args.map(q).join(' ')} -o json > ${dir}/out.json; echo $? > ${dir}/rc; sleep 600`
  execFileSync('tmux', ['new-session', '-d', '-s', name, '-x', '200', '-y', '50', line])
  const screen = () => execFileSync('tmux', ['capture-pane', '-p', '-t', name], { encoding: 'utf8' })
  return {
    question: () => until(() => /\[y\/N\]/.test(screen()) && screen(), 20_000, 'the confirmation question', 100),
    answer: async () => {
      execFileSync('tmux', ['send-keys', '-t', name, 'y', 'Enter'])
      await until(() => existsSync(`${dir}/rc`) && readFileSync(`${dir}/rc`, 'utf8').trim() !== '', 20_000, 'the command to finish', 50)
      const code = Number(readFileSync(`${dir}/rc`, 'utf8').trim())
      const out = JSON.parse(readFileSync(`${dir}/out.json`, 'utf8')) as J
      rmSync(dir, { recursive: true, force: true })
      spawnSync('tmux', ['kill-session', '-t', name])
      return { code, out }
    },
  }
}
