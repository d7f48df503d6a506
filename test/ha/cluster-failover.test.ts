/**
 * The CLI during a Cluster failover, on a 3-master Cluster with one replica per master (started once
 * for this file; `cluster-require-full-coverage no`, so the other masters go on serving). A master
 * is killed while its replica is frozen (SIGSTOP), so the window before the promotion stays open
 * while the CLI looks: listings say they are partial and name the master (one line, and
 * `unreachable` in --json), `doctor` fails its cluster check, `replicas ls` says it cannot know the
 * replicas when their heartbeats' master is the one down — never "no live replicas". Once the replica
 * is let go and promoted, the same commands are whole again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { RedisCoordinator } from '../../src/index.js'
import { roleOf, startCluster, type ClusterProc, type RedisProc } from '../../scripts/redis-procs.mjs'
import { startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli, type CliResult } from '../helpers/cli.js'
import { until } from '../helpers/wait.js'

let cluster: ClusterProc
const prefix = uniquePrefix('clf')
const CHATS = 12

beforeAll(async () => {
  cluster = await startCluster({ replicas: 1, args: ['--cluster-require-full-coverage', 'no'] })
  // A replica that took turns on chats spread over every master, then died: its records stay.
  const c = await startCoordinator(
    () => new RedisCoordinator({ url: cluster.url, layout: 'cluster', prefix, replicaId: 'pod-a', leaseMs: 120_000 }),
  )
  for (let i = 0; i < CHATS; i++) await c.acquireTurn(`chat:${i}`)
  await c.renewNow() // the heartbeat lists the turns
  c.crash()
}, 90_000)
afterAll(async () => {
  await cluster?.stop()
})

/** The master (and its replica) that owns `key`'s slot now. */
async function ownerOf(key: string): Promise<{ master: RedisProc; replica: RedisProc }> {
  const probe = new Redis(cluster.replicas[0]!.port, '127.0.0.1', { lazyConnect: true })
  await probe.connect()
  try {
    const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', key))
    const slots = (await probe.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number], ...Array<[string, number]>]>
    const entry = slots.find(([a, b]) => a <= slot && slot <= b)!
    const master = cluster.nodes.find((n) => n.port === Number(entry[2][1]))!
    const replica = cluster.nodes.find((n) => n.port === Number(entry[3]![1]))!
    return { master, replica }
  } finally {
    probe.disconnect()
  }
}

/** Kill `master` with its replica frozen; run `look` in that window; then let the replica be promoted. */
async function duringFailover(victim: { master: RedisProc; replica: RedisProc }, look: () => Promise<void>): Promise<void> {
  await victim.replica.kill('SIGSTOP')
  try {
    await victim.master.kill('SIGKILL')
    await look()
  } finally {
    await victim.replica.kill('SIGCONT')
  }
  await until(async () => (await roleOf(victim.replica.port)) === 'master', 30_000, 'the replica to be promoted')
}

const via = (alive: RedisProc) => ['--url', alive.url, '--prefix', prefix]
const stderrLines = (r: CliResult) => r.stderr.split('\n').filter(Boolean)

