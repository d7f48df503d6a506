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
  readonly #backend: MemoryBackend
  constructor(options: MemoryCoordinatorOptions) {
    const backend = new MemoryBackend(options.hub)
    super(backend, options)
    this.#backend = backend
    this.hub = options.hub
  }

  /**
   * Tests: cut this replica's link to the hub (every call fails as on a dropped connection, pushes to
   * it are lost) until `restoreLink()`; the other replicas on the hub go on. `hub.unavailable` cuts all.
   */
  cutLink(): void {
    this.#backend.linkCut = true
  }

  /**
   * Tests: from now on this replica's calls reach the hub and take effect, but their replies (and the
   * hub's pushes) are lost, as when a connection drops after Redis ran a script and before its reply
   * came back — until `restoreLink()`.
   */
  loseReplies(): void {
    this.#backend.repliesLost = true
  }

  restoreLink(): void {
    this.#backend.restore()
  }
}
