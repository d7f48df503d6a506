/**
 * A Cluster master that accepts and never answers (SIGSTOP), on the same host as the others: a
 * listing still reads every other master whole and names the silent one as unreachable. The walks
 * have at most two commands at a host's servers at a time (src/state/read-script.ts walkCommand), so
 * the silent master's unanswered commands must not hold the other masters' reads behind them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout, RedisCoordinator } from '../../src/index.js'
import { startCluster, type ClusterProc, type RedisProc } from '../../scripts/redis-procs.mjs'
import { startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'

let cluster: ClusterProc
const prefix = uniquePrefix('hung')
const keys = new KeyLayout(prefix, 'cluster')
const CHATS = 60
/** The port of the master that owns each chat's state key. */
const ownerPort = new Map<string, number>()

beforeAll(async () => {
  cluster = await startCluster({ args: ['--cluster-require-full-coverage', 'no'] })
  const c = await startCoordinator(
    () => new RedisCoordinator({ url: cluster.url, layout: 'cluster', prefix, replicaId: 'pod-a', leaseMs: 120_000 }),
  )
  for (let i = 0; i < CHATS; i++) await c.acquireTurn(`chat:${i}`)
  await c.renewNow()
  const probe = new Redis(cluster.url)
  try {
    const slots = (await probe.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>
    for (let i = 0; i < CHATS; i++) {
      const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', keys.chat(`chat:${i}`).state))
      ownerPort.set(`chat:${i}`, Number(slots.find(([a, b]) => a <= slot && slot <= b)![2][1]))
    }
  } finally {
    probe.disconnect()
  }
  c.crash()
}, 90_000)
afterAll(async () => {
  await cluster?.stop()
})

describe('a listing while one master of the host does not answer', () => {
  it('lists every chat of the other masters and names the silent one', async () => {
    const indexSlotOwner = await (async () => {
      const probe = new Redis(cluster.url)
      try {
        const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', keys.replicaIndex))
        const slots = (await probe.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>
        return Number(slots.find(([a, b]) => a <= slot && slot <= b)![2][1])
      } finally {
        probe.disconnect()
      }
    })()
    // Silence a master that holds some chats but not the replica index; ask through another one.
    const silent = cluster.masters.find((m: RedisProc) => m.port !== indexSlotOwner && [...ownerPort.values()].includes(m.port))!
    const via = cluster.masters.find((m: RedisProc) => m !== silent)!
    const expected = [...ownerPort].filter(([, port]) => port !== silent.port).map(([chat]) => chat)
    expect(expected.length).toBeGreaterThan(0)
    expect(expected.length).toBeLessThan(CHATS)
    await silent.kill('SIGSTOP')
    try {
      const r = await runCli(['--url', via.url, '--prefix', prefix, '--timeout', '2s', 'chat', 'ls', '--json'], { timeoutMs: 60_000 })
      expect(r.code, r.stderr).toBe(4)
      const doc = parseJson<{ chats: Array<{ key: string }>; unreachable: Array<{ node: string }> }>(r)
      expect(doc.unreachable.map((u) => u.node)).toEqual([`127.0.0.1:${silent.port}`])
      expect(doc.chats.map((c) => c.key).sort()).toEqual(expected.sort())
    } finally {
      await silent.kill('SIGCONT')
    }
  }, 90_000)
})
