/**
 * `chat inspect` answers in two round trips after connection set-up: the connection check (Redis's
 * clock, the key schema) goes with the chat's own keys and the replica index, then the live
 * replicas' records. Counted by a relay between the CLI and Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { roundTripRelay, type RoundTripRelay } from '../../scripts/round-trip-relay.mjs'
import { liveState, type LiveState } from './read-fixture.js'

describe('chat inspect round trips', () => {
  let s: LiveState
  let relay: RoundTripRelay
  beforeAll(async () => {
    s = await liveState(redisUrl(), uniquePrefix('rt'), 'standalone')
    relay = await roundTripRelay(redisUrl())
  })
  afterAll(async () => {
    await relay?.close()
    await s?.stop()
  })

  it('two after connection set-up (layout probe included), with the same answer', async () => {
    const r = await runCli(['--url', relay.url, '--prefix', s.prefix, '--json', 'chat', 'inspect', 'chat:42'])
    expect(r.code).toBe(0)
    const j = parseJson<{ chat: { key: string; holder: { replicaId: string; alive: boolean }; queue: unknown[] } }>(r)
    expect(j.chat.key).toBe('chat:42')
    expect(j.chat.holder).toMatchObject({ replicaId: 'pod-a', alive: true })
    expect(relay.roundTrips()).toBe(2)
  })
})
