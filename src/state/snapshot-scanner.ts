/**
 * The byte scanner under the snapshot reader (./snapshot-read.ts): one pass over a snapshot
 * document's bytes as they stream in, in pieces cut anywhere. The records of `records.hashes` and
 * the names of `records.nodes[i].keys` are parsed one at a time as they end; the rest of the
 * document is kept as text (without its whitespace) and parsed whole at the end, with `{}` and `[]`
 * where those were. Everything JSON.parse refuses is refused, and so are nesting past 64 levels
 * and a record or name larger than 8 MiB.
 */
import { getHeapStatistics } from 'node:v8'
import { JSON_MAX_DEPTH, JSON_MAX_RECORD_BYTES, parseBoundedJson } from '../wire/json.js'
import type { HashRecord } from './records.js'
import { PackedHashRecords, PackedNames } from './packed-records.js'

const MiB = 1024 * 1024
/** Largest snapshot this release reads, decompressed (bytes), however large the heap. */
export const SNAPSHOT_MAX_BYTES = 2048 * MiB
/**
 * Bytes of heap limit a snapshot's decompressed JSON byte is allowed: its records are held packed
 * outside the heap (./packed-records.ts: about 0.45 bytes a JSON byte, a million chats in 220 MB),
 * and the heap holds the reading command's own work (`chat ls` of a million chats ran at 450 MB of
 * memory in all, `doctor` at 830 MB). A machine's heap limit is a share of its memory: reading
 * as many bytes as it leaves room for both.
 */
const HEAP_PER_JSON_BYTE = 1
/**
 * The part of a document outside its records and key names (its head, the replica index, the event
 * stream's tail, the masters' probes) is kept as text and parsed whole, at some four heap bytes a
 * byte: each of its bytes counts this many against the limit. A capture writes a few MiB of it.
 */
const REST_WEIGHT = 4

/**
 * Largest snapshot this process reads, decompressed (bytes): SNAPSHOT_MAX_BYTES, or less when the
 * heap is smaller (`NODE_OPTIONS=--max-old-space-size=<MB>` raises it). The 2 GiB with the 4 GiB
 * heap Node gives a machine of 16 GiB or more, and about 1 GiB with a 1 GiB heap; a million chats
 * are about 500 MiB.
 */
export function snapshotReadLimit(): number {
  const heap = getHeapStatistics().heap_size_limit
  return Math.min(SNAPSHOT_MAX_BYTES, Math.floor(heap / HEAP_PER_JSON_BYTE / MiB) * MiB)
}

/** Why `limit` (snapshotReadLimit()) is what it is, said to the operator. */
export function snapshotLimitReason(limit: number): string {
  return limit < SNAPSHOT_MAX_BYTES
    ? `the most this process's heap holds: NODE_OPTIONS=--max-old-space-size=<MB> raises it`
    : 'the most a snapshot may hold'
}

/** What a file past `limit` (snapshotReadLimit()) is told. */
export function snapshotTooLarge(limit: number): string {
  return `not read: larger than ${Math.round(limit / MiB)} MiB decompressed (${snapshotLimitReason(limit)})`
}

/** A document scanned whole: the rest of it parsed, and what was parsed apart. */
export interface ScannedDocument {
  rest: unknown
  /** The records of records.hashes by key, each checked; null when the document had no such object. */
  hashes: Record<string, unknown> | null
  /** The key names of records.nodes[i].keys, by i, packed. */
  nodeKeys: Map<number, PackedNames>
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** What the scanner is reading: the rest of the document, records.hashes' members, or a master's key names. */
const enum Mode {
  Document,
  Hashes,
  Names,
}
/** Where it stands among records.hashes' members, or in a key-name list. */
const enum At {
  BeforeKey,
  Key,
  Colon,
  BeforeValue,
  Value,
  BeforeName,
  Name,
  AfterName,
}

/** An object or array the document scan is inside: the member it is at (objects) or its index (arrays). */
type Frame = { obj: boolean; key: string | null; expectKey: boolean; index: number }

const invalid = () => new Error('not a snapshot: the JSON is not valid JSON')
const tooLarge = () => new Error(`not a snapshot: a record is larger than ${JSON_MAX_RECORD_BYTES} bytes`)
const tooDeep = () => new Error(`not a snapshot: the JSON is nested deeper than ${JSON_MAX_DEPTH} levels`)

/**
 * One snapshot document, fed piece by piece (push) as it is read and decompressed, then checked
 * whole (end). Memory: the records packed, the key names, one record's bytes, and the rest of the
 * document's text.
 */
export class SnapshotScanner {
  /** Bytes read, and REST_WEIGHT - 1 more for each one kept as the rest's text: what the limit bounds. */
  private bytes = 0
  private mode = Mode.Document
  private at = At.BeforeKey
  /** The document without records.hashes' members and the masters' key names (`{}` and `[]` stand for them). */
  private readonly rest: Buffer[] = []
  private readonly stack: Frame[] = []
  private inString = false
  private escaped = false
  /** A string with an escape or a control byte in it: JSON.parse decodes (or refuses) it. */
  private special = false
  private depth = 0
  private afterComma = false
  /** Where the token being kept began in the current piece (-1: none), and its bytes from earlier pieces. */
  private start = -1
  private parts: Buffer[] = []
  private partBytes = 0
  private capturingKey = false
  private member = ''
  private names: PackedNames | null = null
  private readonly hashes = new PackedHashRecords()
  private readonly nodeKeys = new Map<number, PackedNames>()
  private sawHashes = false

