/**
 * The one module that spells Redis keys. Everything that touches Redis (the coordinator, the store,
 * the CLI and the dashboard) asks this module for names, and decodes scanned names through it.
 *
 * Layouts:
 * - `standalone`: `<prefix>:<kind>:<id>`
 * - `cluster`:    `<prefix>:<kind>:{<id>}` — the id is the hash tag, so every key of one chat
 *   (state, queue, checkpoint, handover marker) lives in one slot and one script can touch them all.
 *
 * User-supplied ids (chat keys, lead names, lock keys, replica ids) are escaped: `%`, `{`, `}` and
 * control characters become `%XX`, so an id can neither open nor close a hash tag. The kind segment
 * comes before the id, so an id containing `:` cannot collide with another kind's key.
 */

import { InvalidIdError } from './errors/invalid-id-error.js'
import { DEFAULTS } from './defaults.js'
import { hasLoneSurrogate, idFromBytes, idToBytes, redisKey, startsWithBytes } from './bytes.js'

/**
 * A key name as Redis takes it: a string, or (for an id that carries bytes that are not UTF-8, as
 * lone surrogates: ./bytes.ts) its bytes.
 */
export type RedisKey = string | Buffer

export type Layout = 'standalone' | 'cluster'
export const LAYOUTS: readonly Layout[] = ['standalone', 'cluster']

/** Bumped when the meaning of any key or field changes; readers refuse a newer schema. */
export const SCHEMA_VERSION = 1

export const DEFAULT_PREFIX = DEFAULTS.prefix
export const MAX_ID_BYTES = 8192

/** What a key holds. The letters are the on-wire segment after the prefix. */
export const KIND_SEGMENTS = {
  chat: 'c', // hash: turn holder, fence, ticket details
  queue: 'q', // zset: tickets waiting for a chat's turn
  checkpoint: 'cp', // hash: conversation checkpoint
  handover: 'ho', // hash: handover marker of an async conversation
  lead: 'l', // hash: leadership lease (providers, schedulers, tryLead names)
  lock: 'k', // hash: fenced lock
  replica: 'r', // hash: replica heartbeat record
} as const
export type KeyKind = keyof typeof KIND_SEGMENTS
const ALL_KINDS = Object.keys(KIND_SEGMENTS) as KeyKind[]
const SEGMENT_KINDS = new Map<string, KeyKind>(Object.entries(KIND_SEGMENTS).map(([k, v]) => [v, k as KeyKind]))

// eslint-disable-next-line no-control-regex
const ESCAPE = /[%{}\u0000-\u001f\u007f]/g

// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /[%{}\u0000-\u001f\u007f]/

