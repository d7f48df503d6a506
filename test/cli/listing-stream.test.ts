/**
 * A listing of more rows than it sorts in memory (6,000 held chats, written by hand as
 * docs/redis-layout.md spells them): printed as the scan reads them, with one line on stderr that
 * says so, in every format; `--sort` given sorts every row (in runs on disk past memory's share) and
 * says so first. A listing that fits is printed sorted, with no such line (the other CLI tests).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KeyLayout } from '../../src/index.js'
import { startRedis, uniquePrefix, type RedisProc } from '../helpers/redis.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { writeHeldChats } from '../helpers/held-chats.js'

const CHATS = 6_000

describe('a listing of 6,000 chats', () => {
  let redis: RedisProc
  const prefix = uniquePrefix('stream')
  const keys = new KeyLayout(prefix, 'standalone')
  const cli = (...args: string[]) => runCli(['--url', redis.url, '--prefix', prefix, ...args], { timeoutMs: 60_000 })

  beforeAll(async () => {
    redis = await startRedis()
    await writeHeldChats(redis.url, keys, CHATS)
  }, 60_000)
  afterAll(() => redis?.stop())

  it('chat ls prints every row as the scan reads them, and says they are not sorted', async () => {
    const r = await cli('chat', 'ls')
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/printed as the scan reads them, not sorted \(--sort KEY sorts them all/)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^CHAT\s+HOLDER\s+INCARNATION\s+FENCE/)
    const names = new Set(lines.slice(1).map((l) => l.split(/\s+/)[0]))
    expect(names.size).toBe(CHATS)
    expect(names.has('chat:0') && names.has(`chat:${CHATS - 1}`)).toBe(true)
  })

  it('-o json streams one document: every row, then the scan notes', async () => {
    const r = await cli('chat', 'ls', '-o', 'json')
    expect(r.code).toBe(0)
    const doc = parseJson(r) as { chats: Array<{ key: string; fence: number }>; scanned: number; corrupt: unknown[] }
    expect(doc.chats).toHaveLength(CHATS)
    expect(new Set(doc.chats.map((c) => c.key)).size).toBe(CHATS)
    expect(doc.scanned).toBeGreaterThanOrEqual(CHATS)
    expect(doc.corrupt).toEqual([])
  })

  it('--sort given sorts every row before printing, and says so first', async () => {
    const r = await cli('chat', 'ls', '--sort', 'fence', '-o', 'name')
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(
      /sorting by fence: every row is read before the first is printed \(\d[\d,]* keys scanned of about [\d,]+ in Redis/,
    )
    const names = r.stdout.trimEnd().split('\n')
    expect(names).toEqual(Array.from({ length: CHATS }, (_, i) => `chat/chat:${i}`))
  })

  it('leases ls --kind chat -o jsonl streams too; --limit still cuts the scan short and says so', async () => {
    const r = await cli('leases', 'ls', '--kind', 'chat', '-o', 'jsonl')
    expect(r.code).toBe(0)
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(CHATS)
    const cut = await cli('chat', 'ls', '--limit', '2000')
    expect(cut.code).toBe(0)
    expect(cut.stderr).toMatch(/stopped after --limit keys: the listing is partial/)
  })
})
