/**
 * A streamed listing piped to a reader slower than Redis (`| jq`, `| less`) reads no further ahead of
 * it than stdout's buffer: it stops reading Redis while nobody reads its output, where it used to read
 * on and hold every row it had printed (a million chats: 2 GB), and finishes whole once the reader
 * reads again. 40,000 held chats, written by hand as docs/redis-layout.md spells them: about 134 SCAN
 * batches of 300 keys, of which the listing reads its first rows and a few ahead before it prints.
 */
import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { KeyLayout } from '../../src/index.js'
import { startRedis, uniquePrefix, type RedisProc } from '../helpers/redis.js'
import { BIN } from '../helpers/cli.js'
import { writeHeldChats } from '../helpers/held-chats.js'

const CHATS = 40_000

describe('a listing piped to a reader that does not read', () => {
  let redis: RedisProc
  let raw: Redis
  const prefix = uniquePrefix('pipe')
  const keys = new KeyLayout(prefix, 'standalone')

  beforeAll(async () => {
    redis = await startRedis()
    await writeHeldChats(redis.url, keys, CHATS)
    raw = new Redis(redis.url)
  }, 60_000)
  afterAll(async () => {
    raw?.disconnect()
    await redis?.stop()
  })

  /** The read script's calls so far (one per 40 keys of a batch). */
  const reads = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await raw.info('commandstats'))?.[1] ?? 0)

  it('stops reading Redis until its output is read, then prints every row', async () => {
    await raw.config('RESETSTAT')
    const child = spawn(process.execPath, [BIN, '--url', redis.url, '--prefix', prefix, 'chat', 'ls', '-o', 'json'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
    child.stdout.pause() // nobody reads: the pipe fills
    // The reads come to a stop: the same count, not 0 (Node may take a while to start), twice 700 ms apart.
    let before = -1
    let now = await reads()
    for (let i = 0; i < 40 && (now !== before || now === 0); i++) {
      await sleep(700)
      before = now
      now = await reads()
    }
    const held = now
    expect(held).toBeGreaterThan(0)
    const chunks: Buffer[] = []
    child.stdout.on('data', (d: Buffer) => chunks.push(d))
    child.stdout.resume()
    expect(await closed).toBe(0)
    const doc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { chats: Array<{ key: string }> }
    expect(new Set(doc.chats.map((c) => c.key)).size).toBe(CHATS)
    const total = await reads()
    // At least 1,000 calls in all (40,000 keys, at most 40 per call); while nobody read, the first
    // rows' and a few batches ahead of them.
    expect(total).toBeGreaterThanOrEqual(CHATS / 40)
    expect(held).toBeLessThanOrEqual(total / 2)
  }, 60_000)
})
