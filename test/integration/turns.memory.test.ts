import { defineTurnContract } from '../contract/turns.contract.js'
import { MemoryCoordinationHub, MemoryCoordinator } from '../../src/testing/index.js'
import { useFakeClock } from '../helpers/fake-clock.js'

// On a fake clock: deterministic and fast (the Redis runs of the same contract use real time).
useFakeClock()

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
  linked: async (options) => {
    const coordinator = new MemoryCoordinator({ hub, ...options })
    return {
      coordinator,
      cut: async () => coordinator.cutLink(),
      loseReplies: () => coordinator.loseReplies(),
      restore: () => coordinator.restoreLink(),
    }
  },
  pushesTo: async (coordinator) => {
    const h = hub
    const from = h.pushesTo(coordinator.incarnation)
    return { count: async () => h.pushesTo(coordinator.incarnation) - from, stop: async () => {} }
  },
  queue: async (key) => {
    const c = hub.chatState(key)
    return { holder: c?.holder?.replicaId ?? null, queued: c?.tickets.map((t) => t.replicaId) ?? [], skipped: c?.skipped ?? 0 }
  },
})
