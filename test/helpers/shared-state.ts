/**
 * What tests wait on instead of sleeping: the shared state in Redis, read as an operator reads it
 * (StateReader) — a ticket is queued, a replica stands for a lead, a holder let go.
 * `on` is anything with a client and a key layout: a RedisCoordinator, RedisStore or CoordinationAdmin.
 */
import { expect } from 'vitest'
import { StateReader, type KeyLayout } from '../../src/index.js'
import { until } from './wait.js'

export interface ReadsRedis {
  redis: ConstructorParameters<typeof StateReader>[0]
  keys: KeyLayout
}

/** A chat's turn queue by replica id: who holds it, who is queued (in ticket order), dead tickets skipped. */
export interface QueueView {
  holder: string | null
  queued: string[]
  skipped: number
}

export async function queueView(on: ReadsRedis, chat: string): Promise<QueueView> {
  const c = (await new StateReader(on.redis, on.keys).chat(chat)).chat
  return { holder: c?.holder?.replicaId ?? null, queued: c?.tickets.map((t) => t.replicaId) ?? [], skipped: c?.skippedTickets ?? 0 }
}

/** A lead by replica id: holder, fence, whether a yield request is pending. */
export interface LeadView {
  holder: string | null
  fence: number | null
  yieldRequested: boolean
}

export async function leadView(on: ReadsRedis, name: string): Promise<LeadView> {
  const l = await new StateReader(on.redis, on.keys).lead(name)
  return { holder: l?.holder?.replicaId ?? null, fence: l?.fence ?? null, yieldRequested: l?.yieldRequest != null }
}

/** Resolve once exactly `replicaIds` (in this order) have tickets queued for `chat`. */
export async function untilQueued(on: ReadsRedis, chat: string, replicaIds: string[], ms = 5000): Promise<void> {
  await until(
    async () => expect((await queueView(on, chat)).queued).toEqual(replicaIds),
    ms,
    `tickets of [${replicaIds.join(', ')}] queued for ${chat}`,
  )
}

/** Resolve once exactly `replicaIds` stand for `lead` (candidates, sorted by id). */
export async function untilStanding(on: ReadsRedis, lead: string, replicaIds: string[], ms = 5000): Promise<void> {
  const want = [...replicaIds].sort()
  await until(
    async () => {
      const standing = ((await new StateReader(on.redis, on.keys).lead(lead))?.candidates ?? []).map((c) => c.replicaId)
      return expect(standing.sort()).toEqual(want)
    },
    ms,
    `[${want.join(', ')}] standing for ${lead}`,
  )
}

/** Renew `c` until its heartbeat record lists it waiting on each of `chats`: its acquisitions have their tickets. */
export async function untilBeatListsWaiting(
  c: ReadsRedis & { replicaId: string; renewNow(): Promise<void> },
  chats: string[],
  ms = 5000,
): Promise<void> {
  await until(
    async () => {
      await c.renewNow()
      const waiting = (await new StateReader(c.redis, c.keys).replica(c.replicaId))?.leases.waiting.map((w) => w.key) ?? []
      return expect(waiting).toEqual(expect.arrayContaining(chats))
    },
    ms,
    `the heartbeat of ${c.replicaId} listing it waiting on [${chats.join(', ')}]`,
  )
}
