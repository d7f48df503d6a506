/**
 * The listing logic in-process, with no Redis at all: StateReader over a RecordedSource (what
 * `--from snapshot` replays) holding hand-built records — streamed and drained listings, their
 * batches, corrupt keys and `--limit` truncation; the rows `chat ls` and `leases ls` make of them
 * (chatRowMaker, leaseRowMaker); and the streaming helpers of commands/read/listing-stream.ts
 * (rowStream's notes, openRows: a small listing whole, a big one streamed).
 */
import { describe, expect, it } from 'vitest'
import { KeyLayout, type RedisKey } from '../../src/keys.js'
import { keyText } from '../../src/bytes.js'
import { StateReader, LISTING_DECODERS } from '../../src/state/reader.js'
import { RecordedSource, emptyRecords, type StateRecords } from '../../src/state/records.js'
import { chatRowMaker, leaseRowMaker, type ChatRow, type LeaseRow } from '../../src/state/views.js'
import type { ChatSnapshot } from '../../src/state/decode.js'
import { drain, openRows, rowStream, SORTED_ROWS_MAX } from '../../commands/read/listing-stream.js'

const NOW = 1_700_000_000_000
const keys = new KeyLayout('shop', 'standalone')
type Fields = Record<string, string>

/** Records on `nodes` masters: each key on the node `nodeOf` names (round robin by default), in insertion order. */
class Records {
  readonly records: StateRecords
  private n = 0
  constructor(nodes = 1) {
    this.records = emptyRecords(
      NOW,
      Array.from({ length: nodes }, (_, i) => ({ name: `10.0.0.${i + 1}:6379`, keys: [] as string[] })),
    )
  }
  put(rawKey: RedisKey, h: Fields | { error: string }): this {
    const text = keyText(rawKey)
    this.records.hashes[text] = 'error' in h ? { e: h.error as string, at: NOW } : { h: h as Fields, at: NOW }
    const nodes = this.records.nodes
    ;(nodes[this.n++ % nodes.length]!.keys as string[]).push(text)
    return this
  }
  replica(id: string, o: { inc?: string; expInMs?: number; host?: string; pid?: number; indexed?: boolean } = {}): this {
    const info = JSON.stringify({ host: o.host ?? 'h1', pid: o.pid ?? 1, version: '1', startedAt: NOW - 60_000, leaseMs: 30_000 })
    this.put(keys.replica(id), { id, inc: o.inc ?? `${id}-inc`, beat: String(NOW - 1000), exp: String(NOW + (o.expInMs ?? 10_000)), info })
    if (o.indexed !== false) {
      const z = (this.records.zsets[keys.replicaIndex] ??= { ids: [], at: NOW })
      z.ids.push(id)
    }
    return this
  }
  /** A chat held by `holder` (or idle), with `queued` tickets of `holder` waiting behind it. */
  chat(key: string, o: { holder?: string; fence?: string; queued?: number } = {}): this {
    const h: Fields = { n: String(o.queued ?? 0), f: o.fence ?? '3' }
    if (o.holder) {
      Object.assign(h, {
        h: o.holder,
        hi: `${o.holder}-inc`,
        ht: '1',
        exp: String(NOW + 20_000),
        g: String(NOW - 5000),
        lr: String(NOW - 100),
      })
    }
    for (let t = 2; t < 2 + (o.queued ?? 0); t++) h[`t:${t}`] = `${NOW + 60_000}|${NOW - 2000}|${o.holder ?? 'r1'}-inc|${o.holder ?? 'r1'}`
    return this.put(keys.chat(key).state, h)
  }
  reader(): StateReader {
    return new StateReader(new RecordedSource(this.records), keys)
  }
}

async function batchesOf<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const b of it) out.push(b)
  return out
}

