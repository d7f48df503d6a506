import { defineLeadContract } from '../contract/leads.contract.js'
import { MemoryCoordinationHub, MemoryCoordinator } from '../../src/testing/index.js'

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
})
