/**
 * The coordinators running in this process, by incarnation (internal). A store that refuses a
 * checkpoint write as superseded tells the writer's coordinator through it, so the lost turn is
 * lost there too — whichever way the coordinator was made (`store.coordinator()`, `new …`); and a
 * store asks it, before a fenced write, whether that turn was already declared lost here.
 */

/** What a store may tell a coordinator. */
export interface TurnOwner {
  /** A checkpoint write on `key` with this turn `fence` (null: unfenced) was refused: that turn is lost. */
  supersedeTurn(key: string, fence: number | null): void
  /** Was this coordinator's turn on `key` with this fence declared lost (expired, revoked, superseded, reset)? */
  turnLost(key: string, fence: number): boolean
}

const running = new Map<string, WeakRef<TurnOwner>>()

export function registerIncarnation(incarnation: string, owner: TurnOwner): void {
  running.set(incarnation, new WeakRef(owner))
}

export function unregisterIncarnation(incarnation: string): void {
  running.delete(incarnation)
}

/** A write of `incarnation` on chat `key` was superseded: its turn there is lost (no-op for another process's). */
export function turnSuperseded(incarnation: string, key: string, fence: number | null): void {
  const owner = running.get(incarnation)?.deref()
  if (owner) owner.supersedeTurn(key, fence)
  else running.delete(incarnation)
}

/**
 * Did the coordinator of `incarnation`, running in this process, declare its turn on chat `key` with
 * `fence` lost? (False for another process's incarnation: Redis alone decides for those.)
 */
export function turnDeclaredLost(incarnation: string, key: string, fence: number): boolean {
  return running.get(incarnation)?.deref()?.turnLost(key, fence) ?? false
}
