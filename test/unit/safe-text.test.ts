import { describe, expect, it } from 'vitest'
import { clip, columns, fromVisible, jsonText, safeCopy, showNames, terminalSafe, visible } from '../../commands/output/safe-text.js'

describe('the output sanitizer', () => {
  it('shows controls, escape sequences, bidi, invisible characters and bytes that are not UTF-8 as escapes', () => {
    expect(visible('chat:\u001b]0;pwned\u0007\u001b[2J')).toBe('chat:\\x1b]0;pwned\\x07\\x1b[2J')
    expect(visible('a\u202eb\u2066c\u200bd\ufeffe\u00a0f')).toBe('a\\u202eb\\u2066c\\u200bd\\ufeffe\\u00a0f')
    expect(visible('\u009b2J\u0085\u007f\u0000\r\n\t')).toBe('\\u009b2J\\u0085\\x7f\\x00\\r\\n\\t')
    expect(visible('\udcff\udc80')).toBe('\\xff\\x80')
    expect(visible('\ud800')).toBe('\\ud800')
    expect(visible('tag\u{e0041}')).toBe('tag\\u{e0041}')
    expect(visible('a\\b')).toBe('a\\\\b')
    // printable text of any script stays as it is
    expect(visible('chat:42 é 中文 🙂 👍🏽')).toBe('chat:42 é 中文 🙂 👍🏽')
  })

  it('reads the shown form back into the exact string', () => {
    const cases = [
      'chat:\u001b]0;pwned\u0007',
      'a\u202eb\u200b',
      '\udcff\udcfe',
      'back\\slash\\x41',
      '\\',
      'x\\u202e',
      '\u{e0041}🙂',
      '\r\n\t\u0000\u007f\u0085',
    ]
    for (const s of cases) expect(fromVisible(visible(s))).toBe(s)
    // Hand-typed: a backslash that starts no escape stays a backslash.
    expect(fromVisible('C:\\path')).toBe('C:\\path')
    expect(fromVisible('\\x41\\u00e9\\u{1f642}')).toBe('Aé🙂')
  })

  it('round-trips random strings', () => {
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    for (let n = 0; n < 500; n++) {
      let s = ''
      for (let i = 0; i < 12; i++) s += String.fromCharCode(Math.floor(next() * (next() < 0.5 ? 0x100 : 0x10000)))
      const shown = visible(s)
      expect(fromVisible(shown)).toBe(s)
      expect(terminalSafe(shown, false)).toBe(shown)
    }
  })

  it('cuts long shown strings with a visible marker, never inside an escape', () => {
    const long = visible(`k:${'x'.repeat(8000)}`)
    const cut = clip(long, 64)
    expect(cut).toMatch(/^k:x+…\[\+\d+\]$/)
    expect(cut.length).toBeLessThanOrEqual(64)
    expect(clip('short', 64)).toBe('short')
    const esc = clip(visible(`${'a'.repeat(50)}\u001b\u001b\u001b\u001b`), 60)
    expect(esc).not.toMatch(/\\x1?…/)
    expect(columns('中文🙂a')).toBe(7)
  })

  it('copies data with every string shown, numbers and structure kept', () => {
    const v = { key: 'a\u001bb', n: 3, list: ['\u202e', null], nested: { ok: true, s: '\\' } }
    expect(safeCopy(v)).toEqual({ key: 'a\\x1bb', n: 3, list: ['\\u202e', null], nested: { ok: true, s: '\\\\' } })
    expect(v.key).toBe('a\u001bb')
  })

  it('the terminal guard keeps newlines, tabs and SGR colours (when colouring) and nothing else', () => {
    expect(terminalSafe('\u001b[31mred\u001b[39m\n\tx')).toBe('\u001b[31mred\u001b[39m\n\tx')
    expect(terminalSafe('\u001b[31mred', false)).toBe('\\u001b[31mred')
    expect(terminalSafe('\u001b]0;t\u0007\u001b[2J\r\u202e')).toBe('\\u001b]0;t\\u0007\\u001b[2J\\r\\u202e')
    // In JSON only characters inside strings are rewritten, into the same value.
    const json = JSON.stringify({ k: 'a\u202e\u0085\u007f\u{e0041}' })
    expect(JSON.parse(terminalSafe(json))).toEqual({ k: 'a\u202e\u0085\u007f\u{e0041}' })
    expect(jsonText({ a: '\u202e' })).toBe('{"a":"\\u202e"}')
  })

  it('shows the outside strings a composed line quotes', () => {
    expect(showNames('release the turn of chat:\u001b[2J (held by p\u202e)', ['chat:\u001b[2J'], { holder: 'p\u202e' })).toBe(
      'release the turn of chat:\\x1b[2J (held by p\\u202e)',
    )
    expect(showNames('plain chat:42', ['chat:42'])).toBe('plain chat:42')
  })
})
