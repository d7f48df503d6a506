import { defineLeadContract } from '../contract/leads.contract.js'
import { MemoryCoordinationHub, MemoryCoordinator } from '../../src/testing/index.js'
import { useFakeClock } from '../helpers/fake-clock.js'

// On a fake clock: deterministic and fast (the Redis runs of the same contract use real time).
useFakeClock()

let hub = new MemoryCoordinationHub()

defineLeadContract({
  name: 'memory',
  make: (options) => new MemoryCoordinator({ hub, ...options }),
  reset: () => {
    hub = new MemoryCoordinationHub()
  },
  requestYield: async (name, opts = {}) =>
    hub.requestYield(name, {
      by: 'test@operator',
      target: opts.target ?? null,
      ttlMs: opts.ttlMs ?? 30_000,
      ifFence: opts.ifFence ?? null,
    }),
  lead: async (name) => {
    const l = hub.leadState(name)
    return { holder: l?.holder?.replicaId ?? null, fence: l?.fence ?? null, yieldRequested: l?.yieldRequest != null }
  },
})
