/**
 * The snapshot reader that streams: a document fed in pieces of any size decodes to what JSON.parse
 * makes of it whole, and what JSON.parse refuses (or the format does not allow) is refused with one
 * line, wherever the pieces are cut.
 */
import { describe, expect, it } from 'vitest'
import { scannedSnapshot, snapshotReadLimit, snapshotScanner, snapshotTooLarge, SNAPSHOT_MAX_BYTES } from '../../src/state/snapshot-read.js'

/** A small snapshot document with what makes a scanner stumble: escapes, non-ASCII, nesting, spaces. */
function doc(): Record<string, unknown> {
  return {
    format: 'botmesh-coord-snapshot',
    formatVersion: 1,
    tool: 'botmesh-coord 0.1.0',
    keySchema: 1,
    target: { url: 'redis://127.0.0.1:6379', prefix: 'bot', layout: 'standalone' },
    servers: [{ name: '127.0.0.1:6379', runId: 'r', version: '7.0.15', role: 'master' }],
    records: {
      nowMs: 1_796_000_000_000,
      zsets: { 'bot:q:chat:1': { ids: ['2', '3'], at: 1 } },
      streams: { 'bot:events': { entries: [['1-0', ['e', '{"a":"b,}]"}']]], at: 1 } },
      hashes: {
        'bot:c:chat:1': { at: 5, h: { h: 'pod-a', f: '17', 'q\\"x': 'a "quoted", {braced} [value]' }, ttl: -1 },
        'bot:c:chat:é\u2028': { at: 6, h: { note: 'ünïcödé ✓ \u0001' } },
        'bot:c:chat:\\': { at: 7, e: 'WRONGTYPE' },
        'bot:cp:chat:1': { at: 8, h: { d: '{"deep":[[[1]]]}' }, omitted: { d: 12 }, fields: ['d'] },
      },
      nodes: [
        {
          name: '127.0.0.1:6379',
          keys: ['bot:c:chat:1', 'bot:c:chat:é\u2028', 'bot:c:chat:\\', 'bot:"x"'],
          probes: { info: { value: 'x' } },
        },
        { name: 'n2', keys: [] },
      ],
    },
    capture: { startedAtMs: 1, finishedAtMs: 2, tookMs: 1, keys: 4, records: 4, includeState: false, partial: null },
  }
}

function scan(text: string | Buffer, piece: number, limit?: number) {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text)
  const s = snapshotScanner(limit)
  for (let i = 0; i < bytes.length; i += piece) s.push(bytes.subarray(i, i + piece))
  return scannedSnapshot(s)
}

/**
 * A snapshot read back as plain values: its records are held packed (a read-only view of them, and
 * the masters' key lists), which JSON writes as the objects and lists they stand for.
 */
const plain = (s: unknown): unknown => JSON.parse(JSON.stringify(s))

