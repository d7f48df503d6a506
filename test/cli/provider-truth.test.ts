/**
 * What `provider ls/status`, `doctor`, `/metrics` and `provider yield --wait` say about a lead must be
 * what happened: a leader whose transport is down reads `down` (not `ok`) with when it yields, and a
 * takeover says how it happened (yielded, expired, revoked) from what the scripts recorded in Redis.
 * Real replicas on the shared Redis, the CLI and the exporter as subprocesses.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { RedisCoordinator, type Election } from '../../src/index.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { startExporter } from '../helpers/exporter.js'
import { until } from '../helpers/wait.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const started: RedisCoordinator[] = []
async function replica(prefix: string, replicaId: string, leaseMs: number): Promise<RedisCoordinator> {
  const c = new RedisCoordinator({ url: redisUrl(), prefix, replicaId, leaseMs })
  started.push(c)
  await c.start()
  return c
}
afterAll(async () => {
  await Promise.allSettled(started.map((c) => c.stop()))
})

const status = async (prefix: string, name: string) =>
  parseJson<J>(await runCli(['--url', redisUrl(), '--prefix', prefix, 'provider', 'status', name, '-o', 'json'])).provider as J

describe('a leader whose transport is down', () => {
  it('reads down with how long and when it yields, in provider ls/status, doctor and /metrics; up again reads ok', async () => {
    const prefix = uniquePrefix('tdown')
    const base = ['--url', redisUrl(), '--prefix', prefix]
    const a = await replica(prefix, 'pod-a', 15_000)
    const election: Election = a.campaign('provider:wa', { providerDownMs: 60_000, sitOutMs: 10_000 })
    await election.ready
    election.reportDown()
    await until(async () => (await status(prefix, 'wa')).transportDown !== null, 5000, 'the transport record')

    const json = await status(prefix, 'wa')
    expect(json).toMatchObject({ state: 'down', replicaId: 'pod-a', transportDown: { yieldAfterMs: 60_000 } })
    expect(json.transportDown.yieldsInMs).toBeGreaterThan(50_000)
    expect(json.reason).toMatch(/transport down .* \(yields at 1m\)/)

    const text = await runCli([...base, 'provider', 'status', 'wa'])
    expect(text.stdout).toMatch(/state\s+down/)
    expect(text.stdout).toMatch(/transport\s+transport down \d+(\.\d)?(ms|s) \(yields at 1m\)/)
    const ls = await runCli([...base, 'provider', 'ls'])
    expect(ls.stdout).toMatch(/TRANSPORT/)
    expect(ls.stdout).toMatch(/transport down \S+ \(yields at 1m\)/)

    const doctor = parseJson<J>(await runCli([...base, 'doctor', '-o', 'json']))
    const check = (doctor.checks as J[]).find((c) => c.id === 'transports')!
    expect(check).toMatchObject({ status: 'warn' })
    expect(check.detail).toMatch(/provider:wa \(pod-a: transport down .* \(yields at 1m\), yields in/)
    // The hand-over it suggests is pinned to the leader's fence doctor saw.
    expect(check.fix).toMatch(new RegExp(`provider yield provider:wa --if-fence ${json.fence} --wait`))

    const exporter = await startExporter(base)
    try {
      await new Promise((r) => setTimeout(r, 1100))
      const v = await until(
        async () => (await exporter.sample('botmesh_lead_transport_down_seconds{lead="provider:wa",kind="provider"}')) || undefined,
        5000,
        'the transport gauge',
      )
      expect(v).toBeGreaterThan(0)
    } finally {
      await exporter.stop()
    }

    election.reportUp()
    await until(async () => (await status(prefix, 'wa')).transportDown === null, 5000, 'the transport back up')
    expect(await status(prefix, 'wa')).toMatchObject({ state: 'ok', transportDown: null })
    expect((await runCli([...base, 'provider', 'status', 'wa'])).stdout).toMatch(/transport\s+up/)

    // The record belongs to the grant: a release clears it with the holder, and says how it let go.
    election.reportDown()
    await until(async () => (await status(prefix, 'wa')).transportDown !== null, 5000, 'down again')
    await election.resign()
    const vacant = await status(prefix, 'wa')
    expect(vacant).toMatchObject({ state: 'vacant', replicaId: null, transportDown: null, letGoHow: 'released' })
    expect((await runCli([...base, 'provider', 'status', 'wa'])).stdout).toMatch(/let go\s+released by the leader/)
    await election.stop()
  })
})

describe('how a takeover happened', () => {
  it('a frozen leader: --wait reports the expiry as such (exit 1), and status says expired, not let go', async () => {
    const prefix = uniquePrefix('texp')
    const base = ['--url', redisUrl(), '--prefix', prefix]
    // A lease long enough that the CLI, started on a busy machine, still finds pod-a leading.
    const a = await replica(prefix, 'pod-a', 4000)
    const ea = a.campaign('provider:wa', {})
    await ea.ready
    const b = await replica(prefix, 'pod-b', 4000)
    b.campaign('provider:wa', {})
    await until(async () => (await status(prefix, 'wa')).standbys.length === 1, 5000, 'pod-b standing')
    a.crash() // frozen: no renewal, no release

    const r = await runCli([...base, 'provider', 'yield', 'wa', '--wait', '--wait-timeout', '20s', '--yes', '-o', 'json'])
    expect(r.code, r.stderr + r.stdout).toBe(1)
    const out = parseJson<J>(r)
    expect(out.takeover).toMatchObject({ ok: false, how: 'expired', leader: { replicaId: 'pod-b' } })
    const t = await runCli([...base, 'provider', 'status', 'wa'])
    expect(t.stdout).toMatch(/last takeover\s+\S+ with nobody leading \(expired: the leader stopped renewing and never let go/)
    expect(t.stdout).not.toMatch(/let go → next grant/)
    expect((await status(prefix, 'wa')).lastHandoverHow).toBe('expired')
  })

  it('a forced revoke: --wait says revoked by an operator; a live leader that answers says yielded', async () => {
    const prefix = uniquePrefix('trev')
    const base = ['--url', redisUrl(), '--prefix', prefix]
    const c = await replica(prefix, 'pod-c', 15_000)
    const ec = c.campaign('provider:wa', { sitOutMs: 200 })
    await ec.ready
    const d = await replica(prefix, 'pod-d', 15_000)
    d.campaign('provider:wa', { sitOutMs: 200 })
    await until(async () => (await status(prefix, 'wa')).standbys.length === 1, 5000, 'pod-d standing')

    const forced = await runCli([...base, 'provider', 'yield', 'wa', '--force', '--wait', '--yes'])
    expect(forced.code, forced.stderr + forced.stdout).toBe(0)
    expect(forced.stdout).toMatch(
      /pod-d leads provider:wa now \(fence \d+\); takeover took \S+: revoked by an operator \(\S+\): pod-c never let go/,
    )
    const after = await runCli([...base, 'provider', 'status', 'wa'])
    expect(after.stdout).toMatch(/last takeover\s+\S+ with nobody leading \(revoked by an operator \(\S+\): the leader never let go\)/)
    await until(async () => (await status(prefix, 'wa')).standbys.length === 1, 5000, 'pod-c standing again')

    const asked = await runCli([...base, 'provider', 'yield', 'wa', '--wait', '--yes', '-o', 'json'])
    expect(asked.code, asked.stderr + asked.stdout).toBe(0)
    expect(parseJson<J>(asked).takeover).toMatchObject({ ok: true, how: 'yielded', leader: { replicaId: 'pod-c' } })
    expect((await status(prefix, 'wa')).lastHandoverHow).toBe('yielded')
  })
})
