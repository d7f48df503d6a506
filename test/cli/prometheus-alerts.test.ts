/**
 * The shipped alerting rules against a real Prometheus (Debian's `prometheus`): replicas on a private
 * redis-server, the exporter, and a Prometheus of the test's own (a free loopback port, a temp storage
 * folder, a 1 s scrape and evaluation interval, stopped by pid) with docs/prometheus/alerts.yml loaded.
 * A frozen provider leader (SIGSTOP) fires BotmeshLeaderLate while its lease still runs; a chat whose
 * holder is gone (its process restarted) with a message waiting fires BotmeshChatStuck.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCoordinator, RedisStore, type Turn } from '../../src/index.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { startExporter, type ExporterProc } from '../helpers/exporter.js'
import { freePort, startCoordinator, startRedis, uniquePrefix, type RedisProc } from '../helpers/redis.js'
import { untilQueued } from '../helpers/shared-state.js'
import { spawnTurnHolder } from '../helpers/turn-holder.js'
import { until } from '../helpers/wait.js'

const RULES = fileURLToPath(new URL('../../docs/prometheus/alerts.yml', import.meta.url))
// The frozen leader renews every 8 s: late 12 s after its last renewal, expired after 24 s.
const LEASE_MS = 24_000

interface Alert {
  labels: Record<string, string>
  state: 'pending' | 'firing'
  activeAt: string
}

describe('alerting rules on a real Prometheus', () => {
  let redis: RedisProc
  let store: RedisStore
  let child: ChildProcess
  let exporter: ExporterProc
  let prometheus: ChildProcess
  let promUrl: string
  let dir: string
  const coordinators: RedisCoordinator[] = []
  const waits: Array<Promise<Turn | null>> = []
  const prefix = uniquePrefix('prom')
  let frozenAt = 0

  const alerts = async (): Promise<Alert[]> => {
    const res = await fetch(`${promUrl}/api/v1/alerts`)
    return ((await res.json()) as { data: { alerts: Alert[] } }).data.alerts
  }
  const firing = async (name: string, labels: Record<string, string> = {}) =>
    (await alerts()).find(
      (a) => a.labels.alertname === name && a.state === 'firing' && Object.entries(labels).every(([k, v]) => a.labels[k] === v),
    ) ?? null

  beforeAll(async () => {
    redis = await startRedis()
    store = new RedisStore({ url: redis.url, prefix })
    const mk = (replicaId: string, leaseMs: number) =>
      startCoordinator(() => new RedisCoordinator({ url: redis.url, prefix, replicaId, leaseMs }))
    // A replica that will freeze, holding a chat turn and provider:frozen.
    const holder = spawnTurnHolder([redis.url, prefix, 'standalone', 'chat:frozen', String(LEASE_MS), 'provider:frozen'])
    child = holder.child
    expect(await holder.next()).toMatchObject({ granted: true, leads: true })
    // Its heartbeat lists what it holds (what a scrape reads) before it freezes.
    child.stdin!.write('renew\n')
    expect(await holder.next()).toEqual({ renewed: true })
    // A chat whose holder's process died and came back (same replicaId, new incarnation): the old
    // incarnation's turn runs on for a minute, a message waits behind it.
    const old = await mk('pod-c', 60_000)
    await old.acquireTurn('chat:dead')
    const waiter = await mk('waiter', LEASE_MS)
    coordinators.push(waiter)
    waits.push(waiter.acquireTurn('chat:dead', { waitMs: 120_000 }).catch(() => null))
    await untilQueued(store, 'chat:dead', ['waiter'])
    old.crash()
    coordinators.push(await mk('pod-c', LEASE_MS))
    await waiter.renewNow() // its heartbeat lists the chat it waits for: what a scrape reads

    exporter = await startExporter(['--url', redis.url, '--prefix', prefix])
    dir = mkdtempSync(join(tmpdir(), 'botmesh-prometheus-'))
    const port = await freePort()
    promUrl = `http://127.0.0.1:${port}`
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        `  - ${JSON.stringify(RULES)}`,
        'scrape_configs:',
        '  - job_name: botmesh',
        '    static_configs:',
        `      - targets: [${JSON.stringify(new URL(exporter.url).host)}]`,
        '',
      ].join('\n'),
    )
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    )
    await until(async () => (await fetch(`${promUrl}/-/ready`).catch(() => null))?.ok, 30_000, 'Prometheus ready', 100)
    child.kill('SIGSTOP')
    frozenAt = Date.now()
  }, 90_000)

  afterAll(async () => {
    if (prometheus?.pid && prometheus.exitCode === null) {
      const exited = new Promise((r) => prometheus.once('exit', r))
      process.kill(prometheus.pid, 'SIGTERM')
      await exited
    }
    if (dir) rmSync(dir, { recursive: true, force: true })
    child?.kill('SIGKILL')
    await exporter?.stop()
    await Promise.all(coordinators.map((c) => c.stop()))
    await Promise.all(waits)
    await store?.close()
    await redis?.stop()
  })

  it('fires BotmeshLeaderLate for a frozen leader before its lease expires', async () => {
    const alert = await until(() => firing('BotmeshLeaderLate', { lead: 'provider:frozen' }), LEASE_MS, 'BotmeshLeaderLate firing', 250)
    // The lease still runs when the alert fires: Redis has not handed the lead to anyone.
    const leases = parseJson<{ leases: Array<{ key: string; state: string; expiresInMs: number }> }>(
      await runCli(['--url', redis.url, '--prefix', prefix, 'leases', 'ls', '--kind', 'provider', '--json']),
    ).leases
    expect(leases).toEqual([expect.objectContaining({ key: 'provider:frozen', state: 'late' })])
    expect(leases[0]!.expiresInMs).toBeGreaterThan(0)
    expect(Date.parse(alert.activeAt)).toBeLessThan(frozenAt + LEASE_MS)
    expect(await firing('BotmeshHolderLate')).not.toBeNull()
  })

  it('fires BotmeshChatStuck for a chat whose holder is gone while a message waits', async () => {
    const alert = await until(
      () => firing('BotmeshChatStuck', { reason: 'holder-stale-incarnation' }),
      30_000,
      'BotmeshChatStuck firing for the restarted holder',
      250,
    )
    expect(alert.labels.severity).toBe('page')
  })
})
