/**
 * The hash records of a snapshot read back (`--from`, `snapshot diff`), held packed: each record
 * encoded in a few dozen bytes of a shared arena, decoded again when a read asks for its key. A
 * million chats are two million records: as objects they took some 400 bytes each of the heap; here
 * some 80 bytes of arena each, and their keys and index entries some 120 bytes of heap.
 *
 * Exact: a record decodes to what JSON.parse made of it (every string, every number, -0 too).
 * `asObject()` shows the store as the plain object the records were (records.hashes), read only.
 *
 * A record: a flags byte (which of h, e, ttl, fields, omitted, listed it has), `at`, then each part
 * it has; a hash's field names are one list held once for every hash with those names. A number is
 * a non-negative or negative safe integer (varint) or a float64. A string is an integer as Redis
 * writes one (varint), an interned string (its index: every string of up to 64 characters, until
 * 65,536 are held — field names, replica ids, incarnations), UTF-8, or UTF-16 (a string with a
 * surrogate in it, which UTF-8 would not carry back exactly).
 */
import type { HashRecord } from './records.js'

const CHUNK = 8 * 1024 * 1024
/** Thrown by the encoder when the record does not fit in the chunk's room left. */
const OVERFLOW = new Error('overflow')
const TWO_32 = 4294967296

const H = 1
const E = 2
const TTL = 4
const FIELDS = 8
const OMITTED = 16
const LISTED = 32

const NUM_POS = 0
const NUM_NEG = 1
const NUM_FLOAT = 2

const STR_POS = 0
const STR_NEG = 1
const STR_INTERNED = 2
const STR_UTF8 = 3
const STR_UTF16 = 4

/** Strings up to this long are interned (until INTERN_MAX distinct ones are). */
const INTERN_LENGTH = 64
const INTERN_MAX = 65_536
/** Distinct lists of field names held once (past that, a record names its fields itself). */
const SHAPES_MAX = 4096
const SHAPES_PER_FIRST = 16

const SURROGATE = /[\ud800-\udfff]/

/**
 * The integer a string writes as Redis and the library write integers (no plus sign, no leading zero,
 * no -0), when it is one below 2^53 (so that String() gives the string back); else null.
 */
function canonicalInteger(s: string): number | null {
  const len = s.length
  if (len === 0 || len > 17) return null
  const neg = s.charCodeAt(0) === 45 // '-'
  let i = neg ? 1 : 0
  if (i === len) return null
  const first = s.charCodeAt(i)
  if (first === 48) return len === i + 1 && !neg ? 0 : null // '0' alone; not '-0', not '012'
  let n = 0
  for (; i < len; i++) {
    const d = s.charCodeAt(i) - 48
    if (d < 0 || d > 9) return null
    n = n * 10 + d
  }
  if (n > Number.MAX_SAFE_INTEGER) return null
  return neg ? -n : n
}

/** An own property, `__proto__` included (a plain assignment of that name would set the prototype). */
function put(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
  else o[k] = v
}

export class PackedHashRecords {
  private readonly index = new Map<string, number>()
  private readonly keyList: string[] = []
  /** Where each record starts: chunk × 2^32 + position. */
  private offsets = new Float64Array(1024)
  private readonly chunks: Buffer[] = []
  private readonly strings: string[] = []
  private readonly interned = new Map<string, number>()
  /** The field names of hashes, in order, each list held once (a chat's fields are the same in every chat). */
  private readonly shapes: string[][] = []
  /** The ids of the lists of names by their first name. */
  private readonly shapesByFirst = new Map<string, number[]>()
  /** The chunk records are encoded into (the last of `chunks`), and where the next one starts. */
  private chunk: Buffer = Buffer.alloc(0)
  private at = 0
  private view: Record<string, HashRecord> | null = null

  get size(): number {
    return this.keyList.length
  }

  /** The key string held for `key` (the same instance, so a list of key names costs no second copy), or `key`. */
  keyString(key: string): string {
    const i = this.index.get(key)
    return i === undefined ? key : this.keyList[i]!
  }

  has(key: string): boolean {
    return this.index.has(key)
  }

  keys(): string[] {
    return this.keyList.slice()
  }

