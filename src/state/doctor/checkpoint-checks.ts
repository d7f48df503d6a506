/** The checks of the checkpoints: written from their chat's turn, of the flow version deployed. */
import { shellWord } from '../health.js'
import type { DoctorCheck, DoctorFinding } from './types.js'
import type { CheckpointFold } from './folds.js'

const staleWrites: DoctorCheck = {
  id: 'stale-writes',
  title: "checkpoints written by their chat's turn",
  run(s) {
    const { stale, checked } = s.checkpoints
    if (!stale.count)
      return [{ id: 'stale-writes', status: 'ok', detail: `every checkpoint written by its chat's turn (${checked} checked)` }]
    return [
      {
        id: 'stale-writes',
        status: 'fail',
        detail: `${stale.count} checkpoint(s) written from outside the chat's turn: ${stale.items
          .map(
            (w) => `${w.key} (revision ${w.revision} by ${w.replicaId} ${w.fence === null ? 'without a fence' : `under fence ${w.fence}`})`,
          )
          .join(', ')}${stale.count > 3 ? ', …' : ''}; the next turn resumes from a state its holder did not write`,
        fix: `pass turn.fence to setCheckpointIf in that runtime; remove each: ${stale.items[0]!.fix}${stale.count > 1 ? ' (botmesh-coord chat inspect <key> --explain names each one)' : ''}`,
      },
    ]
  },
}

/** Ephemeral checkpoints of a flow version other than the deployed one (given with --fingerprint flow=fp). */
function againstDeployed(cps: CheckpointFold, deployed: Record<string, string>): DoctorFinding {
  if (!cps.mismatched)
    return {
      id: 'flow-versions',
      status: 'ok',
      detail: `every ephemeral checkpoint of ${Object.keys(deployed).join(', ')} matches the deployed fingerprint`,
    }
  const perFlow = [...cps.mismatchedPerFlow]
  return {
    id: 'flow-versions',
    status: 'warn',
    detail: `${cps.mismatched} ephemeral checkpoint(s) of a flow version no longer deployed: ${perFlow
      .map(([flow, n]) => `${flow} ${n} (deployed ${deployed[flow]})`)
      .join(', ')}; the runtime will not resume them (fallback changed: the conversation restarts)`,
    fix: perFlow
      .map(([flow]) => `botmesh-coord checkpoints rm --flow ${shellWord(flow)} --ephemeral --fingerprint-not ${shellWord(deployed[flow]!)}`)
      .join('; '),
  }
}

/** Without deployed fingerprints: more than one version per flow. */
function mixedVersions(cps: CheckpointFold): DoctorFinding {
  const mixed = [...cps.fingerprints].filter(([, fps]) => fps.size > 1)
  if (!mixed.length) return { id: 'flow-versions', status: 'ok', detail: 'one flow version per flow among the ephemeral checkpoints' }
  return {
    id: 'flow-versions',
    status: 'warn',
    detail: `ephemeral checkpoints of more than one version of ${mixed
      .map(([flow, fps]) => `${flow} (${[...fps].map(([fp, n]) => `${fp}: ${n}`).join(', ')})`)
      .join(', ')}: those of a version no longer deployed will not be resumed`,
    fix: 'botmesh-coord doctor --fingerprint <flow>=<deployed fingerprint> counts them; botmesh-coord checkpoints ls --fingerprint <flow>=<fp> --mismatched lists them',
  }
}

const flowVersions: DoctorCheck = {
  id: 'flow-versions',
  title: 'ephemeral checkpoints of the deployed flow version',
  run: (s) => [s.deployed ? againstDeployed(s.checkpoints, s.deployed) : mixedVersions(s.checkpoints)],
}

export const CHECKPOINT_CHECKS: DoctorCheck[] = [staleWrites, flowVersions]
