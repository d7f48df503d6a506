/**
 * Found by the fault campaign (chaos/, plan redis-restart-aof + restart-same-id + block-0.9, run seed
 * 3147931099; caught by the linearizability check of chat:0's checkpoint): Redis was SIGKILLed just
 * after it ran a holder's clearCheckpointIf (appended and fsynced) and before its reply left; the
 * client sent the clear again once Redis was back (ioredis autoResendUnfulfilledCommands), the second
 * run found no row and answered 'changed', and the holder was told false although it had deleted the
 * row. A checkpoint write has the same hole once another write replaced it before the second run: its
 * write id answers 'written' only while the write is still the current one.
 *
 * Expected: a refusal the client cannot know to be the only run is an unknown outcome
 * (CoordinationUnavailableError, as after a timeout), never a refusal.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { CheckpointConflictError, CoordinationUnavailableError } from '../../src/index.js'
import { until } from '../helpers/wait.js'
import { settle, storesBehindReplyEater } from '../helpers/resent.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {})
})

describe('a checkpoint write run twice by a client that lost its reply (found by the fault campaign)', () => {
  it('is not reported refused when another write replaced it before the second run', async () => {
    const { proxy, store, other } = await storesBehindReplyEater('resent-set', cleanup)
    const first = await store.setCheckpointIf('chat:1', { flow: 'f', step: 1, state: { n: 1 } }, null)
    proxy.eatReplies(true) // Redis runs the write; its reply never arrives
    const write = settle(store.setCheckpointIf('chat:1', { flow: 'f', step: 2, state: { n: 2 } }, first))
    const stored = await until(
      async () => {
        const cp = await other.getCheckpoint('chat:1')
        return cp?.revision !== first && cp
      },
      5000,
      'the write taking effect in Redis',
    )
    expect(stored?.step).toBe('2')
    // the next writer resumes from it and writes over it
    const next = await other.setCheckpointIf('chat:1', { flow: 'f', step: 3, state: { n: 3 } }, stored!.revision)
    proxy.eatReplies(false)
    proxy.dropAll() // the client reconnects and sends the write again: it now finds `next`
    const outcome = await write
    if ('err' in outcome && outcome.err instanceof CheckpointConflictError) {
      expect.fail(`the write took effect (revision ${stored?.revision}, then ${next}) but was reported refused: ${outcome.err.message}`)
    }
    expect('err' in outcome && outcome.err).toBeInstanceOf(CoordinationUnavailableError)
    expect((await other.getCheckpoint('chat:1'))?.revision).toBe(next)
  }, 20_000)

  it('a clear that deleted the row is not reported as having left it', async () => {
    const { proxy, store, other } = await storesBehindReplyEater('resent-clear', cleanup)
    const rev = await store.setCheckpointIf('chat:1', { flow: 'f', step: 1, state: { n: 1 } }, null)
    expect(await store.clearCheckpointIf('chat:2', 1)).toBe(false) // the script is cached: no NOSCRIPT round trip to lose
    proxy.eatReplies(true)
    const clear = settle(store.clearCheckpointIf('chat:1', rev))
    await until(async () => (await other.getCheckpoint('chat:1')) === null, 5000, 'the clear taking effect in Redis')
    proxy.eatReplies(false)
    proxy.dropAll()
    const outcome = await clear
    if ('value' in outcome) expect(outcome.value, 'the clear deleted the row but answered false').toBe(true)
    else expect(outcome.err).toBeInstanceOf(CoordinationUnavailableError)
  }, 20_000)

  it('a refusal on a connection that stayed up is still a refusal', async () => {
    const { store, other } = await storesBehindReplyEater('resent-control', cleanup)
    const rev = await store.setCheckpointIf('chat:1', { flow: 'f', step: 1, state: { n: 1 } }, null)
    await other.setCheckpointIf('chat:1', { flow: 'f', step: 2, state: { n: 2 } }, rev)
    await expect(store.setCheckpointIf('chat:1', { flow: 'f', step: 3, state: { n: 3 } }, rev)).rejects.toBeInstanceOf(
      CheckpointConflictError,
    )
    expect(await store.clearCheckpointIf('chat:1', rev)).toBe(false)
  }, 20_000)
})
