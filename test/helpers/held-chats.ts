/**
 * A listing's state written by hand as docs/redis-layout.md spells it, without a replica taking each
 * turn: the schema record and `count` chats (`chat:0` …) held by pod-0, pod-1 and pod-2 for ten
 * minutes, fences 1000 and up.
 */
import { Redis } from 'ioredis'
import type { KeyLayout } from '../../src/index.js'

export async function writeHeldChats(url: string, keys: KeyLayout, count: number): Promise<void> {
  const raw = new Redis(url)
  try {
    const now = Number((await raw.time())[0]) * 1000
    await raw.hset(keys.schema, 'version', '1', 'layout', keys.layout, 'createdAt', String(now))
    const p = raw.pipeline()
    for (let i = 0; i < count; i++) {
      p.hset(keys.chat(`chat:${i}`).state, {
        n: 1,
        f: 1_000 + i,
        h: `pod-${i % 3}`,
        hi: `inc${i % 3}`,
        ht: 1,
        exp: now + 600_000,
        g: now,
        lr: now,
      })
    }
    await p.exec()
  } finally {
    raw.disconnect()
  }
}
