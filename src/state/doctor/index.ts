/** Doctor's checks, in the order of its report (./types.ts says what a check is). */
import { REDIS_CHECKS } from './redis-checks.js'
import { PREFIX_CHECKS } from './prefix-checks.js'
import { REPLICA_CHECKS } from './replica-checks.js'
import { LEASE_CHECKS } from './lease-checks.js'
import { CHECKPOINT_CHECKS } from './checkpoint-checks.js'
import type { DoctorCheck, DoctorState, DoctorFinding } from './types.js'

export const DOCTOR_CHECKS: readonly DoctorCheck[] = [
  ...REDIS_CHECKS,
  ...PREFIX_CHECKS,
  ...REPLICA_CHECKS,
  ...LEASE_CHECKS,
  ...CHECKPOINT_CHECKS,
]

/** Every check's findings, in report order. */
export function runDoctorChecks(state: DoctorState, checks: readonly DoctorCheck[] = DOCTOR_CHECKS): DoctorFinding[] {
  return checks.flatMap((c) => c.run(state))
}

export { clusterOn, infoField, volatileMasters } from './redis-checks.js'
export { unindexedReplicas } from './replica-checks.js'
export {
  ChatFold,
  ChatTurns,
  CheckpointWrites,
  CheckpointFold,
  CorruptFold,
  LeaseFold,
  Worst,
  folding,
  EXAMPLES,
  FOLD_BATCH,
  LISTED_KINDS,
  type ListedKind,
  type CorruptKey,
  type ListingDecoder,
} from './folds.js'
export type { CheckStatus, DoctorCheck, DoctorNode, DoctorState, DoctorFinding, Probed, SchemaState, Unanswered } from './types.js'
