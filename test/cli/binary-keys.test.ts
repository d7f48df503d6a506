/**
 * Keys that are not UTF-8. Redis keys are bytes; the library carries a byte that is not UTF-8 as a
 * lone surrogate U+DC80–U+DCFF (src/bytes.ts). On standalone Redis and on the Cluster: such a chat
 * key, its queue, checkpoint and handover marker are the exact bytes in Redis, in one slot; distinct
 * broken strings do not collapse into one U+FFFD key; the CLI lists the key escaped (`\xff`), takes
 * that form back in `chat inspect`, `checkpoint inspect`, `chat release` and `checkpoint rm`, and
 * JSON carries the exact key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout, RedisCoordinator, RedisStore, connect, type Layout } from '../../src/index.js'
import { idFromBytes, idToBytes } from '../../src/bytes.js'
import { clusterUrl, redisUrl, startCoordinator, uniquePrefix } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { untilQueued } from '../helpers/shared-state.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const BINARY = idFromBytes(Buffer.from([0x62, 0x69, 0x6e, 0x3a, 0xff, 0xfe, 0x00, 0x1b, 0xc3])) // "bin:" FF FE NUL ESC C3
const SHOWN = 'bin:\\xff\\xfe\\x00\\x1b\\xc3'

describe('bytes as ids', () => {
  it('every byte string survives the trip through an id, and strings keep their UTF-8', () => {
    for (let n = 0; n < 300; n++) {
      const bytes = Buffer.from(Array.from({ length: 1 + (n % 17) }, (_, i) => (n * 31 + i * 97) & 0xff))
      expect(idToBytes(idFromBytes(bytes)).equals(bytes)).toBe(true)
    }
    expect(idFromBytes(Buffer.from('chat:é🙂', 'utf8'))).toBe('chat:é🙂')
    expect(idToBytes('chat:é🙂').equals(Buffer.from('chat:é🙂', 'utf8'))).toBe(true)
    expect(idToBytes('\udcff')).toEqual(Buffer.from([0xff]))
    // A lone surrogate of a caller is not U+FFFD: its own 3 bytes.
    expect(idToBytes('\ud800').equals(Buffer.from('\ufffd'))).toBe(false)
  })
})

for (const layout of ['standalone', 'cluster'] as Layout[]) {
  describe(`a chat key that is not UTF-8, on ${layout}`, () => {
    const url = () => (layout === 'cluster' ? clusterUrl() : redisUrl())
    const prefix = uniquePrefix(`bin-${layout.slice(0, 2)}`)
    const cli = (...args: string[]) => runCli(['--url', url(), '--prefix', prefix, ...args])
    let a: RedisCoordinator
    let b: RedisCoordinator
    let store: RedisStore
    let waiting: Promise<unknown>

    beforeAll(async () => {
      a = await startCoordinator(() => new RedisCoordinator({ url: url(), prefix, layout, replicaId: 'pod-a', leaseMs: 30_000 }))
      b = await startCoordinator(() => new RedisCoordinator({ url: url(), prefix, layout, replicaId: 'pod-b', leaseMs: 30_000 }))
      store = new RedisStore({ url: url(), prefix, layout })
      const t = await a.acquireTurn(BINARY)
      waiting = b.acquireTurn(BINARY, { waitMs: 60_000 }).then((turn) => turn.release())
      await untilQueued(a, BINARY, ['pod-b'])
      await store.setCheckpointIf(
        BINARY,
        { flow: 'f', step: 's', state: {}, owner: { replicaId: 'pod-a', incarnation: a.incarnation, fence: t.fence } },
        null,
      )
    })
    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop(), store?.close()].map((p) => p?.catch(() => {})))
    })

    it('its keys are the exact bytes, in one slot; broken strings do not share a key with U+FFFD', async () => {
      const keys = new KeyLayout(prefix, layout)
      const k = keys.chat(BINARY)
      expect(Buffer.isBuffer(k.state)).toBe(true)
      const redis = connect({ url: url(), layout }) as Redis
      try {
        expect(await redis.exists(k.state, k.queue)).toBe(2)
        expect(await redis.exists(keys.chat('bin:\ufffd\ufffd\ufffd\ufffd\ufffd').state)).toBe(0)
        expect((k.state as Buffer).includes(Buffer.from([0xff, 0xfe]))).toBe(true)
      } finally {
        redis.disconnect()
      }
      // Two callers' broken strings and the replacement character are three chats: held at once.
      const c = await startCoordinator(() => new RedisCoordinator({ url: url(), prefix, layout, replicaId: 'pod-c', leaseMs: 30_000 }))
      try {
        const turns = await Promise.all(['x:\ud800', 'x:\udcff', 'x:\ufffd'].map((key) => c.acquireTurn(key, { waitMs: 2000 })))
        expect(new Set(turns.map((t) => t.fence)).size).toBe(3)
        await Promise.all(turns.map((t) => t.release()))
      } finally {
        await c.stop()
      }
    })

    it('the CLI lists it escaped, takes that form back, and JSON carries the exact key', async () => {
      const [names, json] = await Promise.all([cli('chat', 'ls', '-o', 'name'), cli('chat', 'ls', '--json')])
      expect(names.stdout.split('\n')).toContain(`chat/${SHOWN}`)
      expect(parseJson<J>(json).chats.map((c: J) => c.key)).toContain(BINARY)
      const hex = idToBytes(BINARY).toString('hex')
      const [inspect, cp, byHex, badHex] = await Promise.all([
        cli('chat', 'inspect', SHOWN, '--json'),
        cli('checkpoint', 'inspect', SHOWN),
        cli('chat', 'inspect', '--key-hex', hex, '--json'),
        cli('--key-hex', 'chat', 'inspect', 'zz'),
      ])
      expect(byHex.code, byHex.stderr).toBe(0)
      expect(parseJson<J>(byHex).chat.key).toBe(BINARY)
      expect(badHex.code).toBe(2)
      expect(badHex.stderr).toMatch(/^botmesh-coord: --key-hex: "zz" is not hex bytes/)
      expect(inspect.code, inspect.stderr).toBe(0)
      expect(parseJson<J>(inspect).chat.holder.replicaId).toBe('pod-a')
      expect(cp.code, cp.stderr).toBe(0)
      expect(cp.stdout).toContain(SHOWN)
      const release = await cli('chat', 'release', SHOWN, '--yes')
      expect(release.code, release.stderr).toBe(0)
      expect(release.stdout).toContain(`released ${SHOWN}`)
      await waiting // pod-b was granted the turn the operator released, and let it go
      const rm = await cli('checkpoint', 'rm', SHOWN, '--yes')
      expect(rm.code, rm.stderr).toBe(0)
      expect(await store.getCheckpoint(BINARY)).toBeNull()
    })
  })
}
