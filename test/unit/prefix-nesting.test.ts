/**
 * One prefix never reads another's keys as its own. A prefix nested on a reserved segment (`shop:c`,
 * `shop:cp`, `shop:eu:l`, `shop:events`) is refused, with a line that says why and what to use; every
 * prefix still accepted owns its key names alone, in both layouts (checked over every pair of a small
 * family of prefixes); scan patterns never widen to `<prefix>:*`.
 */
import { describe, expect, it } from 'vitest'
import { KeyLayout, RESERVED_SEGMENTS, validatePrefix, type Layout } from '../../src/keys.js'
import { InvalidIdError } from '../../src/errors/index.js'
import { CoordinationAdmin, RedisCoordinator, RedisStore } from '../../src/index.js'

const refusal = (p: string): string => {
  try {
    validatePrefix(p)
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidIdError)
    return (err as Error).message
  }
  throw new Error(`prefix ${p} was accepted`)
}

describe('validatePrefix: a reserved segment after the first is refused', () => {
  it('accepts prefixes whose later segments name no kind of key', () => {
    for (const p of ['shop', 'shop:eu', 'shop-c', 'shop:cx', 'shop:eu:cpu', 'shop:C', 'c', 'cp:shop', 'events', 'a:b:c-d', 'shop:'])
      expect(validatePrefix(p)).toBe(p)
  })

  it('refuses every kind segment and fixed name after the first segment, at any depth', () => {
    expect(RESERVED_SEGMENTS).toEqual(['c', 'q', 'cp', 'ho', 'l', 'k', 'r', 'replicas', 'schema', 'events', 'wake'])
    for (const s of RESERVED_SEGMENTS) {
      for (const p of [`shop:${s}`, `shop:eu:${s}`, `shop:${s}:eu`, `shop::${s}`]) expect(refusal(p), p).toContain(`"${s}"`)
    }
  })

  it('the line says why (the parent that would read it) and what to use instead, which is accepted', () => {
    expect(refusal('shop:c')).toBe(
      'prefix "shop:c" is refused: its segment "c" names a kind of key (after the first segment none of ' +
        'c, q, cp, ho, l, k, r, replicas, schema, events, wake may appear), so prefix "shop" would read its keys as its own; ' +
        'use a prefix without it, e.g. "shop-c" (replicas that ran on it: stop them and start them on the new prefix; ' +
        'state under the old one is not carried over)',
    )
    expect(refusal('shop:eu:cp:x')).toMatch(/prefix "shop:eu" would read .* e\.g\. "shop:eu-cp:x"/)
    for (const p of ['shop:c', 'shop:eu:cp:x', 'shop:c:l', 'a::r']) {
      const instead = /e\.g\. "([^"]+)"/.exec(refusal(p))![1]!
      expect(validatePrefix(instead)).toBe(instead)
    }
    expect(refusal('shop:c')).not.toMatch(/\n/)
  })

  it('the library refuses such a prefix at construction, before any connection', () => {
    const url = 'redis://127.0.0.1:1'
    expect(() => new RedisStore({ url, prefix: 'shop:cp' })).toThrow(InvalidIdError)
    expect(() => new RedisCoordinator({ url, prefix: 'shop:c', layout: 'cluster' })).toThrow(/prefix "shop:c" is refused/)
    expect(() => new CoordinationAdmin({ url, prefix: 'shop:l' })).toThrow(InvalidIdError)
    expect(() => new KeyLayout('shop:r', 'standalone')).toThrow(InvalidIdError)
  })
})

/** Every key name a prefix writes, in one layout (ids chosen to look like a nested prefix's keys). */
function namesOf(keys: KeyLayout): string[] {
  const out: string[] = [keys.schema, keys.events, keys.replicaIndex]
  for (const id of ['chat:1', 'c:chat:1', 'cp:x', 'eu:c:1', 'schema', 'events', 'replicas']) {
    const c = keys.chat(id)
    out.push(...[c.state, c.queue, c.checkpoint, c.handover].map(String))
    out.push(String(keys.lead(id)), String(keys.lock(id)), String(keys.replica(id)))
  }
  return out
}

describe('an accepted prefix owns its key names alone', () => {
  // Every prefix of one to three segments drawn from these, that validatePrefix accepts.
  const parts = ['shop', 'eu', 'c', 'cp', 'replicas', '']
  const family: string[] = []
  for (const a of parts)
    for (const b of [null, ...parts])
      for (const c of b === null ? [null] : [null, ...parts]) {
        const p = [a, b, c].filter((s) => s !== null).join(':')
        try {
          family.push(validatePrefix(p))
        } catch {
          // refused
        }
      }

  it('no key of one parses or counts as another\u2019s, in either layout', () => {
    expect(family).toContain('shop:eu')
    expect(family).not.toContain('shop:c')
    const layouts: Layout[] = ['standalone', 'cluster']
    const all = family.flatMap((p) => layouts.map((l) => new KeyLayout(p, l)))
    const names = new Map(all.map((k) => [k, namesOf(k)]))
    const wrong: string[] = []
    let checked = 0
    for (const reader of all) {
      for (const writer of all) {
        if (writer.prefix === reader.prefix) continue
        for (const name of names.get(writer)!) {
          checked++
          if (reader.parse(name) !== null) wrong.push(`${reader.prefix} (${reader.layout}) parses ${writer.prefix}'s ${name}`)
          if (reader.owns(name) || reader.owns(Buffer.from(name))) wrong.push(`${reader.prefix} owns ${writer.prefix}'s ${name}`)
        }
      }
      for (const name of names.get(reader)!) if (!reader.owns(name)) wrong.push(`${reader.prefix} does not own its ${name}`)
    }
    expect(wrong).toEqual([])
    expect(checked).toBeGreaterThan(100_000)
  })

  it('scan patterns name the prefix\u2019s kinds, never every key under it', () => {
    const keys = new KeyLayout('shop', 'standalone')
    expect(keys.scanPatternOf([])).toBe('shop:[cqhlkr]*')
    expect(keys.scanPatternOf(['checkpoint', 'handover', 'replica'])).toBe('shop:[chr][po:]*')
    // Chats, leads, locks and markers (doctor's walk): the checkpoints are not returned to it.
    expect(keys.scanPatternOf(['chat', 'lead', 'lock', 'handover'])).toBe('shop:[clkh][:o]*')
    expect(keys.scanPatternOf(['chat', 'checkpoint'])).toBe('shop:[c][:p]*')
    expect(keys.scanPatternOf(['chat', 'lead', 'lock'])).toBe('shop:[clk]:*')
    expect(keys.scanPatternOf(['checkpoint'])).toBe('shop:cp:*')
  })
})