describe('StateReader over recorded records: listings', () => {
  const corruptRecords = () =>
    new Records(2)
      .chat('a', { holder: 'r1' })
      .chat('b')
      .chat('bad', { fence: 'not-a-number' })
      .put(keys.chat('wrong').state, { error: 'WRONGTYPE Operation against a key holding the wrong kind of value' })
      .chat('c', { holder: 'r1', queued: 2 })
      .put(keys.lead('provider:x'), { f: '7', h: 'r1', hi: 'r1-inc', exp: String(NOW + 9000), g: String(NOW - 1000), lr: String(NOW - 10) })
      .put(keys.lock('job'), { f: '2', tk: 't', o: 'h1:1', exp: String(NOW + 4000), g: String(NOW - 3000) })
      .put(keys.chat('x').checkpoint, { f: 'flow', s: 'step', r: '1', u: String(NOW) })
      .replica('r1')

  it('listStream yields one batch per SCAN batch, decoded, with corrupt keys beside the items', async () => {
    const reader = corruptRecords().reader()
    const stream = reader.listStream({ chat: LISTING_DECODERS.chat }, { count: 2 })
    const batches = await batchesOf(stream.batches)
    // Two masters, five chat keys between them, two keys per SCAN call: more than one batch.
    expect(batches.length).toBeGreaterThan(1)
    const items = batches.flatMap((b) => b.items)
    expect(items.every((i) => i.kind === 'chat')).toBe(true)
    expect(items.map((i) => i.value.key).sort()).toEqual(['a', 'b', 'c'])
    const c = items.find((i) => i.value.key === 'c')!.value
    expect(c.queued).toBe(2)
    expect(c.holder?.replicaId).toBe('r1')
    const corrupt = batches.flatMap((b) => b.corrupt)
    expect(corrupt.map((x) => x.rawKey).sort()).toEqual(['shop:c:bad', 'shop:c:wrong'])
    expect(corrupt.find((x) => x.rawKey === 'shop:c:wrong')).toEqual({ kind: 'chat', rawKey: 'shop:c:wrong', error: 'wrong Redis type' })
    expect(corrupt.find((x) => x.rawKey === 'shop:c:bad')!.error).toMatch(/field f is not an integer/)
    // Only this kind's keys are scanned (the pattern leaves out the lead, the lock, the checkpoint, the heartbeat).
    expect(stream.summary()).toEqual({ scanned: 5, truncated: false })
  })

  it('listMany drains one pass over several kinds: items and corrupt keys by kind, the keys counted once', async () => {
    const reader = corruptRecords().reader()
    const seen: number[] = []
    const out = await reader.listMany(
      { chat: LISTING_DECODERS.chat, lead: LISTING_DECODERS.lead, lock: LISTING_DECODERS.lock },
      { count: 3, onProgress: (n) => seen.push(n) },
    )
    expect(out.chat.items.map((c) => c.key).sort()).toEqual(['a', 'b', 'c'])
    expect(out.chat.corrupt.map((c) => c.rawKey).sort()).toEqual(['shop:c:bad', 'shop:c:wrong'])
    expect(out.lead.items.map((l) => [l.key, l.fence, l.holder?.replicaId])).toEqual([['provider:x', 7, 'r1']])
    expect(out.lock.items.map((k) => [k.key, k.holder?.owner])).toEqual([['job', 'h1:1']])
    expect(out.lead.corrupt).toEqual([])
    // Seven keys of the three kinds, counted on the first kind only.
    expect([out.chat.scanned, out.lead.scanned, out.lock.scanned]).toEqual([7, 0, 0])
    expect([out.chat.truncated, out.lead.truncated, out.lock.truncated]).toEqual([false, false, false])
    expect(seen.at(-1)).toBe(7)
    expect(seen).toEqual([...seen].sort((a, b) => a - b))
  })

  it('the single-kind listings read the same records (chats, leads, locks, replicas)', async () => {
    const reader = corruptRecords().reader()
    const [chats, leads, locks, replicas] = await Promise.all([reader.chats(), reader.leads(), reader.locks(), reader.replicas()])
    expect(chats.items).toHaveLength(3)
    expect(chats.corrupt).toHaveLength(2)
    expect(chats.scanned).toBe(5)
    expect(leads.items.map((l) => l.key)).toEqual(['provider:x'])
    expect(locks.items.map((l) => l.key)).toEqual(['job'])
    expect(replicas.items.map((r) => [r.replicaId, r.incarnation])).toEqual([['r1', 'r1-inc']])
  })

  it('--limit stops the scan once that many keys were seen, and says the listing is truncated', async () => {
    const recs = new Records(2)
    for (let i = 0; i < 10; i++) recs.chat(`k${i}`, { holder: 'r1' })
    const limited = await recs.reader().chats({ limit: 4, count: 1 })
    expect(limited.truncated).toBe(true)
    expect(limited.scanned).toBe(4)
    expect(limited.items).toHaveLength(4)
    // With a limit, master after master: the first master's keys come first.
    expect(limited.items.map((c) => c.key)).toEqual(['k0', 'k2', 'k4', 'k6'])

    const stream = recs.reader().listStream({ chat: LISTING_DECODERS.chat }, { limit: 3, count: 2 })
    const rows = (await batchesOf(stream.batches)).flatMap((b) => b.items)
    // Whole SCAN batches: the one that reaches the limit is kept whole.
    expect(rows).toHaveLength(4)
    expect(stream.summary()).toEqual({ scanned: 4, truncated: true })

    const all = await recs.reader().chats({ limit: 50, count: 3 })
    expect(all).toMatchObject({ scanned: 10, truncated: false })
    expect(all.items).toHaveLength(10)
  })

  it('liveReplicas reads the index: a corrupt heartbeat is a corrupt key, one without a beat is skipped', async () => {
    const recs = new Records().replica('r1').replica('r2')
    recs.put(keys.replica('r3'), { id: 'r3', beat: 'soon', exp: String(NOW) })
    recs.put(keys.replica('r4'), { ev: 'r4-inc' })
    recs.records.zsets[keys.replicaIndex]!.ids.push('r3', 'r4')
    const live = await recs.reader().liveReplicas()
    expect(live.items.map((r) => r.replicaId)).toEqual(['r1', 'r2'])
    expect(live.corrupt).toEqual([{ rawKey: 'shop:r:r3', error: expect.stringMatching(/field beat is not an integer/) }])
    expect(live).toMatchObject({ scanned: 4, truncated: false })
  })
})

