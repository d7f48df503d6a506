export { MemoryCoordinationHub, type MemoryCoordinationHubOptions } from './memory-hub.js'
export { MemoryCoordinator, type MemoryCoordinatorOptions } from './memory-coordinator.js'
export { MemoryStore, MemorySchedulerLeases, type MemoryStoreOptions } from './memory-store.js'
