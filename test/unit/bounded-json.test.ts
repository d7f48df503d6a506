/** The bounded JSON decoder every Redis value goes through: depth and size, linear, strings skipped. */
import { describe, expect, it } from 'vitest'
import { JSON_MAX_DEPTH, jsonLimitProblem, parseBoundedJson } from '../../src/wire/json.js'

describe('parseBoundedJson', () => {
  it('parses JSON within the limits, brackets inside strings not counted', () => {
    const deepest = '['.repeat(JSON_MAX_DEPTH) + ']'.repeat(JSON_MAX_DEPTH)
    expect(parseBoundedJson(deepest)).toBeInstanceOf(Array)
    expect(parseBoundedJson(JSON.stringify({ s: '[{'.repeat(500) + '\\"[' }))).toEqual({ s: '[{'.repeat(500) + '\\"[' })
  })
  it('refuses one level deeper, and 100,000 deep, without recursion', () => {
    const d = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)
    expect(() => parseBoundedJson(d(JSON_MAX_DEPTH + 1))).toThrow('is nested deeper than 64 levels')
    expect(() => parseBoundedJson('['.repeat(100_000) + ']'.repeat(100_000))).toThrow('is nested deeper than 64 levels')
  })
  it('refuses text larger than the limit (bytes, not characters) and text that is not JSON', () => {
    expect(jsonLimitProblem(JSON.stringify('é'.repeat(600)), { maxBytes: 1000 })).toBe('is larger than 1000 bytes')
    expect(jsonLimitProblem(JSON.stringify('e'.repeat(600)), { maxBytes: 1000 })).toBeNull()
    expect(() => parseBoundedJson('{broken')).toThrow('is not valid JSON')
  })
})
