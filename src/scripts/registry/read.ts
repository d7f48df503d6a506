/**
 * The read-only scripts of the listings and `chat inspect` (lua/read-listing, read-chat) and the
 * decoder of what they read. Split from registry.ts by family.
 */
import type { ListedHash } from '../../state/bounded.js'
import { defineScript, type Reply } from '../define.js'
import { row } from './replies.js'

/** read-listing-0's and read-chat-2's answer, four entries per key: per key what was read (size 0: gone), 'wrongtype', or null (a NUL in a value: read it without the script). */
function listedHashes(r: Reply, key: string): Array<ListedHash | 'wrongtype' | null> {
  const a = row(r, key)
  const out: Array<ListedHash | 'wrongtype' | null> = []
  for (let i = 0; i + 3 < a.length; i += 4) {
    const count = Number(a[i])
    if (count === -1) {
      out.push('wrongtype')
      continue
    }
    const parts = count === 0 ? [] : String(a[i + 1]).split('\0')
    if (parts.length !== count) {
      out.push(null) // a NUL inside a value
      continue
    }
    const fields: Record<string, string> = {}
    for (let j = 0; j + 1 < parts.length; j += 2) fields[parts[j]!] = parts[j + 1]!
    out.push({ fields, size: Number(a[i + 2]), extra: Number(a[i + 3]) })
  }
  return out
}

/**
 * What a listing shows of the hashes of one SCAN batch: named fields, sizes, the head of a chat's
 * queue, a page of a lead's candidates (docs/redis-layout.md). The fields, the limit, the measured
 * field and the keys follow `fieldCount` in ARGV (the script's header). Read-only, so it is called
 * directly on the node that answered the SCAN, not through the ScriptRunner.
 */
export const READ_LISTING = defineScript({
  name: 'read-listing-0',
  keys: [],
  argv: { mode: 'str', fieldCount: 'int' },
  decode: listedHashes,
  // Read-only: a second run reads what is there then, as any read after a reconnect would.
  resent: (hashes) => hashes,
})

/** One chat's turn and the head of its queue, as read-listing-0 reads a chat (`chat inspect`, the dashboard). */
export const READ_CHAT = defineScript({
  name: 'read-chat-2',
  keys: ['state', 'queue'],
  argv: { limit: 'int', offset: 'int', ticket: 'str?', fieldCount: 'int' },
  decode: (r, key): ListedHash | 'wrongtype' | null => listedHashes(r, key)[0] ?? null,
  resent: (h) => h,
})

/** read-snapshot-0's answer per key: the hash (its private fields as sizes), or why it was not read here. */
export type SnapshotRead =
  { hash: Record<string, string>; omitted: Record<string, number>; ttl: number | null } | 'wrongtype' | 'many' | 'later' | null

function snapshotHashes(r: Reply, key: string): SnapshotRead[] {
  const a = row(r, key)
  const out: SnapshotRead[] = []
  for (let i = 0; i + 3 < a.length; i += 4) {
    const count = Number(a[i])
    if (count < 0) {
      out.push(count === -1 ? 'wrongtype' : count === -2 ? 'many' : 'later')
      continue
    }
    const parts = count === 0 ? [] : String(a[i + 1]).split('\0')
    if (parts.length !== count) {
      out.push(null) // a NUL inside a value
      continue
    }
    const hash: Record<string, string> = {}
    for (let j = 0; j + 1 < parts.length; j += 2) hash[parts[j]!] = parts[j + 1]!
    const sized = String(a[i + 2]) === '' ? [] : String(a[i + 2]).split('\0')
    const omitted: Record<string, number> = {}
    for (let j = 0; j + 1 < sized.length; j += 2) omitted[sized[j]!] = Number(sized[j + 1])
    const ttl = Number(a[i + 3])
    out.push({ hash, omitted, ttl: ttl === -3 ? null : ttl })
  }
  return out
}

/**
 * A snapshot's read of one SCAN batch: each hash whole, its private fields as sizes, its PTTL when
 * asked; a hash of many fields, and the keys past the call's budget of fields, are left for the
 * reader (HSCAN pages, another call). Read-only, called on the node that answered the SCAN.
 */
export const READ_SNAPSHOT = defineScript({
  name: 'read-snapshot-0',
  keys: [],
  argv: { budget: 'int', maxFields: 'int' },
  decode: snapshotHashes,
  resent: (hashes) => hashes,
})