  /** Adds (or replaces) the record of `key`. */
  set(key: string, rec: HashRecord): void {
    const start = this.at
    try {
      this.encode(rec)
    } catch (err) {
      if (err !== OVERFLOW) throw err
      // The record goes whole into a new chunk (twice as large again while it does not fit).
      this.chunk = Buffer.allocUnsafe(CHUNK)
      this.at = 0
      for (;;) {
        try {
          this.encode(rec)
          break
        } catch (again) {
          if (again !== OVERFLOW) throw again
          this.chunk = Buffer.allocUnsafe(this.chunk.length * 2)
          this.at = 0
        }
      }
      this.chunks.push(this.chunk)
      this.store(key, 0)
      return
    }
    this.store(key, start)
  }

  private encode(rec: HashRecord): void {
    const flags =
      (rec.h !== undefined ? H : 0) |
      (rec.e !== undefined ? E : 0) |
      (rec.ttl !== undefined ? TTL : 0) |
      (rec.fields !== undefined ? FIELDS : 0) |
      (rec.omitted !== undefined ? OMITTED : 0) |
      (rec.listed !== undefined ? LISTED : 0)
    this.byte(flags)
    this.number(rec.at)
    if (rec.h !== undefined) {
      const names = Object.keys(rec.h)
      const shape = this.shapeOf(names)
      this.varint(shape + 1)
      if (shape < 0) {
        this.varint(names.length)
        for (const n of names) this.string(n)
      }
      for (const n of names) this.string(rec.h[n]!)
    }
    if (rec.e !== undefined) this.string(rec.e)
    if (rec.ttl !== undefined) this.number(rec.ttl)
    if (rec.fields !== undefined) {
      this.varint(rec.fields.length)
      for (const f of rec.fields) this.string(f)
    }
    if (rec.omitted !== undefined) {
      const names = Object.keys(rec.omitted)
      this.varint(names.length)
      for (const n of names) {
        this.string(n)
        this.number(rec.omitted[n]!)
      }
    }
    if (rec.listed !== undefined) {
      this.number(rec.listed.size)
      this.number(rec.listed.extra)
    }
  }

  get(key: string): HashRecord | undefined {
    const i = this.index.get(key)
    return i === undefined ? undefined : this.decode(i)
  }

  /** records.hashes as the plain object it was: every key a record, decoded when read. Read only. */
  asObject(): Record<string, HashRecord> {
    if (this.view) return this.view
    const readOnly = () => {
      throw new TypeError('a snapshot read back is read only')
    }
    this.view = new Proxy(Object.create(null) as Record<string, HashRecord>, {
      get: (_t, p) => (typeof p === 'string' ? this.get(p) : undefined),
      has: (_t, p) => typeof p === 'string' && this.has(p),
      ownKeys: () => this.keys(),
      getOwnPropertyDescriptor: (_t, p) => {
        const v = typeof p === 'string' ? this.get(p) : undefined
        return v === undefined ? undefined : { value: v, writable: false, enumerable: true, configurable: true }
      },
      set: readOnly,
      defineProperty: readOnly,
      deleteProperty: readOnly,
    })
    return this.view
  }

  // Encoding.

  /**
   * The id of a hash's field names, in order (-1: written with the record). Found among the lists
   * with the same first name, name by name: names JSON.parse made keys are internalized strings,
   * compared by their address.
   */
  private shapeOf(names: string[]): number {
    if (!names.length) return -1
    let ids = this.shapesByFirst.get(names[0]!)
    if (!ids) this.shapesByFirst.set(names[0]!, (ids = []))
    for (const id of ids) {
      const known = this.shapes[id]!
      if (known.length !== names.length) continue
      let i = 1
      while (i < names.length && known[i] === names[i]) i++
      if (i === names.length) return id
    }
    if (ids.length >= SHAPES_PER_FIRST || this.shapes.length >= SHAPES_MAX) return -1
    const id = this.shapes.push(names) - 1
    ids.push(id)
    return id
  }

  /** Room for `n` more bytes of the record being encoded, or Overflow: it goes on in a new chunk. */
  private room(n: number): void {
    if (this.at + n > this.chunk.length) throw OVERFLOW
  }

  private byte(b: number): void {
    this.room(1)
    this.chunk[this.at++] = b
  }

  /** A non-negative integer up to 2^53, 7 bits a byte. */
  private varint(n: number): void {
    this.room(8)
    while (n >= 128) {
      this.chunk[this.at++] = (n % 128) | 128
      n = Math.floor(n / 128)
    }
    this.chunk[this.at++] = n
  }