  /**
   * `limit`: decompressed bytes past which the document is refused (snapshotReadLimit());
   * `check`: why a record of records.hashes, just parsed, is not one (null: it is).
   */
  constructor(
    private readonly limit: number,
    private readonly check: (key: string, record: unknown) => string | null,
  ) {}

  push(piece: Buffer): void {
    this.bytes += piece.length
    if (this.bytes > this.limit) throw new Error(snapshotTooLarge(this.limit))
    let i = 0
    while (i < piece.length) {
      if (this.mode === Mode.Document) i = this.document(piece, i)
      else if (this.mode === Mode.Hashes) i = this.members(piece, i)
      else i = this.keyNames(piece, i)
    }
    if (this.start >= 0) {
      // A token goes on in the next piece: keep its bytes so far.
      const part = piece.subarray(this.start)
      this.partBytes += part.length
      if (this.partBytes > JSON_MAX_RECORD_BYTES) throw tooLarge()
      this.parts.push(part)
      this.start = 0
    }
  }

  /** The token kept from `start` up to `end` (exclusive) of this piece, as text. */
  private take(b: Buffer, end: number): string {
    // A token may lie whole in one large piece: bounded here too, not only when it goes on.
    if (this.partBytes + end - this.start > JSON_MAX_RECORD_BYTES) throw tooLarge()
    let text: string
    if (!this.parts.length) text = b.toString('utf8', this.start, end)
    else {
      this.parts.push(b.subarray(this.start, end))
      text = Buffer.concat(this.parts).toString('utf8')
      this.parts = []
      this.partBytes = 0
    }
    this.start = -1
    return text
  }

  /** A JSON string token (with its quotes) as its text. */
  private stringOf(token: string): string {
    if (!this.special) return token.slice(1, -1)
    this.special = false
    try {
      return JSON.parse(token) as string
    } catch {
      throw invalid()
    }
  }

  /** Reads a string's bytes from `i`; returns the index of its closing quote, or the piece's length. */
  private stringEnd(b: Buffer, i: number): number {
    let escaped = this.escaped
    for (; i < b.length; i++) {
      const c = b[i]!
      if (escaped) escaped = false
      else if (c === BACKSLASH) escaped = this.special = true
      else if (c === QUOTE) break
      else if (c < 0x20) this.special = true
    }
    this.escaped = escaped
    return i
  }

  private keepRest(b: Buffer, from: number, to: number): void {
    if (to <= from) return
    this.bytes += (REST_WEIGHT - 1) * (to - from)
    if (this.bytes > this.limit) throw new Error(snapshotTooLarge(this.limit))
    this.rest.push(Buffer.from(b.subarray(from, to)))
  }

  /** The document outside the records: kept as text, the path followed to find where the records are. */
  private document(b: Buffer, i: number): number {
    let from = i
    const stack = this.stack
    for (; i < b.length; i++) {
      if (this.inString) {
        i = this.stringEnd(b, i)
        if (i === b.length) break
        this.inString = false
        if (this.capturingKey) {
          this.capturingKey = false
          stack[stack.length - 1]!.key = this.stringOf(this.take(b, i + 1))
        }
        continue
      }
      const c = b[i]!
      if (isSpace(c)) {
        // Left out of the text kept, a run at a time.
        this.keepRest(b, from, i)
        while (i + 1 < b.length && isSpace(b[i + 1]!)) i++
        from = i + 1
        continue
      }
      const top = stack.length ? stack[stack.length - 1] : undefined
      if (c === QUOTE) {
        this.inString = true
        this.special = false
        if (top?.obj && top.expectKey) {
          this.capturingKey = true
          this.start = i
        }
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        const obj = c === OPEN_BRACE
        // records.hashes: { key: record, ... } at the document's third level.
        const hashes = obj && stack.length === 2 && stack[0]!.key === 'records' && stack[1]!.obj && stack[1]!.key === 'hashes'
        // records.nodes[i].keys: [name, ...]
        const names =
          !obj &&
          stack.length === 4 &&
          stack[0]!.key === 'records' &&
          stack[1]!.obj &&
          stack[1]!.key === 'nodes' &&
          !stack[2]!.obj &&
          stack[3]!.obj &&
          stack[3]!.key === 'keys'
        stack.push({ obj, key: null, expectKey: obj, index: 0 })
        if (stack.length > JSON_MAX_DEPTH) throw tooDeep()
        if (hashes || names) {
          this.keepRest(b, from, i + 1)
          this.afterComma = false
          if (hashes) {
            this.sawHashes = true
            this.mode = Mode.Hashes
            this.at = At.BeforeKey
          } else {
            const node = stack[2]!.index
            this.names = this.nodeKeys.get(node) ?? new PackedNames(this.hashes)
            this.nodeKeys.set(node, this.names)
            this.mode = Mode.Names
            this.at = At.BeforeName
          }
          return i + 1
        }
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) stack.pop()
      else if (top && c === COMMA) {
        if (top.obj) top.expectKey = true
        else top.index++
      } else if (top && c === COLON) top.expectKey = false
    }
    this.keepRest(b, from, i)
    return b.length
  }

