import type { Groups } from '../registry.js'
import { chatRelease, chatSkip } from './chat.js'
import { checkpointRm } from './checkpoint-rm.js'
import { lockRelease } from './lock-release.js'
import { providerYield } from './provider-yield.js'
import { replicaEvict } from './replica-evict.js'

/** Interventions: provider yield, chat release/skip, checkpoint rm, lock release, replica evict. */
export function registerWriteCommands(groups: Groups): void {
  groups.provider.addCommand(providerYield())
  groups.chat.addCommand(chatRelease())
  groups.chat.addCommand(chatSkip())
  groups.checkpoints.addCommand(checkpointRm())
  groups.locks.addCommand(lockRelease())
  groups.replicas.addCommand(replicaEvict())
}