describe('the rows of chat ls and leases ls', () => {
  it('chatRowMaker: a held or queued chat is a row judged against the live replicas; an idle one only with all', async () => {
    const recs = new Records()
      .replica('r1')
      .chat('held', { holder: 'r1' })
      .chat('orphan', { holder: 'gone' })
      .chat('idle')
      .chat('queued', { holder: 'r1', queued: 3 })
    const reader = recs.reader()
    const [nowMs, replicas] = await Promise.all([reader.now(), reader.liveReplicas()])
    expect(nowMs).toBe(NOW)
    const d = LISTING_DECODERS
    const rowsOf = async (all: boolean) => {
      const row = chatRowMaker(replicas.items, nowMs, { all })
      const out = await reader.listMany({ chat: (...a: Parameters<typeof d.chat>) => row(d.chat(...a)) })
      return new Map(out.chat.items.map((r) => [r.key, r]))
    }
    const rows = await rowsOf(false)
    expect([...rows.keys()].sort()).toEqual(['held', 'orphan', 'queued'])
    expect(rows.get('held')).toMatchObject({
      kind: 'chat',
      replicaId: 'r1',
      incarnation: 'r1-inc',
      fence: 3,
      holderAlive: true,
      expiresInMs: 20_000,
      heldForMs: 5000,
      queueLength: 0,
    } satisfies Partial<ChatRow>)
    expect(rows.get('orphan')).toMatchObject({ replicaId: 'gone', holderAlive: false })
    expect(rows.get('queued')).toMatchObject({ queueLength: 3, ticketsRead: 3, oldestWaitMs: 2000, staleTickets: 0 })
    const all = await rowsOf(true)
    expect(all.get('idle')).toMatchObject({ replicaId: null, holderAlive: null, queueLength: 0 })
  })

  it('leaseRowMaker: chat turns, leads and locks as lease rows; a lock finds its replica by host:pid', async () => {
    const recs = new Records()
      .replica('r1', { host: 'h1', pid: 1 })
      .chat('held', { holder: 'r1' })
      .chat('idle')
      .put(keys.lead('scheduler:nightly'), {
        f: '4',
        h: 'r1',
        hi: 'r1-inc',
        exp: String(NOW + 9000),
        g: String(NOW - 1000),
        lr: String(NOW),
      })
      .put(keys.lead('free'), { f: '1' })
      .put(keys.lock('job'), { f: '2', tk: 't', o: 'h1:1', exp: String(NOW + 4000), g: String(NOW - 3000) })
      .put(keys.lock('other'), { f: '5', tk: 't', o: 'elsewhere:9', exp: String(NOW - 1), g: String(NOW - 3000) })
    const reader = recs.reader()
    const [nowMs, replicas] = await Promise.all([reader.now(), reader.liveReplicas()])
    const row = leaseRowMaker(replicas.items, nowMs)
    const d = LISTING_DECODERS
    const out = await reader.listMany({
      chat: (...a: Parameters<typeof d.chat>) => row.chat(d.chat(...a)),
      lead: (...a: Parameters<typeof d.lead>) => row.lead(d.lead(...a)),
      lock: (...a: Parameters<typeof d.lock>) => row.lock(d.lock(...a)),
    })
    const rows = [...out.chat.items, ...out.lead.items, ...out.lock.items].filter((r): r is LeaseRow => r !== null)
    const by = new Map(rows.map((r) => [r.key, r]))
    expect([...by.keys()].sort()).toEqual(['held', 'job', 'other', 'scheduler:nightly'])
    expect(by.get('held')).toMatchObject({ kind: 'chat', replicaId: 'r1', fence: 3, holderAlive: true, owner: null })
    expect(by.get('scheduler:nightly')).toMatchObject({ kind: 'scheduler', replicaId: 'r1', fence: 4, expiresInMs: 9000, heldForMs: 1000 })
    expect(by.get('job')).toMatchObject({
      kind: 'lock',
      replicaId: 'r1',
      owner: 'h1:1',
      fence: 2,
      expiresInMs: 4000,
      lastRenewalAgoMs: null,
    })
    expect(by.get('other')).toMatchObject({ kind: 'lock', replicaId: null, owner: 'elsewhere:9', expiresInMs: -1 })
  })
})