  /** The members of records.hashes, each record parsed on its own. */
  private members(b: Buffer, i: number): number {
    const n = b.length
    while (i < n) {
      switch (this.at) {
        case At.BeforeKey: {
          const c = b[i]!
          if (isSpace(c)) i++
          else if (c === QUOTE) {
            this.at = At.Key
            this.start = i
            this.special = false
            i++
          } else if (c === CLOSE_BRACE && !this.afterComma) {
            this.stack.pop()
            this.rest.push(Buffer.from('}'))
            this.mode = Mode.Document
            return i + 1
          } else throw invalid()
          break
        }
        case At.Key:
          i = this.stringEnd(b, i)
          if (i === n) return n
          this.member = this.stringOf(this.take(b, i + 1))
          this.at = At.Colon
          i++
          break
        case At.Colon: {
          const c = b[i]!
          if (isSpace(c)) i++
          else if (c === COLON) {
            this.at = At.BeforeValue
            i++
          } else throw invalid()
          break
        }
        case At.BeforeValue:
          if (isSpace(b[i]!)) i++
          else {
            this.at = At.Value
            this.start = i
            this.depth = 0
            this.inString = false
            this.escaped = false
          }
          break
        case At.Value: {
          // The hot loop: a record's bytes, to the comma or brace that ends it.
          const base = this.stack.length
          let depth = this.depth
          let inString = this.inString
          let escaped = this.escaped
          for (; i < n; i++) {
            const c = b[i]!
            if (inString) {
              if (escaped) escaped = false
              else if (c === BACKSLASH) escaped = true
              else if (c === QUOTE) inString = false
            } else if (c === QUOTE) inString = true
            else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
              if (++depth + base > JSON_MAX_DEPTH) throw tooDeep()
            } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
              if (depth === 0) break
              depth--
            } else if (c === COMMA && depth === 0) break
          }
          this.depth = depth
          this.inString = inString
          this.escaped = escaped
          if (i === n) return n
          this.record(this.take(b, i))
          this.at = At.BeforeKey
          this.afterComma = b[i] === COMMA
          if (this.afterComma) i++ // a closing brace is read again: it ends records.hashes
          break
        }
        default:
          throw invalid()
      }
    }
    return n
  }

  private record(text: string): void {
    let h: unknown
    try {
      h = JSON.parse(text) as unknown
    } catch {
      throw new Error(`not a snapshot: records.hashes[${JSON.stringify(this.member.slice(0, 80))}] is not valid JSON`)
    }
    const problem = this.check(this.member, h)
    if (problem) throw new Error(`not a snapshot: ${problem}`)
    this.hashes.set(this.member, h as HashRecord)
  }

  /** A master's key names (records.nodes[i].keys), each name parsed on its own. */
  private keyNames(b: Buffer, i: number): number {
    const n = b.length
    while (i < n) {
      const c = b[i]!
      switch (this.at) {
        case At.BeforeName:
        case At.AfterName:
          if (isSpace(c)) i++
          else if (c === QUOTE && this.at === At.BeforeName) {
            this.at = At.Name
            this.start = i
            this.special = false
            i++
          } else if (c === COMMA && this.at === At.AfterName) {
            this.at = At.BeforeName
            this.afterComma = true
            i++
          } else if (c === CLOSE_BRACKET && !(this.at === At.BeforeName && this.afterComma)) {
            this.stack.pop()
            this.rest.push(Buffer.from(']'))
            this.mode = Mode.Document
            return i + 1
          } else throw new Error('not a snapshot: records.nodes: keys is not a list of names')
          break
        case At.Name:
          i = this.stringEnd(b, i)
          if (i === n) return n
          // A record's key is held once: the list names the record.
          this.names!.push(this.stringOf(this.take(b, i + 1)))
          this.at = At.AfterName
          this.afterComma = false
          i++
          break
        default:
          throw invalid()
      }
    }
    return n
  }

  /**
   * The whole document read: the rest of it parsed, and what was parsed apart (null: no
   * records.hashes object was found); or why it is not JSON (a thrown Error with one line).
   */
  end(): ScannedDocument {
    if (this.mode !== Mode.Document || this.inString || this.stack.length) throw invalid()
    let rest: unknown
    try {
      rest = parseBoundedJson(Buffer.concat(this.rest).toString('utf8'), { maxBytes: SNAPSHOT_MAX_BYTES })
    } catch (err) {
      throw new Error(`not a snapshot: the JSON ${(err as Error).message}`)
    }
    return { rest, hashes: this.sawHashes ? this.hashes.asObject() : null, nodeKeys: this.nodeKeys }
  }
}
