/**
 * The hash records of a snapshot read back (`--from`, `snapshot diff`), held packed: each record,
 * its key first, encoded in a few dozen bytes of an arena outside the heap, found by an index of
 * typed arrays and decoded again when a read asks for its key; the masters' key lists likewise
 * (PackedNames). A million chats are two million records: as objects they took some 400 bytes of
 * heap each, here some 110 bytes of arena and index, and almost nothing of the heap (its size is
 * what the garbage collector lets a process's memory grow to).
 *
 * Exact: a record decodes to what JSON.parse made of it (every string, every number, -0 too).
 * `asObject()` shows the store as the plain object the records were (records.hashes), read only.
 *
 * A record: its key (Latin-1 or UTF-16, by its characters), a flags byte (which of h, e, ttl, fields,
 * omitted, listed it has), `at`, then each part it has; a hash's field names are one list held once
 * for every hash with those names. A number is a non-negative or negative safe integer (varint) or a
 * float64. A string is an integer as Redis writes one (varint), an interned string (its index: every
 * string of up to 64 characters, until 65,536 are held — field names, replica ids, incarnations),
 * UTF-8, or UTF-16 (a string with a surrogate in it, which UTF-8 would not carry back exactly).
 */
import { grownTo } from '../columns.js'
import type { HashRecord } from './records.js'

/** What the view answers with the store itself (./records.ts PACKED_STORE, the same symbol). */
const PACKED_STORE = Symbol.for('botmesh-coord.packed-records')

const CHUNK = 8 * 1024 * 1024
/** Thrown by the encoder when what it encodes does not fit in the chunk's room left. */
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

const KEY_LATIN1 = 0
const KEY_UTF16 = 1

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

/** FNV-1a over a string's UTF-16 code units. */
function hashOf(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return h | 0
}

/**
 * Bytes outside the heap, in chunks: what is encoded goes whole into one chunk (a new one when the
 * last has no room left for it), and is found again by its place (chunk × 2^32 + position).
 */
class Arena {
  private readonly chunks: Buffer[] = []
  /** The chunk being written (the last of `chunks`), and where the next entry starts in it. */
  private chunk: Buffer = Buffer.alloc(0)
  private at = 0
  /** Interned strings (see `string`). */
  readonly strings: string[] = []
  private readonly interned = new Map<string, number>()

  /** Encodes one entry with `encode` (run again in a larger chunk if it did not fit); returns its place. */
  append(encode: () => void): number {
    const start = this.at
    try {
      encode()
      return (this.chunks.length - 1) * TWO_32 + start
    } catch (err) {
      if (err !== OVERFLOW) throw err
    }
    let size = CHUNK
    for (;;) {
      this.chunk = Buffer.allocUnsafe(size)
      this.at = 0
      try {
        encode()
        break
      } catch (again) {
        if (again !== OVERFLOW) throw again
        size *= 2
      }
    }
    this.chunks.push(this.chunk)
    return (this.chunks.length - 1) * TWO_32
  }

  reader(place: number): Reader {
    const chunk = Math.floor(place / TWO_32)
    return new Reader(this.chunks[chunk]!, place - chunk * TWO_32, this.strings)
  }

  /** Does the key written at `place` read `key`? Compared where it lies, nothing decoded. */
  keyIs(place: number, key: string): boolean {
    return this.reader(place).keyIs(key)
  }

  private room(n: number): void {
    if (this.at + n > this.chunk.length) throw OVERFLOW
  }

  byte(b: number): void {
    this.room(1)
    this.chunk[this.at++] = b
  }

  /** A non-negative integer up to 2^53, 7 bits a byte. */
  varint(n: number): void {
    this.room(8)
    while (n >= 128) {
      this.chunk[this.at++] = (n % 128) | 128
      n = Math.floor(n / 128)
    }
    this.chunk[this.at++] = n
  }

