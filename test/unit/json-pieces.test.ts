/** A listing's JSON document written in pieces is byte for byte the document written whole. */
import { describe, expect, it } from 'vitest'
import { jsonOut, jsonPieces } from '../../commands/output/format.js'

const row = (i: number) => ({
  kind: 'chat',
  key: `chat:${i}\u202e"\\\n`,
  replicaId: i % 3 ? `pod-${i}` : null,
  fence: i * 1.5,
  nested: { a: [i, { b: null }], empty: [], none: {} },
  gone: undefined,
  alive: i % 2 === 0,
})

describe('jsonPieces', () => {
  for (const n of [0, 1, 499, 500, 501, 1000, 1234]) {
    it(`${n} rows: the same bytes as jsonOut, every piece but the last ending with a newline`, () => {
      const body = {
        nowMs: 1,
        scanned: n,
        truncated: false,
        corrupt: [{ rawKey: 'k', error: 'e' }],
        skipped: undefined,
        leases: Array.from({ length: n }, (_, i) => row(i)),
      }
      const pieces = [...jsonPieces('leases', body)]
      expect(pieces.join('')).toBe(jsonOut('leases', body))
      for (const p of pieces.slice(0, -1)) expect(p.endsWith('\n')).toBe(true)
      expect(pieces.length).toBe(n > 500 ? Math.ceil(n / 500) + 1 : 1)
    })
  }

  it('several long arrays, and one last', () => {
    const body = { a: Array.from({ length: 700 }, (_, i) => i), b: 'x', c: Array.from({ length: 501 }, (_, i) => [i]) }
    expect([...jsonPieces('k', body)].join('')).toBe(jsonOut('k', body))
  })
})
