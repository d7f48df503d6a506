/**
 * Ids as bytes. Redis keys are binary; the library's ids are JavaScript strings. A byte that is not
 * part of valid UTF-8 is carried in a string as one lone surrogate U+DC80–U+DCFF (the byte + 0xDC00,
 * Python's "surrogateescape"), so any key read from Redis becomes a string and turns back into the
 * same bytes. Any other lone surrogate of a caller's string is written as its 3-byte (WTF-8) form,
 * so distinct ids never silently become the same U+FFFD key.
 *
 * A key another tool wrote with a raw control byte (0x00–0x1F, 0x7F) in its name is not one the
 * library writes: the library writes that character of an id escaped (`%01`, ../keys.ts). Read from
 * Redis (keyNameFromBytes), the raw byte is carried the same way, as U+DC00 + byte, so the id turns
 * back into the same raw byte and the key can be named again (`chat inspect 'chat:\udc01'`).
 */

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Does this string hold a lone surrogate (a byte that is not UTF-8, or a broken UTF-16 pair)? */
export function hasLoneSurrogate(s: string): boolean {
  return LONE.test(s)
}

/** U+DC00–U+DC1F, U+DC7F: a raw control byte of a key name (see above). */
const isRawControl = (c: number) => (c >= 0xdc00 && c <= 0xdc1f) || c === 0xdc7f

/** The bytes of an id: UTF-8, with U+DC80–U+DCFF (and U+DC00–U+DC1F, U+DC7F) as the byte they carry. */
export function idToBytes(s: string): Buffer {
  if (!hasLoneSurrogate(s)) return Buffer.from(s, 'utf8')
  const out: number[] = []
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    const next = s.charCodeAt(i + 1)
    if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00)
      out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63))
      i++
    } else if ((c >= 0xdc80 && c <= 0xdcff) || isRawControl(c)) out.push(c - 0xdc00)
    else if (c < 0x80) out.push(c)
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63))
    else out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63))
  }
  return Buffer.from(out)
}

/** Length of the valid UTF-8 sequence at `i`, or 0 when the byte there does not start one. */
function sequenceAt(b: Buffer, i: number): number {
  const c = b[i]!
  const cont = (j: number, lo = 0x80, hi = 0xbf) => i + j < b.length && b[i + j]! >= lo && b[i + j]! <= hi
  if (c < 0x80) return 1
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0
  if (c === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0
  if (c === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0 // no UTF-16 surrogates
  if (c >= 0xe1 && c <= 0xef) return cont(1) && cont(2) ? 3 : 0
  if (c === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0
  if (c === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0
  return 0
}

/** The string of an id's bytes: UTF-8 where it is, each other byte as U+DC00 + byte. */
export function idFromBytes(b: Buffer): string {
  const text = b.toString('utf8')
  if (!text.includes('\ufffd')) return text
  let out = ''
  let i = 0
  while (i < b.length) {
    const n = sequenceAt(b, i)
    if (n === 0) {
      out += String.fromCharCode(0xdc00 + b[i]!)
      i++
    } else {
      out += b.toString('utf8', i, i + n)
      i += n
    }
  }
  return out
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g
// eslint-disable-next-line no-control-regex
const HAS_CONTROL = /[\u0000-\u001f\u007f]/

/**
 * The string of a Redis key's name as SCAN returns it: idFromBytes, with each raw control byte as
 * U+DC00 + byte, so that the id parsed from it names this key again (not the escaped `%01` form).
 */
export function keyNameFromBytes(b: Buffer): string {
  const s = idFromBytes(b)
  return HAS_CONTROL.test(s) ? s.replace(CONTROL, (c) => String.fromCharCode(0xdc00 + c.charCodeAt(0))) : s
}

/** A key name for people and error messages: the string, or its bytes as an id string. */
export function keyText(k: string | Buffer): string {
  return typeof k === 'string' ? k : idFromBytes(k)
}

/** A key as ioredis takes it: the string itself, or its bytes when it carries bytes that are not UTF-8. */
export function redisKey(s: string): string | Buffer {
  return hasLoneSurrogate(s) ? idToBytes(s) : s
}

/** Do these bytes start with `head` (and go on past it)? Byte by byte: a head is a few bytes, Buffer.compare costs more. */
export function startsWithBytes(bytes: Buffer, head: Buffer): boolean {
  if (bytes.length <= head.length) return false
  for (let i = 0; i < head.length; i++) if (bytes[i] !== head[i]) return false
  return true
}