  private number(n: number): void {
    if (Number.isSafeInteger(n) && !Object.is(n, -0)) {
      this.byte(n >= 0 ? NUM_POS : NUM_NEG)
      this.varint(Math.abs(n))
      return
    }
    this.byte(NUM_FLOAT)
    this.room(8)
    this.chunk.writeDoubleLE(n, this.at)
    this.at += 8
  }

  private string(s: string): void {
    const n = canonicalInteger(s)
    if (n !== null) {
      this.byte(n < 0 ? STR_NEG : STR_POS)
      this.varint(Math.abs(n))
      return
    }
    if (s.length <= INTERN_LENGTH) {
      let i = this.interned.get(s)
      if (i === undefined && this.strings.length < INTERN_MAX) {
        i = this.strings.push(s) - 1
        this.interned.set(s, i)
      }
      if (i !== undefined) {
        this.byte(STR_INTERNED)
        this.varint(i)
        return
      }
    }
    const wide = SURROGATE.test(s)
    const bytes = wide ? s.length * 2 : Buffer.byteLength(s, 'utf8')
    this.byte(wide ? STR_UTF16 : STR_UTF8)
    this.varint(bytes)
    this.room(bytes)
    this.at += this.chunk.write(s, this.at, bytes, wide ? 'utf16le' : 'utf8')
  }

  /** The record encoded at `start` of the current chunk is the record of `key` from here on. */
  private store(key: string, start: number): void {
    let i = this.index.get(key)
    if (i === undefined) {
      i = this.keyList.push(key) - 1
      this.index.set(key, i)
      if (i >= this.offsets.length) {
        const grown = new Float64Array(this.offsets.length * 2)
        grown.set(this.offsets)
        this.offsets = grown
      }
    }
    this.offsets[i] = (this.chunks.length - 1) * TWO_32 + start
  }

  // Decoding.

  private decode(i: number): HashRecord {
    const o = this.offsets[i]!
    const chunk = Math.floor(o / TWO_32)
    const r = new Reader(this.chunks[chunk]!, o - chunk * TWO_32, this.strings)
    const flags = r.byte()
    const rec: HashRecord = { at: r.number() }
    if (flags & H) {
      const shape = r.varint() - 1
      let names: string[]
      if (shape >= 0) names = this.shapes[shape]!
      else {
        names = []
        for (let n = r.varint(); n > 0; n--) names.push(r.string())
      }
      const h: Record<string, string> = {}
      for (const name of names) put(h, name, r.string())
      rec.h = h
    }
    if (flags & E) rec.e = r.string()
    if (flags & TTL) rec.ttl = r.number()
    if (flags & FIELDS) {
      const fields: string[] = []
      for (let n = r.varint(); n > 0; n--) fields.push(r.string())
      rec.fields = fields
    }
    if (flags & OMITTED) {
      const omitted: Record<string, number> = {}
      for (let n = r.varint(); n > 0; n--) put(omitted, r.string(), r.number())
      rec.omitted = omitted
    }
    if (flags & LISTED) rec.listed = { size: r.number(), extra: r.number() }
    return rec
  }
}

class Reader {
  constructor(
    private readonly b: Buffer,
    private p: number,
    private readonly strings: string[],
  ) {}

  byte(): number {
    return this.b[this.p++]!
  }

  varint(): number {
    let n = 0
    let scale = 1
    for (;;) {
      const c = this.b[this.p++]!
      n += (c & 127) * scale
      if (c < 128) return n
      scale *= 128
    }
  }

  number(): number {
    const tag = this.byte()
    if (tag === NUM_POS) return this.varint()
    if (tag === NUM_NEG) return -this.varint()
    const v = this.b.readDoubleLE(this.p)
    this.p += 8
    return v
  }

  string(): string {
    const tag = this.byte()
    switch (tag) {
      case STR_POS:
        return String(this.varint())
      case STR_NEG:
        return `-${this.varint()}`
      case STR_INTERNED:
        return this.strings[this.varint()]!
      default: {
        const n = this.varint()
        const s = this.b.toString(tag === STR_UTF16 ? 'utf16le' : 'utf8', this.p, this.p + n)
        this.p += n
        return s
      }
    }
  }
}
