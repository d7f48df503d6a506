import { Coordinator } from '../coordinator/coordinator.js'
import type { CoordinatorOptions } from '../coordinator/types.js'
import { MemoryBackend, MemoryCoordinationHub } from './memory-hub.js'

export interface MemoryCoordinatorOptions extends CoordinatorOptions {
  /** The shared hub: coordinators on one hub coordinate like replicas sharing Redis. */
  hub: MemoryCoordinationHub
}

/** The in-process reference coordinator: same logic as RedisCoordinator, state in a shared hub. */
export class MemoryCoordinator extends Coordinator {
  readonly hub: MemoryCoordinationHub
  constructor(options: MemoryCoordinatorOptions) {
    super(new MemoryBackend(options.hub), options)
    this.hub = options.hub
  }
}