describe('the streaming helpers of commands/read/listing-stream.ts', () => {
  /** A chat ls stream (commands/read/chat-ls.ts streamChats) over these records, without a CLI context. */
  async function chatStream(recs: Records, scan: { limit?: number; count?: number } = {}) {
    const reader = recs.reader()
    const [nowMs, replicas] = await Promise.all([reader.now(), reader.liveReplicas()])
    const row = chatRowMaker(replicas.items, nowMs)
    const d = LISTING_DECODERS
    const listed = reader.listStream({ chat: (...a: Parameters<typeof d.chat>) => row(d.chat(...a)) }, scan)
    const rows = (items: Array<{ value: ChatRow }>) => items.map((i) => i.value)
    return rowStream(nowMs, listed, rows, [replicas])
  }

  it('rowStream: the scan notes once drained count the replicas read first, and their corrupt records too', async () => {
    const recs = new Records().replica('r1').chat('a', { holder: 'r1' }).chat('b', { fence: 'x' })
    recs.put(keys.replica('r9'), { id: 'r9', beat: 'x', exp: '1' })
    recs.records.zsets[keys.replicaIndex]!.ids.push('r9')
    const stream = await chatStream(recs)
    const out = await drain(stream)
    expect(out.nowMs).toBe(NOW)
    expect(out.rows.map((r) => r.key)).toEqual(['a'])
    expect(out.truncated).toBe(false)
    expect(out.corrupt.map((c) => c.rawKey)).toEqual(['shop:r:r9', 'shop:c:b'])
    // Two heartbeats of the index, then the two chat keys of the scan.
    expect(out.extra).toEqual({ scanned: 4 })
    expect(stream.scanned()).toBe(2)
  })

  it('rowStream: a --limit that cut the scan short is in the notes', async () => {
    const recs = new Records().replica('r1')
    for (let i = 0; i < 5; i++) recs.chat(`k${i}`, { holder: 'r1' })
    const out = await drain(await chatStream(recs, { limit: 2, count: 1 }))
    expect(out.truncated).toBe(true)
    expect(out.rows.map((r) => r.key)).toEqual(['k0', 'k1'])
    // The heartbeat of the index, and the two chat keys the limit let the scan read.
    expect(out.extra).toEqual({ scanned: 3 })
    // A limit past every key: not truncated.
    expect(await drain(await chatStream(recs, { limit: 50, count: 1 }))).toMatchObject({ truncated: false, extra: { scanned: 6 } })
  })

  it('openRows: a small listing comes back whole, with its notes, for the sorted print', async () => {
    const recs = new Records(2).replica('r1')
    for (let i = 0; i < 30; i++) recs.chat(`k${i}`, { holder: 'r1', queued: i % 3 })
    const opened = await openRows(await chatStream(recs), (r) => r.queueLength > 0)
    expect(opened.small).toBe(true)
    if (!opened.small) return
    expect(opened.rows).toHaveLength(20)
    expect(opened.rows.every((r) => r.queueLength > 0)).toBe(true)
    expect(opened.notes).toMatchObject({ truncated: false, corrupt: [], extra: { scanned: 31 } })
  })

  it(`openRows: past SORTED_ROWS_MAX (${SORTED_ROWS_MAX}) rows kept, the listing streams: its first rows, then the rest`, async () => {
    const total = SORTED_ROWS_MAX * 3
    const recs = new Records(2).replica('r1')
    for (let i = 0; i < total; i++) recs.chat(`k${i}`, { holder: 'r1' })
    const stream = await chatStream(recs)
    const opened = await openRows(stream, () => true)
    expect(opened.small).toBe(false)
    if (opened.small) return
    expect(opened.first.length).toBeGreaterThan(SORTED_ROWS_MAX)
    expect(opened.first.length).toBeLessThan(total)
    expect(opened.stream).toBe(stream)
    // Not read to its end yet: the rest of the scan is still to come.
    expect(stream.scanned()).toBeLessThan(total)
    const rest: ChatSnapshot['key'][] = []
    for (;;) {
      const next = await opened.rest.next()
      if (next.done) break
      for (const r of next.value) rest.push(r.key)
    }
    const keysRead = [...opened.first.map((r) => r.key), ...rest]
    expect(keysRead).toHaveLength(total)
    expect(new Set(keysRead).size).toBe(total)
    expect(stream.notes()).toMatchObject({ truncated: false, corrupt: [], extra: { scanned: total + 1 } })
  })

  it('openRows: the row filter applies to the first rows, so a filtered big scan can still be small', async () => {
    const recs = new Records().replica('r1')
    for (let i = 0; i < SORTED_ROWS_MAX + 500; i++) recs.chat(`k${i}`, { holder: 'r1', queued: i % 100 === 0 ? 1 : 0 })
    const opened = await openRows(await chatStream(recs), (r) => r.queueLength > 0)
    expect(opened.small).toBe(true)
    if (opened.small) expect(opened.rows).toHaveLength(Math.ceil((SORTED_ROWS_MAX + 500) / 100))
  })
})
