/**
 * Per-master server identity on a Redis Cluster (3 masters, one replica each): a failover of one
 * master drops only the leases in that master's slots (reason 'reset'); the leases on the masters
 * that did not change stay held and go on renewing. Two faults: `CLUSTER FAILOVER` on a replica (the
 * master changes cleanly) and a master killed (its replica promoted after the node timeout). The
 * hash slot the library computes is checked against CLUSTER KEYSLOT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout, RedisCoordinator, type Turn } from '../../src/index.js'
import { keySlot } from '../../src/connection.js'
import { roleOf, startCluster, type ClusterProc, type RedisProc } from '../../scripts/redis-procs.mjs'
import { startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

let cluster: ClusterProc
beforeAll(async () => {
  cluster = await startCluster({ replicas: 1, args: ['--cluster-require-full-coverage', 'no'] })
}, 90_000)
afterAll(async () => {
  await cluster?.stop()
})

type Slots = Array<[number, number, [string, number], ...Array<[string, number]>]>

/** Ask any live node: the master and replica that serve `slot` now. */
async function servers(slot: number): Promise<{ master: RedisProc; replica: RedisProc }> {
  for (const n of cluster.nodes) {
    const probe = new Redis(n.port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null })
    probe.on('error', () => {})
    try {
      await probe.connect()
      const slots = (await probe.call('CLUSTER', 'SLOTS')) as Slots
      const [, , master, replica] = slots.find(([a, b]) => a <= slot && slot <= b)!
      return {
        master: cluster.nodes.find((p) => p.port === Number(master[1]))!,
        replica: cluster.nodes.find((p) => p.port === Number(replica![1]))!,
      }
    } catch {
      // the next node
    } finally {
      probe.disconnect()
    }
  }
  throw new Error('no node answered CLUSTER SLOTS')
}

async function keyslotOf(key: string): Promise<number> {
  const probe = new Redis(cluster.replicas[0]!.port, '127.0.0.1', { lazyConnect: true })
  await probe.connect()
  try {
    return Number(await probe.call('CLUSTER', 'KEYSLOT', key))
  } finally {
    probe.disconnect()
  }
}

describe('per-master server identity on a Cluster', () => {
  it("the library's hash slot is Redis's", async () => {
    for (const key of ['foo', 'botmesh:chat:{chat:1}', 'p:c:{%7Bx}:q', '{}abc', 'a{b}c{d}', 'ключ:{тег}']) {
      expect(keySlot(key), key).toBe(await keyslotOf(key))
    }
  })

  it("a master's failover drops only its own slots' leases: CLUSTER FAILOVER, then a master killed", async () => {
    const prefix = uniquePrefix('cid')
    const c = await startCoordinator(
      () => new RedisCoordinator({ url: cluster.url, layout: 'cluster', prefix, replicaId: 'pod-a', leaseMs: 30_000 }),
      60_000,
    )
    try {
      const lost = new Map<string, string>()
      c.on('coordination:lease-lost', (e) => lost.set(e.key, e.reason))
      const warnings: string[] = []
      c.on('coordination:warning', (w) => w.code === 'server-changed' && warnings.push(w.message))
      const turns = new Map<string, Turn>()
      for (let i = 0; i < 30; i++) turns.set(`chat:${i}`, await c.acquireTurn(`chat:${i}`))
      const layout = new KeyLayout(prefix, 'cluster')
      const slotOf = (chat: string) => keySlot(layout.chat(chat).state)

      for (const fault of ['CLUSTER FAILOVER', 'master killed'] as const) {
        const owners = new Map<string, number>()
        for (const chat of turns.keys()) owners.set(chat, (await servers(slotOf(chat))).master.port)
        const victim = await servers(slotOf([...turns.keys()].find((k) => !lost.has(k))!))
        const onVictim = [...turns.keys()].filter((k) => !lost.has(k) && owners.get(k) === victim.master.port)
        const elsewhere = [...turns.keys()].filter((k) => !lost.has(k) && owners.get(k) !== victim.master.port)
        expect(onVictim.length).toBeGreaterThan(0)
        expect(elsewhere.length).toBeGreaterThan(0)
        const seen = warnings.length
        if (fault === 'CLUSTER FAILOVER') {
          const r = new Redis(victim.replica.port, '127.0.0.1', { lazyConnect: true })
          await r.connect()
          await r.call('CLUSTER', 'FAILOVER')
          r.disconnect()
        } else {
          await victim.master.kill('SIGKILL')
        }
        await until(async () => (await roleOf(victim.replica.port)) === 'master', 30_000, `the replica promoted (${fault})`)
        await until(() => onVictim.every((k) => lost.get(k) === 'reset'), 30_000, `the victim's leases reset (${fault})`)
        expect(warnings.length).toBeGreaterThan(seen)
        // The other masters' leases stay held, and renew (the next cycle trusts their renewals).
        await c.renewNow()
        // Without per-master identity all of them were reset (20 of 20 here, for both faults).
        expect(elsewhere.filter((k) => lost.has(k))).toEqual([])
        for (const k of elsewhere) expect(() => turns.get(k)!.assertHeld(), k).not.toThrow()
        expect(warnings.at(-1)).toMatch(
          new RegExp(`${onVictim.length} lease\\(s\\) dropped \\(${elsewhere.length} on masters that did not change kept\\)`),
        )
      }
      // A lease dropped by the change is not ours any more; a new turn there has a later fence.
      const again = [...lost.keys()][0]!
      const next = await c.acquireTurn(again, { waitMs: 20_000 })
      expect(next.fence).toBeGreaterThan(turns.get(again)!.fence)
      await next.release()
    } finally {
      await c.stop()
    }
  }, 120_000)
})
