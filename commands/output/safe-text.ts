/**
 * The one output sanitizer: how strings that came from Redis or from another process (chat keys,
 * replica ids, hosts, flow and step names, event details, error messages that quote them) reach an
 * operator's terminal.
 *
 * - `visible(s)`: the shown form of one outside string. Control characters (C0, DEL, C1), bidi
 *   controls, zero-width and other invisible characters, spaces other than U+0020, and bytes that
 *   are not UTF-8 are written as escapes (`\x1b`, `\u202e`, `\xff`), and `\` itself as `\\`, so the
 *   shown form is unambiguous: `fromVisible()` turns it back into the exact string, which is how an
 *   operator passes a key shown in a listing back to a command.
 * - `clip(s, max)`: a shown string cut to `max` columns with a visible marker (tables, dashboard).
 * - `safeCopy(v)`: a value with every string in it made `visible` (and clipped): what listings and
 *   inspect views print, so no column or block handles raw outside text.
 * - `terminalSafe(text)`: the last guard on stdout and stderr (`guardTerminal`). It lets through
 *   newlines, tabs and the tool's own colours (SGR sequences) and writes every other control or
 *   invisible character as `\uXXXX`. It does not escape `\`, so the text the tool composed stays as
 *   it is; in JSON it only rewrites characters inside strings into their `\uXXXX` form: the same value.
 *
 * Bytes that are not UTF-8 travel inside the tool as lone surrogates U+DC80–U+DCFF (one per byte,
 * as Python's "surrogateescape"): `bytesToId`/`idToBytes` in the library.
 */

/** Invisible or layout-changing characters beyond the control ranges: shown as `\u` escapes. */
// Cf: format characters (bidi controls U+202A–U+202E, U+2066–U+2069, U+061C, U+200E/F, zero width
// U+200B–U+200D, U+2060–U+2064, BOM U+FEFF, soft hyphen, tags U+E0000–U+E007F); Zl/Zp: line and
// paragraph separators; Zs other than the plain space; fillers that draw as nothing.
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u115f\u1160\u3164\uffa0]|\u034f/u
const LONE_SURROGATE = /[\ud800-\udfff]/

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0')

/** The escape of one code point (or lone surrogate), or null when it is shown as itself. */
function escapeOf(ch: string, backslash: boolean): string | null {
  const cp = ch.codePointAt(0)!
  if (ch === '\\') return backslash ? '\\\\' : null
  if (cp < 0x20 || cp === 0x7f) {
    if (ch === '\n') return '\\n'
    if (ch === '\r') return '\\r'
    if (ch === '\t') return '\\t'
    return `\\x${hex(cp, 2)}`
  }
  if (cp >= 0x80 && cp <= 0x9f) return `\\u${hex(cp, 4)}`
  if (ch.length === 1 && LONE_SURROGATE.test(ch)) {
    // A byte that is not UTF-8 (U+DC80–U+DCFF), or a lone surrogate of a JavaScript string.
    return cp >= 0xdc80 && cp <= 0xdcff ? `\\x${hex(cp - 0xdc00, 2)}` : `\\u${hex(cp, 4)}`
  }
  if (cp >= 0xa0 && INVISIBLE.test(ch)) return cp > 0xffff ? `\\u{${hex(cp, 1)}}` : `\\u${hex(cp, 4)}`
  return null
}

// Fast path: nothing to escape in plain printable ASCII without a backslash.
const PLAIN = /^[\u0020-\u005b\u005d-\u007e]*$/

/** The shown form of a string from outside: unambiguous, reversible with `fromVisible`. */
export function visible(s: string): string {
  if (PLAIN.test(s)) return s
  let out = ''
  for (const ch of s) out += escapeOf(ch, true) ?? ch
  return out
}

const UNESCAPE = /\\(?:x([0-9a-fA-F]{2})|u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|([\\nrt]))/g

/**
 * The exact string of a shown form (`visible`'s inverse): `\\`, `\n`, `\r`, `\t`, `\xHH` (a byte:
 * under 0x80 the character, else a byte that is not UTF-8), `\uHHHH`, `\u{H…}`. A backslash that
 * starts none of these stays a backslash, so a hand-typed `a\b` still means `a\b`.
 */