describe('SnapshotScanner', () => {
  it('decodes a document cut at every byte as JSON.parse decodes it whole', () => {
    const text = JSON.stringify(doc())
    const whole = JSON.parse(text) as { records: { hashes: Record<string, unknown> } }
    for (const piece of [1, 2, 3, 7, 64, text.length]) {
      const out = scan(text, piece)
      expect(plain(out)).toEqual(whole)
      // Read one by one, as the commands read them.
      for (const [k, rec] of Object.entries(whole.records.hashes)) expect(out.records.hashes[k]).toEqual(rec)
    }
  })

  it('reads a document with whitespace anywhere (as another tool may write it)', () => {
    const text = JSON.stringify(doc(), null, 2)
    expect(plain(scan(text, 5))).toEqual(JSON.parse(text))
  })

  it('keys that JSON escapes are decoded, and a key split between pieces is whole', () => {
    const text = JSON.stringify(doc())
    const out = scan(text, 1)
    expect(Object.keys(out.records.hashes)).toEqual(['bot:c:chat:1', 'bot:c:chat:é\u2028', 'bot:c:chat:\\', 'bot:cp:chat:1'])
    expect([...out.records.nodes[0]!.keys!]).toEqual(['bot:c:chat:1', 'bot:c:chat:é\u2028', 'bot:c:chat:\\', 'bot:"x"'])
    expect([...out.records.nodes[1]!.keys!]).toEqual([])
  })

  const broken: Array<[string, (t: string) => string, RegExp]> = [
    ['a trailing comma among the records', (t) => t.replace('"fields":["d"]}}', '"fields":["d"]},}'), /is not valid JSON/],
    ['a record without its colon', (t) => t.replace('"bot:c:chat:1":{', '"bot:c:chat:1" {'), /is not valid JSON/],
    ['a record cut short', (t) => t.replace('"ttl":-1}', '"ttl":}'), /records\.hashes\["bot:c:chat:1"\] is not valid JSON/],
    [
      'a record that is a number',
      (t) => t.replace(/"bot:cp:chat:1":\{[^}]*\{[^}]*\}[^}]*\}/, '"bot:cp:chat:1":5'),
      /"bot:cp:chat:1"\] is not a record/,
    ],
    ['a field that is a number', (t) => t.replace('"f":"17"', '"f":17'), /"bot:c:chat:1"\]\.h is not a hash of text fields/],
    ['a key name that is a number', (t) => t.replace('"keys":[]', '"keys":[5]'), /keys is not a list of names/],
    ['a trailing comma among the names', (t) => t.replace('"keys":[]', '"keys":["a",]'), /keys is not a list of names/],
    ['a document cut short', (t) => t.slice(0, t.indexOf('"nodes"')), /is not valid JSON/],
    ['a raw control character in a key', (t) => t.replace('bot:c:chat:1"', 'bot:c:chat:1\u0007"'), /is not valid JSON/],
  ]
  for (const [what, edit, error] of broken)
    it(`refuses ${what}, wherever the pieces are cut`, () => {
      const text = edit(JSON.stringify(doc()))
      expect(text).not.toBe(JSON.stringify(doc()))
      for (const piece of [1, 3, text.length]) expect(() => scan(text, piece)).toThrow(error)
    })

  it('refuses nesting past 64 levels inside a record and outside one, without recursion', () => {
    const d = doc() as { records: { hashes: Record<string, unknown> } }
    const inRecord = JSON.stringify(d).replace('"ttl":-1', `"x":${'['.repeat(100_000)}${']'.repeat(100_000)}`)
    expect(() => scan(inRecord, 4096)).toThrow('not a snapshot: the JSON is nested deeper than 64 levels')
    const outside = JSON.stringify({ ...doc(), extra: 0 }).replace('"extra":0', `"extra":${'['.repeat(100_000)}${']'.repeat(100_000)}`)
    expect(() => scan(outside, 4096)).toThrow('not a snapshot: the JSON is nested deeper than 64 levels')
  })

  it('refuses a record larger than 8 MiB, and a document past the limit it was given', () => {
    const big = JSON.stringify(doc()).replace('"ttl":-1', `"x":"${'a'.repeat(9 * 1024 * 1024)}"`)
    expect(() => scan(big, 65536)).toThrow(/a record is larger than 8388608 bytes/)
    expect(() => scan(big, big.length)).toThrow(/a record is larger than 8388608 bytes/)
    const text = JSON.stringify(doc())
    expect(() => scan(text, 100, 1000)).toThrow(snapshotTooLarge(1000))
    expect(() => scan(' '.repeat(5000) + text, 100, 1000)).toThrow(/not read: larger than 0 MiB decompressed/)
  })

  it('reads what the heap holds: the limit follows the heap, and says how to raise it', () => {
    const limit = snapshotReadLimit()
    expect(limit).toBeGreaterThan(0)
    expect(limit).toBeLessThanOrEqual(SNAPSHOT_MAX_BYTES)
    expect(snapshotTooLarge(64 * 1024 * 1024)).toBe(
      "not read: larger than 64 MiB decompressed (the most this process's heap holds: NODE_OPTIONS=--max-old-space-size=<MB> raises it)",
    )
    expect(snapshotTooLarge(SNAPSHOT_MAX_BYTES)).toBe('not read: larger than 2048 MiB decompressed (the most a snapshot may hold)')
  })
})