export function encodeId(id: string): string {
  if (!NEEDS_ESCAPE.test(id)) return id
  return id.replace(ESCAPE, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'))
}

export function decodeId(encoded: string): string {
  // Most ids need no decoding: a scan of a million keys skips the regular expression for them.
  if (!encoded.includes('%')) return encoded
  return encoded.replace(/%([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
}

export function validateId(id: unknown, what = 'key'): string {
  if (typeof id !== 'string' || id.length === 0) throw new InvalidIdError(`${what} must be a non-empty string`)
  // A UTF-16 unit is at most 3 bytes (a pair is 4 for two): only a long id needs its bytes counted.
  if (id.length * 3 > MAX_ID_BYTES && idToBytes(id).length > MAX_ID_BYTES) {
    throw new InvalidIdError(`${what} is longer than ${MAX_ID_BYTES} bytes`)
  }
  return id
}

/**
 * The segments that follow the prefix in a key or channel name: the kinds' segments and the fixed names.
 * A prefix may not have one of them after its first segment (validatePrefix): `shop:c` would write
 * `shop:c:c:<id>`, which prefix `shop` reads as its own chat `c:<id>`.
 */
export const RESERVED_SEGMENTS: readonly string[] = [...Object.values(KIND_SEGMENTS), 'replicas', 'schema', 'events', 'wake']
const RESERVED = new Set(RESERVED_SEGMENTS)

/**
 * A usable prefix, or InvalidIdError. Besides spaces, braces and glob characters, a prefix is refused
 * when a `:`-separated segment after its first is reserved (RESERVED_SEGMENTS): one prefix can read
 * another's keys as its own only when the other is it plus `:` and a reserved segment, so refusing
 * those makes every allowed prefix's keys its own alone. `shop`, `shop:eu` and `shop-c` are accepted;
 * `shop:c`, `shop:eu:cp` and `shop:events` are not.
 */
export function validatePrefix(prefix: unknown): string {
  if (typeof prefix !== 'string' || prefix.length === 0) throw new InvalidIdError('prefix must be a non-empty string')
  if (/[\s{}*?[\]\\]/.test(prefix)) {
    throw new InvalidIdError(`prefix ${JSON.stringify(prefix)} may not contain spaces, braces or glob characters`)
  }
  if (prefix.length > 200) throw new InvalidIdError('prefix is longer than 200 characters')
  const segments = prefix.split(':')
  const at = segments.findIndex((s, i) => i > 0 && RESERVED.has(s))
  if (at > 0) {
    const parent = segments.slice(0, at).join(':')
    const instead = segments.map((s, i) => (i > 0 && RESERVED.has(s) ? '-' : i > 0 ? ':' : '') + s).join('')
    throw new InvalidIdError(
      `prefix ${JSON.stringify(prefix)} is refused: its segment ${JSON.stringify(segments[at])} names a kind of key ` +
        `(after the first segment none of ${RESERVED_SEGMENTS.join(', ')} may appear), so prefix ${JSON.stringify(parent)} ` +
        `would read its keys as its own; use a prefix without it, e.g. ${JSON.stringify(instead)} ` +
        `(replicas that ran on it: stop them and start them on the new prefix; state under the old one is not carried over)`,
    )
  }
  return prefix
}

export interface ChatKeys {
  state: RedisKey
  queue: RedisKey
  checkpoint: RedisKey
  handover: RedisKey
}

export interface ParsedKey {
  kind: KeyKind
  /** The id exactly as the runtime passed it (decoded). */
  id: string
}

export class KeyLayout {
  readonly prefix: string
  readonly layout: Layout
  private readonly loneInPrefix: boolean
  /** What owns() compares: `<prefix>:<segment>:` of every kind, and the fixed names (both layouts). */
  private readonly own: { heads: string[]; names: string[]; headBytes: Buffer[]; nameBytes: Buffer[] }

  constructor(prefix: string, layout: Layout) {
    this.prefix = validatePrefix(prefix)
    if (!LAYOUTS.includes(layout)) throw new InvalidIdError(`layout must be 'standalone' or 'cluster', got ${String(layout)}`)
    this.layout = layout
    this.loneInPrefix = hasLoneSurrogate(this.prefix)
    const p = this.prefix
    const heads = Object.values(KIND_SEGMENTS).map((s) => `${p}:${s}:`)
    const names = [`${p}:schema`, `${p}:events`, `${p}:replicas`, `${p}:replicas:{${p}}`]
    const bytes = (list: string[]) => list.map((t) => Buffer.from(t, 'utf8'))
    this.own = { heads, names, headBytes: bytes(heads), nameBytes: bytes(names) }
  }

  /** An id as the last part of a key name: checked, escaped, and on a cluster the hash tag. */
  private tagged(id: string, what: string): string {
    const enc = encodeId(validateId(id, what))
    return this.layout === 'cluster' ? `{${enc}}` : enc
  }

  private key(kind: KeyKind, id: string, what: string): RedisKey {
    return redisKey(`${this.prefix}:${KIND_SEGMENTS[kind]}:${this.tagged(id, what)}`)
  }

  /** The keys of one chat: its id checked and escaped once (every turn names two of them, twice). */
  chat(key: string): ChatKeys {
    const tagged = this.tagged(key, 'chat key')
    // No lone surrogate in the prefix or the id: none in the names made of them (':' between).
    const bytes = this.loneInPrefix || hasLoneSurrogate(tagged)
    const name = (kind: KeyKind): RedisKey => {
      const s = `${this.prefix}:${KIND_SEGMENTS[kind]}:${tagged}`
      return bytes ? idToBytes(s) : s
    }
    return { state: name('chat'), queue: name('queue'), checkpoint: name('checkpoint'), handover: name('handover') }
  }

  lead(name: string): RedisKey {
    return this.key('lead', name, 'lead name')
  }

  lock(key: string): RedisKey {
    return this.key('lock', key, 'lock key')
  }

  /**
   * A replica's heartbeat record. On a cluster every replica record shares the prefix as hash tag
   * (`P:r:{P}:<id>`), so the heartbeat script can keep the replica index in the same slot.
   */
  replica(replicaId: string): RedisKey {
    const enc = encodeId(validateId(replicaId, 'replicaId'))
    return redisKey(this.layout === 'cluster' ? `${this.prefix}:r:{${this.prefix}}:${enc}` : `${this.prefix}:r:${enc}`)
  }

  /** Zset of live replica ids scored by heartbeat expiry (Redis ms): a bounded read for the dashboard. */
  get replicaIndex(): string {
    return this.layout === 'cluster' ? `${this.prefix}:replicas:{${this.prefix}}` : `${this.prefix}:replicas`
  }

  /** Hash `{version, layout, createdAt}`; readers check the version. */
  get schema(): string {
    return `${this.prefix}:schema`
  }

  /** Capped stream of notable coordination events and the operators' audit trail. */
  get events(): string {
    return `${this.prefix}:events`
  }

  /**
   * The schema records a prefix nested on one of this prefix's kind segments would have (`P:c:schema`,
   * `P:cp:schema`, …), with that prefix. validatePrefix refuses such prefixes; one of them holding a
   * schema record here is a deployment of an earlier release whose keys read as this prefix's.
   */
  get nestedSchemas(): Array<{ prefix: string; schema: string }> {
    return Object.values(KIND_SEGMENTS).map((s) => ({ prefix: `${this.prefix}:${s}`, schema: `${this.prefix}:${s}:schema` }))
  }

  /** Pub/sub channel on which one coordinator instance is woken (a grant, a yield request). */
  wakeChannel(incarnation: string): string {
    return `${this.prefix}:wake:${incarnation}`
  }

  /** Prefix of wake channels; scripts append the incarnation they wake (a channel, not a key). */
  get wakeChannelPrefix(): string {
    return `${this.prefix}:wake:`
  }

  /** SCAN MATCH pattern for every key of one kind under this prefix (glob characters are refused in prefixes). */
  scanPattern(kind: KeyKind): string {
    return `${this.prefix}:${KIND_SEGMENTS[kind]}:*`
  }

  /**
   * SCAN MATCH pattern for the keys of several kinds (none given: every kind): `<prefix>:[ckl]:*` when
   * each kind's segment is one letter (Redis then returns only those: a listing of leases skips
   * checkpoints and queues server-side), else one walk of the keyspace still (where a pattern per kind
   * would walk it once each) with a pattern of the segments' first two characters, `:` for a
   * one-letter segment: `<prefix>:[clkh][:o]*` for chats, leads, locks and handover markers, which
   * leaves the checkpoints (`cp:`) out. With no kinds named it is `<prefix>:[<first letters>]*`, which
   * also returns the fixed names (`<prefix>:replicas`). Either may match a neighbour prefix's keys
   * (`shop:cx:…` for `shop:[chr]*`): callers keep only their kinds, parsed, and count only keys this
   * prefix owns (owns()). Never `<prefix>:*`, which is every neighbour `shop:eu` too.
   */
  scanPatternOf(kinds: readonly KeyKind[]): string {
    if (kinds.length === 1) return this.scanPattern(kinds[0]!)
    const segments = (kinds.length ? kinds : ALL_KINDS).map((k) => KIND_SEGMENTS[k])
    if (segments.every((s) => s.length === 1)) return `${this.prefix}:[${segments.join('')}]:*`
    const chars = (at: number) => [...new Set(segments.map((s) => s[at] ?? ':'))].join('')
    if (!kinds.length) return `${this.prefix}:[${chars(0)}]*`
    return `${this.prefix}:[${chars(0)}][${chars(1)}]*`
  }

  /**
   * Whether a key name (bytes as SCAN returns them, or text) is this prefix's own, in either layout:
   * `<prefix>:<kind segment>:…`, `<prefix>:schema`, `<prefix>:events` or the replica index. No other
   * accepted prefix writes such a name (validatePrefix), so what this refuses is a neighbour's
   * (`shop:eu:c:1` for `shop`): a walk neither records it nor counts it.
   */
  owns(key: RedisKey): boolean {
    const { heads, names, headBytes, nameBytes } = this.own
    if (typeof key === 'string' || this.loneInPrefix) {
      const text = typeof key === 'string' ? key : idFromBytes(key)
      return heads.some((h) => text.length > h.length && text.startsWith(h)) || names.includes(text)
    }
    return headBytes.some((h) => startsWithBytes(key, h)) || nameBytes.some((n) => n.equals(key))
  }

  /** Decode a raw Redis key of this prefix and layout (bytes as SCAN returns them, or text); null when it is not one of ours. */
  parse(key: RedisKey): ParsedKey | null {
    const raw = typeof key === 'string' ? key : idFromBytes(key)
    const head = `${this.prefix}:`
    if (!raw.startsWith(head)) return null
    const rest = raw.slice(head.length)
    const colon = rest.indexOf(':')
    if (colon < 0) return null
    const kind = SEGMENT_KINDS.get(rest.slice(0, colon))
    if (!kind) return null
    let enc = rest.slice(colon + 1)
    if (kind === 'replica' && this.layout === 'cluster') {
      const tag = `{${this.prefix}}:`
      if (!enc.startsWith(tag)) return null
      enc = enc.slice(tag.length)
      if (enc.length === 0 || /[{}]/.test(enc)) return null
      return { kind, id: decodeId(enc) }
    }
    if (this.layout === 'cluster') {
      if (!enc.startsWith('{') || !enc.endsWith('}')) return null
      enc = enc.slice(1, -1)
    } else if (enc.startsWith('{') && enc.endsWith('}')) {
      return null // written with the cluster layout
    }
    if (enc.length === 0 || /[{}]/.test(enc)) return null
    return { kind, id: decodeId(enc) }
  }
}
