/**
 * The diagnosis of one chat (`chat inspect --explain`): why it is (or is not) stuck, and what to do.
 * It does not judge the turn and the queue again: it takes the health model's findings (chatView
 * carries them), adds what only a whole chat shows — its checkpoint and its handover marker — and
 * reaches its verdict by the health model's one rule (chatVerdict), so the diagnosis and `chat ls`
 * cannot disagree about a chat.
 */
import { removeCommand, type DeployedFingerprints } from '../checkpoint-incidents.js'
import { chatVerdict, type Severity } from '../health/chat.js'
import { DOCTOR_COMMAND } from '../suggested-commands.js'
import type { ChatView } from './chat.js'

export interface Finding {
  /** Stable identifier, e.g. `holder-dead`. */
  code: string
  severity: Severity
  message: string
  /** What an operator can do about it. */
  fix?: string
}

export interface Explanation {
  /** stuck: something blocks the chat now; late: the holder is late to renew; attention: it moves but something is off; ok; idle: no turn, no queue. */
  verdict: 'stuck' | 'late' | 'expired' | 'attention' | 'ok' | 'idle' | 'unknown'
  summary: string
  findings: Finding[]
}

/** The deployed flows' fingerprints (flow → fingerprint; `fingerprint` alone: the one of the checkpoint's flow). */
type FingerprintOptions = { fingerprint?: string; fingerprints?: DeployedFingerprints }

/**
 * Why a chat is (or is not) stuck: the health model's findings about its turn and queue (chatView
 * carries them), and what its checkpoint and handover marker add.
 * `fingerprints`: the deployed flows' fingerprints (flow → fingerprint; `fingerprint` alone: the one of
 * the checkpoint's flow) — a mismatch with an ephemeral checkpoint is only knowable with them.
 */
export function explainChat(v: ChatView, opts: { fingerprint?: string; fingerprints?: DeployedFingerprints } = {}): Explanation {
  if (!v.exists) {
    return { verdict: 'unknown', summary: `no state for chat ${JSON.stringify(v.key)} under this prefix`, findings: [] }
  }
  const findings: Finding[] = [...v.findings, ...checkpointFindings(v, opts), ...handoverFindings(v)]
  const { state: verdict, finding } = chatVerdict(findings, { holder: v.holderState, queueLength: v.queueLength })
  // The finding that decided a stuck or attention verdict says why; otherwise the health model's reason does.
  const summary =
    verdict === 'stuck'
      ? `stuck: ${finding!.message}`
      : verdict === 'attention'
        ? `moving, but: ${finding!.message}`
        : `${verdict}: ${v.reason}`
  return { verdict, summary, findings }
}

/** What the chat's checkpoint adds: a stale write, a fence older or newer than the turn's, a flow version the runtime will not resume. */
function checkpointFindings(v: ChatView, opts: FingerprintOptions): Finding[] {
  const cp = v.checkpoint
  if (!cp) return []
  const findings: Finding[] = []
  const h = v.holder
  if (v.staleWrite) {
    findings.push({
      code: 'checkpoint-stale-write',
      severity: 'warning',
      message: v.staleWrite.message,
      fix: `check that the writer's runtime passes turn.fence to setCheckpointIf; remove it: ${v.staleWrite.fix}`,
    })
  } else if (cp.fence !== null && v.fence !== null && cp.fence < v.fence) {
    const holderNote = h
      ? `the holder ${h.replicaId} (fence ${v.fence}) has not written it yet`
      : `the turn has moved on to fence ${v.fence}`
    findings.push({
      code: 'checkpoint-older-fence',
      severity: cp.replicaId && h && cp.replicaId !== h.replicaId && !cp.ownerAlive ? 'warning' : 'info',
      message: `the checkpoint was written under an older fence ${cp.fence} by ${cp.replicaId ?? '?'}${cp.ownerAlive ? '' : ' (gone)'}; ${holderNote}, and resumes from it`,
    })
  } else if (cp.fence !== null && v.fence !== null && cp.fence > v.fence) {
    findings.push({
      code: 'checkpoint-newer-fence',
      severity: 'problem',
      message: `the checkpoint's owner fence ${cp.fence} is newer than the chat's fence ${v.fence}: the chat's turn state was lost (failover, eviction or a flush) after the checkpoint was written`,
      fix: `run ${DOCTOR_COMMAND} (maxmemory-policy, persistence); the next grant will be refused checkpoint writes until its fence passes it`,
    })
  }
  if (cp.ephemeral) {
    const deployed = opts.fingerprints?.[cp.flow] ?? opts.fingerprint
    if (deployed !== undefined && deployed !== cp.fingerprint) {
      findings.push({
        code: 'fingerprint-mismatch',
        severity: 'problem',
        message: `the ephemeral checkpoint's flow fingerprint ${cp.fingerprint} differs from ${deployed}, the deployed ${cp.flow}: a replica running that flow version will not resume it (fallback changed: the conversation restarts)`,
        fix: `finish the rollout, or remove it: ${removeCommand(v.key, cp.revision)}`,
      })
    } else if (deployed === undefined) {
      findings.push({
        code: 'fingerprint-unchecked',
        severity: 'info',
        message: `ephemeral checkpoint (fingerprint ${cp.fingerprint}); pass --fingerprint ${cp.flow}=<fingerprint> to check it against the deployed flow`,
      })
    }
  }
  return findings
}

/** What the chat's handover marker adds: an async conversation whose replica is gone waits for the next taker. */
function handoverFindings(v: ChatView): Finding[] {
  const ho = v.handover
  if (!ho || ho.ownerAlive) return []
  return [
    {
      code: 'handover-pending',
      severity: 'info',
      message: `an async conversation ${JSON.stringify(ho.name)} of ${ho.replicaId} (gone) waits: the next replica to take the chat applies its handover fallback`,
    },
  ]
}
