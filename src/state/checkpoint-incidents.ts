/**
 * Checkpoint incidents, decided in one place (pure: chat inspect --explain, checkpoints ls and doctor
 * all ask here):
 * - a stale write: a checkpoint written by someone who did not hold the chat's turn at the time —
 *   after the current holder was granted it, by another writer or under an older fence; or without a
 *   fence by a replica that is neither the holder nor one of the last two holders (a runtime that did
 *   not pass `turn.fence` to `setCheckpointIf`, so Redis could not refuse it);
 * - a fingerprint mismatch: an ephemeral checkpoint written by a flow version other than the one
 *   deployed (the fingerprints the operator passes): the runtime will not resume it (`changed`).
 */
import type { Holder } from '../wire/types.js'
import type { ChatSnapshot, FlowCheckpoint } from './decode.js'
import { shellWord } from './health.js'

export interface StaleCheckpointWrite {
  key: string
  revision: number
  /** The writer. */
  replicaId: string
  incarnation: string
  /** The writer's fence (null: an unfenced write). */
  fence: number | null
  /** The chat's fence when read. */
  chatFence: number | null
  /** Why it is stale: written while another held the turn; under an older fence after a newer grant; unfenced by a replica that held none of the last turns. */
  reason: 'another-holder' | 'older-fence' | 'not-a-holder'
  message: string
  /** The one command that removes it (compare-and-set on its revision). */
  fix: string
}

const same = (a: Holder | null | undefined, b: Holder | null | undefined) =>
  Boolean(a && b && a.replicaId === b.replicaId && a.incarnation === b.incarnation)

export function removeCommand(key: string, revision: number): string {
  return `botmesh-coord checkpoint rm ${shellWord(key)} --if-revision ${revision}`
}

/** What staleCheckpointWrite reads of a chat: its fence, its holder and when it was granted, its last holders (a ChatSnapshot is one). */
export type ChatTurn = Pick<ChatSnapshot, 'fence' | 'previousHolder' | 'lastHolder'> & { holder: (Holder & { grantedAtMs: number }) | null }

/** What staleCheckpointWrite reads of a checkpoint: its key, revision, writer and when it was written (a FlowCheckpoint is one). */
export type CheckpointWrite = Pick<FlowCheckpoint, 'key' | 'revision' | 'owner' | 'updatedAt'>

/** A checkpoint written from outside the turn that was current when it was written, or null. */
export function staleCheckpointWrite(chat: ChatTurn | null, cp: CheckpointWrite): StaleCheckpointWrite | null {
  const owner = cp.owner
  if (!owner || !chat) return null
  const h = chat.holder
  // Built only for a stale write (doctor judges every checkpoint: most are not).
  const writer = () =>
    `${owner.replicaId} (${owner.incarnation.slice(0, 8)}) ${owner.fence === null ? 'without a fence' : `under fence ${owner.fence}`}`
  const base = () => ({ key: cp.key, revision: cp.revision, ...owner, chatFence: chat.fence, fix: removeCommand(cp.key, cp.revision) })
  const tail = 'the next turn resumes from a state its holder did not write'
  // Written after the current grant: only the holder, under the current fence, may have written it.
  if (h && h.grantedAtMs > 0 && cp.updatedAt > h.grantedAtMs) {
    if (!same(owner, h))
      return {
        ...base(),
        reason: 'another-holder',
        message: `the checkpoint (revision ${cp.revision}) was written by ${writer()} while ${h.replicaId} held the turn (fence ${chat.fence}, granted before the write): a write from a stale owner; ${tail}`,
      }
    if (owner.fence !== null && chat.fence !== null && owner.fence < chat.fence)
      return {
        ...base(),
        reason: 'older-fence',
        message: `the checkpoint (revision ${cp.revision}) was written by ${writer()}, a fence older than the turn's ${chat.fence} granted before the write: a write from a stale turn; ${tail}`,
      }
    return null
  }
  // Unfenced, and by nobody who held one of the turns the chat remembers.
  if (owner.fence !== null) return null
  const remembered = [h, chat.previousHolder, chat.lastHolder].filter((x): x is Holder => Boolean(x))
  if (remembered.length && !remembered.some((x) => same(x, owner)))
    return {
      ...base(),
      reason: 'not-a-holder',
      message: `the checkpoint (revision ${cp.revision}) was written by ${writer()}, which is neither the chat's holder nor its last holders (${[...new Set(remembered.map((x) => x.replicaId))].join(', ')}): a write from a stale owner; ${tail}`,
    }
  return null
}

/** Deployed flow fingerprints, by flow name (what the operator's code computes for the running version). */
export type DeployedFingerprints = Record<string, string>

export interface FingerprintMismatch {
  key: string
  flow: string
  revision: number
  /** The fingerprint the checkpoint was written with. */
  fingerprint: string
  /** The one deployed now. */
  deployed: string
  /** What the runtime does with it at the chat's next message: it does not resume it. */
  fallback: 'changed'
}

/** An ephemeral checkpoint of a deployed flow written by another version of it, or null (persistent, flow not given, or the same). */
export function fingerprintMismatch(cp: FlowCheckpoint, deployed: DeployedFingerprints): FingerprintMismatch | null {
  const want = Object.prototype.hasOwnProperty.call(deployed, cp.flow) ? deployed[cp.flow] : undefined
  if (!cp.ephemeral || want === undefined || cp.ephemeral.fingerprint === want) return null
  return { key: cp.key, flow: cp.flow, revision: cp.revision, fingerprint: cp.ephemeral.fingerprint, deployed: want, fallback: 'changed' }
}

/** Ephemeral checkpoints' fingerprints by flow: more than one for a flow means two versions of it wrote (a deploy). */
export function fingerprintsByFlow(cps: FlowCheckpoint[]): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>()
  for (const cp of cps) {
    if (!cp.ephemeral) continue
    const m = out.get(cp.flow) ?? new Map<string, number>()
    m.set(cp.ephemeral.fingerprint, (m.get(cp.ephemeral.fingerprint) ?? 0) + 1)
    out.set(cp.flow, m)
  }
  return out
}
