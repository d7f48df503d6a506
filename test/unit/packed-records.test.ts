/**
 * The packed records of a snapshot read back (src/state/packed-records.ts): every record decodes to
 * what JSON.parse made of it, whatever its strings and numbers, past the intern and shape caps and
 * the arena's chunk size.
 */
import { describe, expect, it } from 'vitest'
import { PackedHashRecords, PackedNames } from '../../src/state/packed-records.js'
import type { HashRecord } from '../../src/state/records.js'

/** Deep equality that tells -0 from 0 and own `__proto__` properties apart (toStrictEqual does not). */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' || typeof b === 'number') return Object.is(a, b)
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false
  const da = Object.getOwnPropertyDescriptors(a)
  const db = Object.getOwnPropertyDescriptors(b)
  return ka.every((k) => same(da[k]!.value, db[k]!.value))
}

function roundTrip(records: Array<[string, HashRecord]>): PackedHashRecords {
  const p = new PackedHashRecords()
  for (const [k, r] of records) p.set(k, r)
  for (const [k, r] of records) {
    const back = p.get(k)
    if (!same(back, r)) expect({ key: k, back }).toEqual({ key: k, back: r })
  }
  return p
}

/** A record as JSON.parse makes it from its text. */
const parsed = (json: string) => JSON.parse(json) as HashRecord

describe('PackedHashRecords', () => {
  it('gives back every string and number exactly: integers and what only looks like one, -0, floats, surrogates', () => {
    const values = [
      '0',
      '1',
      '-1',
      '-0',
      '007',
      '+5',
      '1700000000000001',
      '9007199254740991',
      '9007199254740992',
      '99999999999999999999',
      '1e3',
      '1.5',
      '',
      ' ',
      'scale-replica-0',
      'é\u2028',
      '\ud83d\ude00',
      'lone \udc80 byte',
      '\ud800',
      'x'.repeat(65),
      'y'.repeat(100_000),
      'nul\u0000inside',
    ]
    const records: Array<[string, HashRecord]> = values.map((v, i) => [`bot:c:chat:${i}`, { h: { n: v, [v]: 'as a name' }, at: i }])
    records.push(
      ['bot:c:neg', parsed('{"at":-0,"ttl":-1,"h":{"f":"1"}}')],
      ['bot:c:float', { at: 1.5, ttl: 1e300, listed: { size: -3, extra: Number.MAX_SAFE_INTEGER } }],
      ['bot:c:big', { at: 2 ** 60, ttl: -(2 ** 60) }],
      ['bot:c:error', { e: 'WRONGTYPE Operation against a key holding the wrong kind of value', at: 5 }],
      ['bot:cp:1', { h: { rev: '3' }, at: 7, ttl: 86_400_000, fields: ['rev', 'd'], omitted: { d: 120, 'x\u0000y': 0 } }],
      ['bot:c:empty', { h: {}, at: 8 }],
    )
    roundTrip(records)
  })

  it('keeps __proto__ an own field, as JSON.parse does, in a hash and among the omitted sizes', () => {
    const rec = parsed('{"h":{"__proto__":"1","a":"2"},"omitted":{"__proto__":3},"at":1}')
    const p = roundTrip([['k', rec]])
    const back = p.get('k')!
    expect(Object.keys(back.h!)).toEqual(['__proto__', 'a'])
    expect(Object.getPrototypeOf(back.h)).toBe(Object.prototype)
    expect(back.omitted!['__proto__']).toBe(3)
  })

  it('past the caps (distinct short values, lists of names) and across chunks, every record still decodes', () => {
    const records: Array<[string, HashRecord]> = []
    // 70,000 distinct short values fill the intern table; 5,000 distinct lists of names pass the shapes'.
    for (let i = 0; i < 70_000; i++) records.push([`a:${i}`, { h: { [`t:${i % 5000}`]: `v${i}`, same: 'x' }, at: i }])
    // Records of 3 MiB: one does not fit in a chunk's room left, one is larger than half a chunk.
    for (let i = 0; i < 6; i++) records.push([`big:${i}`, { h: { d: String(i).repeat(3 * 1024 * 1024) }, at: i }])
    records.push(['huge', { h: { d: 'z'.repeat(20 * 1024 * 1024) }, at: 1 }])
    const p = roundTrip(records)
    expect(p.size).toBe(records.length)
  })

  it('a key set again holds its last record, once', () => {
    const p = new PackedHashRecords()
    p.set('k', { h: { a: '1' }, at: 1 })
    p.set('k', { e: 'gone', at: 2 })
    expect(p.get('k')).toEqual({ e: 'gone', at: 2 })
    expect(p.size).toBe(1)
    expect(p.keys()).toEqual(['k'])
    expect(p.get('other')).toBeUndefined()
  })

  it('finds keys of every kind of character, and lists names as records or apart, in order', () => {
    const keys = ['bot:c:chat:1', 'bot:c:é', 'bot:c:\u4e2d\u6587', 'bot:c:\udc80raw', 'bot:c:\ud83d\ude00', 'bot:c:', '']
    const p = new PackedHashRecords()
    keys.forEach((k, i) => p.set(k, { at: i }))
    keys.forEach((k, i) => expect(p.get(k)).toEqual({ at: i }))
    expect(p.keys()).toEqual(keys)
    expect(p.get('bot:c:chat:2')).toBeUndefined()
    expect(p.get('bot:c:\udc81raw')).toBeUndefined()
    const names = new PackedNames(p)
    const listed = ['bot:q:chat:1', ...keys, 'bot:q:\udc80', 'bot:c:chat:1']
    for (const n of listed) names.push(n)
    expect(names.length).toBe(listed.length)
    expect([...names]).toEqual(listed)
    expect(names.at(3)).toBe(keys[2])
    expect(JSON.parse(JSON.stringify({ keys: names }))).toEqual({ keys: listed })
  })

  it('keeps finding every key as its index grows (100,000 keys, with colliding hashes probed past)', () => {
    const p = new PackedHashRecords()
    for (let i = 0; i < 100_000; i++) p.set(`bot:c:chat:${i}`, { at: i })
    for (let i = 0; i < 100_000; i += 7) expect(p.get(`bot:c:chat:${i}`)!.at).toBe(i)
    expect(p.has('bot:c:chat:100000')).toBe(false)
    expect(p.size).toBe(100_000)
  })

  it('shows itself as the plain object the records were, read only', () => {
    const records: Record<string, HashRecord> = { 'bot:c:1': { h: { f: '1' }, at: 1 }, 'bot:cp:1': { h: { rev: '2' }, at: 2, ttl: -1 } }
    const p = new PackedHashRecords()
    for (const [k, r] of Object.entries(records)) p.set(k, r)
    const view = p.asObject()
    expect(view).toEqual(records)
    expect(Object.keys(view)).toEqual(['bot:c:1', 'bot:cp:1'])
    expect('bot:c:1' in view).toBe(true)
    expect(view['bot:c:2']).toBeUndefined()
    expect(JSON.parse(JSON.stringify(view))).toEqual(records)
    expect(() => {
      view['bot:c:1'] = { at: 3 }
    }).toThrow(/read only/)
    expect(() => delete view['bot:c:1']).toThrow(/read only/)
  })
})
