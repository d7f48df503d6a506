/**
 * The fenced writes of an application's own state: locks, checkpoints and handover markers
 * (lua/lock-*, checkpoint-*, handover-*), with the refusals a fenced write answers. Split from
 * registry.ts by family.
 */
import { CorruptStateError } from '../../errors/corrupt-state-error.js'
import { asIs, defineScript, unknownIf } from '../define.js'
import { row, yes, type Row } from './replies.js'

// ---------------------------------------------------------------- fenced locks

export const LOCK_ACQUIRE = defineScript({
  name: 'lock-acquire-1',
  keys: ['lock'],
  argv: { token: 'str', ttlMs: 'int', owner: 'str', idleTtlMs: 'int' },
  /** The fence of the acquisition, or null while another token holds it. */
  decode: (r, key): number | null => {
    const a = row(r, key)
    return a[0] === 1 ? Number(a[1]) : null
  },
  // the token: a second run finds the lock its first run took and answers its fence
  resent: asIs,
})

export const LOCK_RENEW = defineScript({
  name: 'lock-renew-1',
  keys: ['lock'],
  argv: { token: 'str', ttlMs: 'int', idleTtlMs: 'int' },
  decode: yes,
  // the token: a second run renews again
  resent: asIs,
})

export const LOCK_RELEASE = defineScript({
  name: 'lock-release-1',
  keys: ['lock'],
  argv: { token: 'str' },
  decode: yes,
  // false from a second run: the first one released it, or it was not held with the token any more —
  // not held with it either way
  resent: () => true,
})

// ---------------------------------------------------------------- checkpoints, handover markers

export type CheckpointSetReply =
  | { status: 'written'; revision: number }
  | { status: 'revision-conflict'; revision: number | null }
  | { status: 'fence-conflict'; fence: number }
  | { status: 'lease-expired'; fence: number }

/** What a fenced write's refusal says (includes/fenced.lua): -1 a newer fence, -2 the writer's lease expired. */
export type FencedWriteReply =
  { status: 'written' } | { status: 'fence-conflict'; fence: number } | { status: 'lease-expired'; fence: number }

function fencedRefusal(a: Row, key: string): { status: 'fence-conflict' | 'lease-expired'; fence: number } {
  if (a[0] === -1) return { status: 'fence-conflict', fence: Number(a[1]) }
  if (a[0] === -2) return { status: 'lease-expired', fence: Number(a[1]) }
  throw new CorruptStateError(key, `unexpected script status ${String(a[0])}`)
}

export const CHECKPOINT_SET = defineScript({
  name: 'checkpoint-set-2',
  keys: ['checkpoint', 'state'],
  argv: {
    expectedRevision: 'num?',
    flow: 'str',
    step: 'str',
    data: 'str',
    ownerReplicaId: 'str?',
    ownerIncarnation: 'str?',
    ownerFence: 'num?',
    ttlMs: 'num?',
    fingerprint: 'str?',
    answerBytes: 'num',
    writeId: 'str',
  },
  decode: (r, key): CheckpointSetReply => {
    const a = row(r, key)
    if (a[0] === 1) return { status: 'written', revision: Number(a[1]) }
    if (a[0] === 0) return { status: 'revision-conflict', revision: a[1] ? Number(a[1]) : null }
    return fencedRefusal(a, key)
  },
  // the write id: a second run answers 'written' while its write is current, but a refusal once
  // another write replaced it
  resent: unknownIf((r) => r.status !== 'written'),
})

export const CHECKPOINT_CLEAR = defineScript({
  name: 'checkpoint-clear-2',
  keys: ['checkpoint', 'state'],
  argv: { revision: 'num', fence: 'num?' },
  decode: (r): 'cleared' | 'changed' | 'superseded' | 'lease-expired' =>
    r === 1 ? 'cleared' : r === -1 ? 'superseded' : r === -2 ? 'lease-expired' : 'changed',
  // a second run finds the row its first run deleted gone
  resent: unknownIf((r) => r !== 'cleared'),
})

export const HANDOVER_SET = defineScript({
  name: 'handover-set-2',
  keys: ['marker', 'state'],
  argv: { name: 'str', replicaId: 'str', incarnation: 'str', ttlMs: 'num?', data: 'json?', fence: 'num?' },
  decode: (r, key): FencedWriteReply => {
    const a = row(r, key)
    return a[0] === 1 ? { status: 'written' } : fencedRefusal(a, key)
  },
  // the marker written again (a fenced second run refused: the first one may have written)
  resent: unknownIf((r) => r.status !== 'written'),
})

export const HANDOVER_CLEAR = defineScript({
  name: 'handover-clear-2',
  keys: ['marker', 'state'],
  argv: { incarnation: 'str?', fence: 'num?' },
  decode: (r): 'cleared' | 'absent' | 'superseded' | 'lease-expired' =>
    r === 1 ? 'cleared' : r === -1 ? 'superseded' : r === -2 ? 'lease-expired' : 'absent',
  // absent from a second run: the first one removed it, or it was not ours — none of ours left
  // either way; a fenced one refused: the marker is not the clearer's to remove any more either way
  resent: (r) => (r === 'absent' ? 'cleared' : r),
})

export const HANDOVER_TAKE = defineScript({
  name: 'handover-take-1',
  keys: ['marker'],
  argv: { unless: 'str?' },
  /** The marker's fields as a hash and whether it was taken (false: left, `unless`'s own), or null when there was none. */
  decode: (r): { taken: boolean; fields: Record<string, string> } | null => {
    if (!Array.isArray(r) || r.length === 0) return null
    const h: Record<string, string> = {}
    for (let i = 1; i + 1 < r.length; i += 2) h[String(r[i])] = String(r[i + 1])
    return { taken: r[0] === 1, fields: h }
  },
  // none from a second run: the first one may have taken the marker, and what it read is lost with
  // the reply
  resent: unknownIf((r) => r === null),
})
