/**
 * `chat inspect` answers in two round trips after connection set-up: the connection check (Redis's
 * clock, the key schema) goes with the chat's own keys and the replica index, then the live
 * replicas' records. Counted by a relay between the CLI and Redis; on a Cluster (one connection per
 * master) inside the CLI process, by the benchmark's hook on every connection it opens.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clusterUrl, redisUrl, uniquePrefix } from '../helpers/redis.js'
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

describe('chat inspect round trips on a Cluster', () => {
  let s: LiveState
  beforeAll(async () => {
    s = await liveState(clusterUrl(), uniquePrefix('rtc'), 'cluster')
  })
  afterAll(async () => {
    await s?.stop()
  })

  it('two after connection set-up: every master is connected before the first reads go out together', async () => {
    const hook = fileURLToPath(new URL('../../bench/lib/round-trip-hook.mjs', import.meta.url))
    const file = join(mkdtempSync(join(tmpdir(), 'botmesh-rt-')), 'round-trips.json')
    const r = await runCli(['--url', clusterUrl(), '--layout', 'cluster', '--prefix', s.prefix, '--json', 'chat', 'inspect', 'chat:42'], {
      env: { NODE_OPTIONS: `--import ${hook}`, BOTMESH_ROUND_TRIPS_FILE: file },
    })
    expect(r.code, r.stderr).toBe(0)
    expect(parseJson<{ chat: { holder: { replicaId: string } } }>(r).chat.holder.replicaId).toBe('pod-a')
    // sequential: a round trip starts only once some master answered since the last one began
    expect(JSON.parse(readFileSync(file, 'utf8')).sequential).toBe(2)
  })
})