  number(n: number): void {
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

  string(s: string): void {
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

  /** A key name: Latin-1 when every character is below 256, else UTF-16 (lone surrogates too). */
  key(k: string): void {
    let latin1 = true
    for (let i = 0; i < k.length; i++)
      if (k.charCodeAt(i) > 255) {
        latin1 = false
        break
      }
    this.byte(latin1 ? KEY_LATIN1 : KEY_UTF16)
    this.varint(k.length)
    const bytes = latin1 ? k.length : 2 * k.length
    this.room(bytes)
    if (latin1) for (let i = 0; i < k.length; i++) this.chunk[this.at + i] = k.charCodeAt(i)
    else
      for (let i = 0; i < k.length; i++) {
        const c = k.charCodeAt(i)
        this.chunk[this.at + 2 * i] = c & 255
        this.chunk[this.at + 2 * i + 1] = c >> 8
      }
    this.at += bytes
  }
}

export class PackedHashRecords {
  private readonly arena = new Arena()
  /** Each record's place in the arena and its key's hash, by record number. */
  private places = new Float64Array(1024)
  private hashes = new Int32Array(1024)
  private count = 0
  /** Open addressing: record number + 1 by slot (0: empty); at most half full. */
  private slots = new Int32Array(4096)
  /** The field names of hashes, in order, each list held once (a chat's fields are the same in every chat). */
  private readonly shapes: string[][] = []
  /** The ids of the lists of names by their first name. */
  private readonly shapesByFirst = new Map<string, number[]>()
  private view: Record<string, HashRecord> | null = null

  get size(): number {
    return this.count
  }

  /** The record number of `key`, or -1. `h`: its hash, when known. */
  numberOf(key: string, h = hashOf(key)): number {
    const mask = this.slots.length - 1
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const r = this.slots[slot]! - 1
      if (r < 0) return -1
      if (this.hashes[r] === h && this.arena.keyIs(this.places[r]!, key)) return r
    }
  }

  has(key: string): boolean {
    return this.numberOf(key) >= 0
  }

  /** The key of record `r`. */
  keyAt(r: number): string {
    return this.arena.reader(this.places[r]!).key()
  }

  keys(): string[] {
    const out: string[] = []
    for (let r = 0; r < this.count; r++) out.push(this.keyAt(r))
    return out
  }

  /** Adds (or replaces) the record of `key`. */
  set(key: string, rec: HashRecord): void {
    const place = this.arena.append(() => {
      this.arena.key(key)
      this.encode(rec)
    })
    const h = hashOf(key)
    const known = this.numberOf(key, h)
    if (known >= 0) {
      this.places[known] = place
      return
    }
    const r = this.count++
    this.places = grownTo(this.places, this.count, (n) => new Float64Array(n))
    this.hashes = grownTo(this.hashes, this.count, (n) => new Int32Array(n))
    this.places[r] = place
    this.hashes[r] = h
    if (2 * this.count > this.slots.length) this.rehash(this.slots.length * 2)
    this.slot(r)
  }

  get(key: string): HashRecord | undefined {
    const r = this.numberOf(key)
    return r < 0 ? undefined : this.decode(r)
  }

  /** records.hashes as the plain object it was: every key a record, decoded when read. Read only. */
  asObject(): Record<string, HashRecord> {
    if (this.view) return this.view
    const readOnly = () => {
      throw new TypeError('a snapshot read back is read only')
    }
    this.view = new Proxy(Object.create(null) as Record<string, HashRecord>, {
      get: (_t, p) => (typeof p === 'string' ? this.get(p) : p === PACKED_STORE ? this : undefined),
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

  private slot(r: number): void {
    const mask = this.slots.length - 1
    let slot = this.hashes[r]! & mask
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask
    this.slots[slot] = r + 1
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size)
    for (let r = 0; r < this.count; r++) this.slot(r)
  }

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

  private encode(rec: HashRecord): void {
    const a = this.arena
    const flags =
      (rec.h !== undefined ? H : 0) |
      (rec.e !== undefined ? E : 0) |
      (rec.ttl !== undefined ? TTL : 0) |
      (rec.fields !== undefined ? FIELDS : 0) |
      (rec.omitted !== undefined ? OMITTED : 0) |
      (rec.listed !== undefined ? LISTED : 0)
    a.byte(flags)
    a.number(rec.at)
    if (rec.h !== undefined) {
      const names = Object.keys(rec.h)
      const shape = this.shapeOf(names)
      a.varint(shape + 1)
      if (shape < 0) {
        a.varint(names.length)
        for (const n of names) a.string(n)
      }
      for (const n of names) a.string(rec.h[n]!)
    }
    if (rec.e !== undefined) a.string(rec.e)
    if (rec.ttl !== undefined) a.number(rec.ttl)
    if (rec.fields !== undefined) {
      a.varint(rec.fields.length)
      for (const f of rec.fields) a.string(f)
    }
    if (rec.omitted !== undefined) {
      const names = Object.keys(rec.omitted)
      a.varint(names.length)
      for (const n of names) {
        a.string(n)
        a.number(rec.omitted[n]!)
      }
    }
    if (rec.listed !== undefined) {
      a.number(rec.listed.size)
      a.number(rec.listed.extra)
    }
  }

  private decode(r: number): HashRecord {
    const rd = this.arena.reader(this.places[r]!)
    rd.skipKey()
    const flags = rd.byte()
    const rec: HashRecord = { at: rd.number() }
    if (flags & H) {
      const shape = rd.varint() - 1
      let names: string[]
      if (shape >= 0) names = this.shapes[shape]!
      else {
        names = []
        for (let n = rd.varint(); n > 0; n--) names.push(rd.string())
      }
      const h: Record<string, string> = {}
      for (const name of names) put(h, name, rd.string())
      rec.h = h
    }
    if (flags & E) rec.e = rd.string()
    if (flags & TTL) rec.ttl = rd.number()
    if (flags & FIELDS) {
      const fields: string[] = []
      for (let n = rd.varint(); n > 0; n--) fields.push(rd.string())
      rec.fields = fields
    }
    if (flags & OMITTED) {
      const omitted: Record<string, number> = {}
      for (let n = rd.varint(); n > 0; n--) put(omitted, rd.string(), rd.number())
      rec.omitted = omitted
    }
    if (flags & LISTED) rec.listed = { size: rd.number(), extra: rd.number() }
    return rec
  }
}

/**
 * A master's key names held packed, in order (records.nodes[i].keys of a snapshot read back): a name
 * that is a record's key is that record's number, any other (a queue's) is written apart. Iterable,
 * and written as the list of names it is (toJSON).
 */
export class PackedNames implements Iterable<string> {
  private readonly others = new Arena()
  /** Record number, or -(1 + the place of a name written apart) — places stay below 2^53. */
  private entries = new Float64Array(1024)
  private count = 0

  constructor(private readonly records: PackedHashRecords) {}

  get length(): number {
    return this.count
  }

  push(name: string): void {
    const r = this.records.numberOf(name)
    const entry = r >= 0 ? r : -1 - this.others.append(() => this.others.key(name))
    this.entries = grownTo(this.entries, this.count + 1, (n) => new Float64Array(n))
    this.entries[this.count++] = entry
  }

  at(i: number): string {
    const e = this.entries[i]!
    return e >= 0 ? this.records.keyAt(e) : this.others.reader(-1 - e).key()
  }

  *[Symbol.iterator](): Iterator<string> {
    for (let i = 0; i < this.count; i++) yield this.at(i)
  }

  toJSON(): string[] {
    return [...this]
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

  /** A key's encoding and length (characters), the reader past them, at the key's first byte. */
  private keyHead(): { latin1: boolean; len: number } {
    const latin1 = this.byte() === KEY_LATIN1
    return { latin1, len: this.varint() }
  }

  key(): string {
    const { latin1, len } = this.keyHead()
    const bytes = latin1 ? len : 2 * len
    const s = this.b.toString(latin1 ? 'latin1' : 'utf16le', this.p, this.p + bytes)
    this.p += bytes
    return s
  }

  skipKey(): void {
    const { latin1, len } = this.keyHead()
    this.p += latin1 ? len : 2 * len
  }

  /** Is the key here `key`? Compared byte by byte, nothing decoded. */
  keyIs(key: string): boolean {
    const { latin1, len } = this.keyHead()
    if (len !== key.length) return false
    const { b, p } = this
    if (latin1) {
      for (let i = 0; i < len; i++) if (b[p + i] !== key.charCodeAt(i)) return false
    } else {
      for (let i = 0; i < len; i++) if (b[p + 2 * i]! + 256 * b[p + 2 * i + 1]! !== key.charCodeAt(i)) return false
    }
    return true
  }
}