export function fromVisible(s: string): string {
  if (!s.includes('\\')) return s
  return s.replace(UNESCAPE, (_m, x: string | undefined, braced: string | undefined, u: string | undefined, c: string | undefined) => {
    if (x !== undefined) {
      const b = parseInt(x, 16)
      return b < 0x80 ? String.fromCharCode(b) : String.fromCharCode(0xdc00 + b)
    }
    if (braced !== undefined) {
      const cp = parseInt(braced, 16)
      return cp <= 0x10ffff ? String.fromCodePoint(cp) : _m
    }
    if (u !== undefined) return String.fromCharCode(parseInt(u, 16))
    return c === 'n' ? '\n' : c === 'r' ? '\r' : c === 't' ? '\t' : '\\'
  })
}

/** Terminal columns of one character: 2 for wide East Asian characters and emoji, else 1. */
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\p{Extended_Pictographic}\u{20000}-\u{3fffd}]/u
const ZERO = /[\p{Mn}\p{Me}\ufe0f]/u

const ASCII = /^[\u0020-\u007e]*$/

/** Terminal columns of a shown string (escapes are ASCII). */
export function columns(s: string): number {
  if (ASCII.test(s)) return s.length
  let n = 0
  for (const ch of s) n += ZERO.test(ch) ? 0 : WIDE.test(ch) && ch.codePointAt(0)! > 0xff ? 2 : 1
  return n
}

/** The marker of a cut: what was left out, in characters of the shown form. */
const marker = (left: number) => `…[+${left}]`

/** Cut a shown string to at most `max` columns, marking the cut (`…[+123]`). */
export function clip(s: string, max: number): string {
  if (s.length <= max && columns(s) <= max) return s
  const chars = [...s]
  let width = 0
  let i = 0
  // Room for the marker of the longest possible remainder.
  const room = Math.max(1, max - marker(chars.length).length)
  while (i < chars.length) {
    const w = columns(chars[i]!)
    if (width + w > room) break
    width += w
    i++
  }
  // Never cut inside an escape (`\x1`): back up to its start.
  const head = chars.slice(0, i).join('')
  const cut = /\\(?:x[0-9a-f]?|u\{?[0-9a-f]{0,5}|)$/.exec(head)
  const kept = cut && !/\\\\$/.test(head.slice(0, cut.index + 1)) ? head.slice(0, cut.index) : head
  return `${kept}${marker(chars.length - [...kept].length)}`
}

/** The longest string a table cell or a dashboard cell shows before it is cut. */
export const CELL_MAX = 64

/**
 * A copy of `v` with every string made `visible` (and, with `max`, clipped): the data a human view
 * prints. Numbers, booleans and null stay; arrays and plain objects are copied; Map keys and values too.
 */
export function safeCopy<T>(v: T, max?: number): T {
  return copy(v, max) as T
}

function copy(v: unknown, max: number | undefined): unknown {
  if (typeof v === 'string') {
    // Most strings are short printable ASCII: shown as they are, one test.
    if (v.length <= (max ?? Infinity) && PLAIN.test(v)) return v
    return max === undefined ? visible(v) : clip(visible(v), max)
  }
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) return v.map((x) => copy(x, max))
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [copy(k, max), copy(x, max)]))
  if (v instanceof Set) return new Set([...v].map((x) => copy(x, max)))
  if (Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) return v
  const out: Record<string, unknown> = {}
  for (const [k, x] of Object.entries(v)) out[k] = copy(x, max)
  return out
}

/**
 * Text the tool composed around outside strings (a write's plan, its outcome, an error line): every
 * string found in `names` (the command's arguments, the plan's JSON: keys, replica ids, incarnations,
 * flows) that does not show as itself is replaced by its shown form wherever it occurs.
 */
