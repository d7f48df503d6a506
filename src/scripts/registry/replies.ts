/**
 * How the script definitions of registry/ read a reply: the row, the typed fields, the holder and
 * grant shapes several scripts share. Split from registry.ts so that each family of scripts can
 * decode with the same helpers; nothing here names a script.
 */
import { CorruptStateError } from '../../errors/corrupt-state-error.js'
import type { Granted } from '../../wire/interventions.js'
import type { Holder } from '../../wire/types.js'
import type { Reply } from '../define.js'

export type Row = Array<string | number | null>

export function row(r: Reply, rawKey: string): Row {
  if (!Array.isArray(r)) throw new CorruptStateError(rawKey, 'unexpected script reply')
  return r as Row
}

export function unexpected(rawKey: string, r: unknown): CorruptStateError {
  return new CorruptStateError(rawKey, `unexpected script reply ${JSON.stringify(r).slice(0, 80)}`)
}

/** A number field (NaN when absent). */
export const num = (v: unknown): number => (v === null || v === undefined ? NaN : Number(v))
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined || v === '' ? null : Number(v))
export const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v))
export const holderOf = (rid: unknown, inc: unknown): Holder | null =>
  rid === null || rid === undefined || rid === '' ? null : { replicaId: String(rid), incarnation: strOrNull(inc) ?? '' }

/** The grant an intervention made on the way: ticket, fence, replicaId, incarnation from position `at`. */
export function grantedAt(r: Row, at: number): Granted | null {
  if (!r[at]) return null
  return { ticket: Number(r[at]), fence: Number(r[at + 1]), replicaId: String(r[at + 2] ?? ''), incarnation: String(r[at + 3] ?? '') }
}

/** The checkpoint an operator script found: revision, flow, step, writer's replicaId from position 1. */
export const checkpointFound = (a: Row) => ({
  revision: Number(a[1]),
  flow: strOrNull(a[2]),
  step: strOrNull(a[3]),
  owner: strOrNull(a[4]),
})

/** A 0/1 answer. */
export const yes = (r: Reply): boolean => r === 1
