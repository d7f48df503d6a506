import { defineStoreContract } from '../contract/store.contract.js'
import { MemoryCoordinationHub, MemoryStore } from '../../src/testing/index.js'
import { afterAll, beforeAll, beforeEach, vi } from 'vitest'
import { FAKED } from '../helpers/fake-clock.js'
import { sleep } from '../helpers/wait.js'
import type { AnyStore } from '../contract/store.contract.js'

// On a fake clock, as the memory runs of the other contracts: TTLs run out without real waiting.
// Date stays real: the contract checks that a Date in a checkpoint's state is refused as a Date.
beforeAll(() => {
  vi.useFakeTimers({ toFake: FAKED.filter((f) => f !== 'Date') })
  vi.setTimerTickMode('nextTimerAsync')
})
afterAll(() => {
  vi.useRealTimers()
})

const memoryOf = (s: AnyStore): MemoryStore => {
  if (!(s instanceof MemoryStore)) throw new Error('not a MemoryStore')
  return s
}

// The hubs made in the current test (its outage takes them down).
const hubsOfTest = new Set<MemoryCoordinationHub>()
beforeEach(() => hubsOfTest.clear())
const freshHub = () => {
  const hub = new MemoryCoordinationHub()
  hubsOfTest.add(hub)
  return hub
}

defineStoreContract({
  name: 'memory',
  store: ({ sameAs, idleKeyTtlMs: _idle, commandTimeoutMs: _timeout, ...options }) =>
    new MemoryStore({ hub: sameAs ? memoryOf(sameAs).hub : freshHub(), ...options }),
  lockOwner: async (s, key) => memoryOf(s).lockOwner(key),
  expireCheckpointIn: async (s, key, ms) => {
    const left = await memoryOf(s).checkpointTtl(key)
    if (left !== null && left > ms) await sleep(left - ms) // time is the subject: the hub's clock moves on
  },
  markerTtl: async (s, key) => memoryOf(s).markerTtl(key),
  queue: async (s, key) => {
    const c = memoryOf(s).hub.chatState(key)
    return { holder: c?.holder?.replicaId ?? null, queued: c?.tickets.map((t) => t.replicaId) ?? [], skipped: c?.skipped ?? 0 }
  },
  now: async (s) => memoryOf(s).hub.now(),
  leadHolder: async (s, name) => memoryOf(s).hub.leadState(name)?.holder ?? null,
  liveIncarnation: async (s, replicaId) =>
    memoryOf(s)
      .hub.liveReplicas()
      .find((r) => r.replicaId === replicaId)?.incarnation ?? null,
  // Every store of a test shares the hub of its first store: down for all of them.
  outage: async () => {
    const hubs = [...hubsOfTest]
    for (const hub of hubs) hub.unavailable = true
    return {
      restore: async () => {
        for (const hub of hubs) hub.unavailable = false
      },
    }
  },
  raw: () => null,
})
