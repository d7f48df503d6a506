import { describe, expect, it } from 'vitest'
import { decodeId, encodeId, KeyLayout } from '../../src/keys.js'
import { keyText } from '../../src/bytes.js'
import { InvalidIdError } from '../../src/errors/index.js'

/** Redis Cluster's hash tag: the part between the first { and the next }, when non-empty. */
function hashTag(key: string): string {
  const open = key.indexOf('{')
  if (open < 0) return key
  const close = key.indexOf('}', open + 1)
  if (close < 0 || close === open + 1) return key
  return key.slice(open + 1, close)
}

const odd = ['chat:42', '{x}', 'a}b{c', '}{', 'with spaces', 'ñandú 🐦', '%7B', '100%', 'line\nbreak', 'x'.repeat(1024), ':', '::c:']

describe('key layout', () => {
  it('round-trips every id through encode/decode', () => {
    for (const id of odd) expect(decodeId(encodeId(id))).toBe(id)
  })

  it('encoded ids never contain a brace', () => {
    for (const id of odd) expect(encodeId(id)).not.toMatch(/[{}]/)
  })

  it('cluster layout: all keys of one chat share one hash tag, and odd ids cannot change it', () => {
    const keys = new KeyLayout('shop', 'cluster')
    for (const id of odd) {
      const k = keys.chat(id)
      const tags = new Set([k.state, k.queue, k.checkpoint, k.handover].map((x) => hashTag(keyText(x))))
      expect(tags.size).toBe(1)
      expect(decodeId([...tags][0]!)).toBe(id)
    }
  })

  it('standalone layout uses no hash tags', () => {
    const keys = new KeyLayout('shop', 'standalone')
    expect(keys.chat('chat:42').state).toBe('shop:c:chat:42')
    expect(keys.chat('{x}').state).toBe('shop:c:%7Bx%7D')
    expect(keys.lead('provider:wa')).toBe('shop:l:provider:wa')
  })

  it('parses raw keys back to kind and id, in both layouts, and rejects other layouts and prefixes', () => {
    for (const layout of ['standalone', 'cluster'] as const) {
      const keys = new KeyLayout('shop:eu', layout)
      for (const id of odd) {
        expect(keys.parse(keys.chat(id).state)).toEqual({ kind: 'chat', id })
        expect(keys.parse(keys.chat(id).queue)).toEqual({ kind: 'queue', id })
        expect(keys.parse(keys.lead(id))).toEqual({ kind: 'lead', id })
        expect(keys.parse(keys.replica(id))).toEqual({ kind: 'replica', id })
      }
      const other = new KeyLayout('shop:eu', layout === 'cluster' ? 'standalone' : 'cluster')
      expect(keys.parse(other.chat('abc').state)).toBeNull()
      expect(keys.parse('shop:c:x')).toBeNull()
      expect(keys.parse('shop:eu:zz:x')).toBeNull()
    }
  })

  it('an id with colons cannot collide with another kind of key', () => {
    const keys = new KeyLayout('p', 'standalone')
    const all = new Set<string>()
    for (const id of ['a', 'a:q', 'q:a', 'c:a', 'l:a']) {
      const k = keys.chat(id)
      for (const v of [k.state, k.queue, k.checkpoint, k.handover, keys.lead(id), keys.lock(id), keys.replica(id)]) {
        expect(all.has(keyText(v))).toBe(false)
        all.add(keyText(v))
      }
    }
  })

  it('refuses empty ids, empty prefixes and prefixes that could break a pattern or a tag', () => {
    const keys = new KeyLayout('p', 'cluster')
    expect(() => keys.chat('')).toThrow(InvalidIdError)
    expect(() => keys.lead('x'.repeat(9000))).toThrow(InvalidIdError)
    for (const bad of ['', 'a b', 'a{b}', 'a*', 'a?', 'a[b]']) expect(() => new KeyLayout(bad, 'standalone')).toThrow(InvalidIdError)
    expect(() => new KeyLayout('p', 'sharded' as never)).toThrow(InvalidIdError)
  })
})
