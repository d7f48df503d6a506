import { defineTurnContract } from '../contract/turns.contract.js'
import { MemoryCoordinationHub, MemoryCoordinator } from '../../src/testing/index.js'

let hub = new MemoryCoordinationHub()

defineTurnContract({
  name: 'memory',
  make: (options) => new MemoryCoordinator({ hub, ...options }),
  reset: () => {
    hub = new MemoryCoordinationHub()
  },
  outage: async () => {
    const h = hub
    h.unavailable = true
    return {
      restore: async () => {
        h.unavailable = false
      },
    }
  },
  childTarget: () => null,
})