export function showNames(text: string, ...names: unknown[]): string {
  const raw = new Set<string>()
  const collect = (v: unknown, depth: number): void => {
    if (typeof v === 'string') {
      if (v && visible(v) !== v) raw.add(v)
    } else if (depth < 6 && Array.isArray(v)) for (const x of v) collect(x, depth + 1)
    else if (
      depth < 6 &&
      v &&
      typeof v === 'object' &&
      (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)
    )
      for (const x of Object.values(v)) collect(x, depth + 1)
  }
  for (const n of names) collect(n, 0)
  if (raw.size === 0) return text
  // Longest first, in one pass: a shown form is never rewritten again.
  const sorted = [...raw].sort((a, b) => b.length - a.length)
  const pattern = new RegExp(sorted.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g')
  return text.replace(pattern, (m) => visible(m))
}

/** A value from outside as one line of JSON for people: JSON escapes controls; the rest as `\uXXXX`. */
export function jsonText(v: unknown): string {
  return terminalSafe(JSON.stringify(v) ?? 'undefined', false)
}

const UNSAFE =
  '[\\u0000-\\u0008\\u000b-\\u001a\\u001c-\\u001f\\u007f-\\u009f\\ud800-\\udfff\\p{Cf}\\p{Zl}\\p{Zp}\\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000\\u115f\\u1160\\u3164\\uffa0]|\\u034f'
/** With colours: an ESC that does not start an SGR sequence (SGR sequences are not even matched). */
const GUARD_COLOURS = new RegExp(`${UNSAFE}|\\u001b(?!\\[[0-9;]*m)`, 'gu')
const GUARD_PLAIN = new RegExp(`${UNSAFE}|\\u001b`, 'gu')
const PRINTABLE = /^[\n\t\u0020-\u007e]*$/

/**
 * The last guard before a terminal: newlines, tabs and (with `colours`) SGR colours pass; any other
 * control byte, escape sequence, bidi control, invisible character or lone surrogate is written as
 * a `\uXXXX` escape. One pass over the text.
 */
export function terminalSafe(text: string, colours = true): string {
  // Printable ASCII, newlines and tabs: nothing to escape (the usual case, and a much cheaper pass).
  if (PRINTABLE.test(text)) return text
  return text.replace(colours ? GUARD_COLOURS : GUARD_PLAIN, jsonEscape)
}

// What may not reach a terminal raw: a control other than newline, tab and ESC (ESC is decided by
// the guard: only as the start of an SGR sequence, the one escape sequence the tool's own text
// carries), a lone surrogate, or an invisible character (as INVISIBLE).
/** `\uXXXX` (a surrogate pair above U+FFFF; `\r` for CR): the same character read back by a JSON parser. */
function jsonEscape(ch: string): string {
  if (ch === '\r') return '\\r'
  let out = ''
  for (let i = 0; i < ch.length; i++) out += `\\u${hex(ch.charCodeAt(i), 4)}`
  return out
}

type Write = typeof process.stdout.write
let originals: { out: Write; err: Write } | null = null

/**
 * Put `terminalSafe` in front of stdout and stderr for the whole process: every command, whatever
 * it prints and however (tables, plain lines, errors, completions), gets it without asking.
 * `colours` says per stream whether the tool colours it: where it does not, no SGR passes either.
 * `rawWrite` is for the tool's own cursor control (progress lines); the dashboard unguards while it draws.
 */
export function guardTerminal(colours: { stdout: boolean; stderr: boolean }): void {
  if (originals) return
  originals = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) }
  const wrap = (orig: Write, sgr: boolean): Write =>
    ((chunk: unknown, ...rest: unknown[]) => {
      const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : chunk
      return (orig as (c: unknown, ...r: unknown[]) => boolean)(typeof text === 'string' ? terminalSafe(text, sgr) : text, ...rest)
    }) as Write
  process.stdout.write = wrap(originals.out, colours.stdout)
  process.stderr.write = wrap(originals.err, colours.stderr)
  guardedColours = colours
}

let guardedColours: { stdout: boolean; stderr: boolean } | null = null

/** Run `f` with the guard off (the dashboard draws its own screen from text made safe at its source). */
export async function unguarded<T>(f: () => Promise<T>): Promise<T> {
  const colours = guardedColours
  unguardTerminal()
  try {
    return await f()
  } finally {
    if (colours) guardTerminal(colours)
  }
}

/** Take the guard away. */
export function unguardTerminal(): void {
  if (!originals) return
  process.stdout.write = originals.out
  process.stderr.write = originals.err
  originals = null
  guardedColours = null
}

/** Write the tool's own control sequences (a progress line's `\r` and erase), past the guard. */
export function rawWrite(stream: 'stdout' | 'stderr', text: string): void {
  const w = originals
    ? originals[stream === 'stdout' ? 'out' : 'err']
    : stream === 'stdout'
      ? process.stdout.write.bind(process.stdout)
      : process.stderr.write.bind(process.stderr)
  w(text)
}