describe('the CLI while a Cluster master is down, before its replica is promoted', () => {
  it("a master other than the heartbeats': listings are partial and say so, doctor fails its cluster check; whole again after the promotion", async () => {
    const heartbeats = await ownerOf(`${prefix}:replicas:{${prefix}}`)
    const masters = await Promise.all(cluster.masters.map(async (m) => ((await roleOf(m.port)) === 'master' ? m : null)))
    const other = masters.find((m) => m && m !== heartbeats.master)!
    const victim = await ownerOf(await keyOn(other))
    const alive = heartbeats.master
    await duringFailover(victim, async () => {
      const ls = await runCli([...via(alive), 'chat', 'ls', '--json'])
      expect(ls.code, ls.stderr).toBe(4)
      const doc = parseJson<{ chats: Array<{ key: string }>; unreachable: Array<{ node: string; slots: string }> }>(ls)
      expect(doc.unreachable).toEqual([
        expect.objectContaining({ node: `127.0.0.1:${victim.master.port}`, slots: expect.stringMatching(/^\d+-\d+$/) }),
      ])
      expect(doc.chats.length).toBeGreaterThan(0)
      expect(doc.chats.length).toBeLessThan(CHATS)

      const table = await runCli([...via(alive), 'leases', 'ls'])
      expect(table.code, table.stderr).toBe(4)
      expect(stderrLines(table)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^partial: master 127\\.0\\.0\\.1:${victim.master.port} \\(slots \\d+-\\d+: .*\\) did not answer: the keys there are not listed$`,
          ),
        ),
      ])

      // The heartbeats' master answers: the replicas are known, whole.
      const replicas = await runCli([...via(alive), 'replicas', 'ls', '--json'])
      expect(replicas.code, replicas.stderr).toBe(0)
      expect(parseJson<{ replicas: Array<{ replicaId: string }> }>(replicas).replicas.map((r) => r.replicaId)).toEqual(['pod-a'])

      const doctor = await runCli([...via(alive), 'doctor', '--json'])
      expect(doctor.code, doctor.stderr).toBe(1)
      const checks = parseJson<{ checks: Array<{ id: string; status: string; detail: string }> }>(doctor).checks
      expect(checks.find((c) => c.id === 'cluster')).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining(`127.0.0.1:${victim.master.port}`),
      })
    })
    await until(
      async () => {
        const r = await runCli([...via(alive), 'chat', 'ls', '--json'])
        return r.code === 0 && parseJson<{ chats: unknown[]; unreachable: unknown[] }>(r)
      },
      20_000,
      'chat ls whole again after the promotion',
      200,
    ).then((doc) => {
      expect(doc.chats).toHaveLength(CHATS)
      expect(doc.unreachable).toEqual([])
    })
  })

  it("the heartbeats' master: replicas ls and doctor say the replicas cannot be known, never that there are none", async () => {
    const victim = await ownerOf(`${prefix}:replicas:{${prefix}}`)
    const masters = await Promise.all(cluster.nodes.map(async (m) => ((await roleOf(m.port)) === 'master' ? m : null)))
    const alive = masters.find((m) => m && m !== victim.master)!
    await duringFailover(victim, async () => {
      const replicas = await runCli([...via(alive), 'replicas', 'ls'])
      expect(replicas.code, replicas.stderr).toBe(4)
      expect(replicas.stdout).not.toMatch(/no live replicas/)
      expect(stderrLines(replicas)).toEqual([
        expect.stringMatching(
          new RegExp(
            `cannot know the replicas: master 127\\.0\\.0\\.1:${victim.master.port} \\(slots [\\d,-]+\\), which holds every heartbeat under prefix ${prefix}, did not answer`,
          ),
        ),
      ])
      const chats = await runCli([...via(alive), 'chat', 'ls'])
      expect(chats.code, chats.stderr).toBe(4)
      expect(chats.stderr).toMatch(/cannot know the replicas/)

      const doctor = await runCli([...via(alive), 'doctor', '--json'])
      expect(doctor.code, doctor.stderr).toBe(1)
      const checks = parseJson<{ checks: Array<{ id: string; status: string; detail: string }> }>(doctor).checks
      expect(checks.find((c) => c.id === 'replicas')).toMatchObject({
        status: 'fail',
        detail: expect.stringMatching(/^cannot know the live replicas/),
      })
      expect(checks.find((c) => c.id === 'cluster')?.status).toBe('fail')
    })
    await until(
      async () => {
        const r = await runCli([...via(alive), 'replicas', 'ls', '--json'])
        return r.code === 0 && parseJson<{ replicas: Array<{ replicaId: string }> }>(r).replicas.length === 1
      },
      20_000,
      'replicas ls whole again after the promotion',
      200,
    )
  })
})

/** A chat key of this test whose slot `master` owns. */
async function keyOn(master: RedisProc | null): Promise<string> {
  for (let i = 0; i < CHATS; i++) {
    const key = `${prefix}:c:{chat:${i}}`
    if ((await ownerOf(key)).master === master) return key
  }
  throw new Error('no chat on that master')
}
