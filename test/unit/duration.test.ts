import { describe, expect, it } from 'vitest'
import { formatDuration, parseDuration } from '../../src/duration.js'
import { ConfigurationError } from '../../src/errors/index.js'

describe('durations', () => {
  it('reads numbers and unit strings', () => {
    expect(parseDuration(250)).toBe(250)
    expect(parseDuration('15s')).toBe(15_000)
    expect(parseDuration('2m')).toBe(120_000)
    expect(parseDuration('1.5s')).toBe(1500)
    expect(parseDuration('300ms')).toBe(300)
    expect(parseDuration('1h')).toBe(3_600_000)
    expect(parseDuration('42')).toBe(42)
  })
  it('refuses what it cannot read', () => {
    for (const bad of ['', 'soon', '-1s', '1y', '1 2s']) expect(() => parseDuration(bad)).toThrow(ConfigurationError)
    expect(() => parseDuration(-5)).toThrow(ConfigurationError)
    expect(() => parseDuration(Number.NaN)).toThrow(ConfigurationError)
  })
  it('formats short relative times', () => {
    expect(formatDuration(850)).toBe('850ms')
    expect(formatDuration(12_000)).toBe('12s')
    expect(formatDuration(12_345)).toBe('12.3s')
    expect(formatDuration(184_000)).toBe('3m4s')
    expect(formatDuration(7_500_000)).toBe('2h5m')
    expect(formatDuration(-1500)).toBe('-1.5s')
  })
  it('shows a number that is not a duration (a corrupt value) as -', () => {
    for (const v of [NaN, Infinity, -1.1e300, 2 ** 53 + 2]) expect(formatDuration(v)).toBe('-')
    expect(formatDuration(2 ** 53 - 1)).toMatch(/^\d+d\d*h?$/)
  })
})
