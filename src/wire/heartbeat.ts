/**
 * The `leases` field of a replica's heartbeat record (P:r:<replicaId>): what it holds, waits for and
 * campaigns for, as JSON. Written here by the coordinator at every beat, read here by the CLI, the
 * dashboard and `replica evict` — one format, one strictness.
 */
import { REPLICA_FIELDS } from './hashes.js'
import { parseBoundedJson } from './json.js'
import type { HeldSummary, LeaseKind } from './types.js'

/** At most this many of each list; `more` counts what was left out. */
export const HEARTBEAT_LIST_CAP = 100

/** The summary a replica writes: each list capped, `more` counting the held and waiting left out. */
export function heldSummary(
  held: Array<{ kind: LeaseKind; key: string; fence: number }>,
  waiting: Array<{ key: string; ticket: number }>,
  campaigns: string[],
): HeldSummary {
  const cap = HEARTBEAT_LIST_CAP
  return {
    held: held.slice(0, cap).map(({ kind, key, fence }) => ({ kind, key, fence })),
    waiting: waiting.slice(0, cap).map(({ key, ticket }) => ({ key, ticket })),
    campaigns: campaigns.slice(0, cap),
    more: Math.max(0, held.length - cap) + Math.max(0, waiting.length - cap),
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])

/**
 * Read a `leases` field: absent or empty is an empty summary; text that is not JSON is corrupt
 * (`corrupt(why)` is thrown); entries of the wrong shape are left out, so what is returned is typed.
 */
export function decodeHeldSummary(json: string | null | undefined, corrupt: (why: string) => Error): HeldSummary {
  if (json === undefined || json === null || json === '') return { held: [], waiting: [], campaigns: [], more: 0 }
  let v: unknown
  try {
    v = parseBoundedJson(json)
  } catch (err) {
    throw corrupt(`field ${REPLICA_FIELDS.leases} ${(err as Error).message}`)
  }
  const l = isObject(v) ? v : {}
  return {
    held: list(l.held).filter(
      (h): h is HeldSummary['held'][number] =>
        isObject(h) && (h.kind === 'chat' || h.kind === 'lead') && typeof h.key === 'string' && typeof h.fence === 'number',
    ),
    waiting: list(l.waiting).filter(
      (w): w is HeldSummary['waiting'][number] => isObject(w) && typeof w.key === 'string' && typeof w.ticket === 'number',
    ),
    campaigns: list(l.campaigns).filter((c): c is string => typeof c === 'string'),
    more: typeof l.more === 'number' && Number.isFinite(l.more) ? l.more : 0,
  }
}
