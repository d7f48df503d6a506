import type { Groups } from '../groups.js'
import { chatRelease, chatSkip } from './chat.js'
import { checkpointRm } from './checkpoint-rm.js'
import { checkpointExtend } from './checkpoint-extend.js'
import { handoverRm } from './handover-rm.js'
import { lockRelease } from './lock-release.js'
import { providerYield } from './provider-yield.js'
import { replicaEvict } from './replica-evict.js'

/** Interventions: provider yield, chat release/skip, checkpoint rm/extend, handover rm, lock release, replica evict. */
export function registerWriteCommands(groups: Groups): void {
  groups.provider.addCommand(providerYield())
  groups.chat.addCommand(chatRelease())
  groups.chat.addCommand(chatSkip())
  groups.checkpoints.addCommand(checkpointRm())
  groups.checkpoints.addCommand(checkpointExtend())
  groups.handover.addCommand(handoverRm())
  groups.locks.addCommand(lockRelease())
  groups.replicas.addCommand(replicaEvict())
}
