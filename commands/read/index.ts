import type { Groups } from '../groups.js'
import { replicasLs } from './replicas-ls.js'
import { leasesLs } from './leases-ls.js'
import { chatLs } from './chat-ls.js'
import { chatInspect } from './chat-inspect.js'
import { providerLs, providerStatus } from './providers.js'
import { checkpointInspect, checkpointsLs } from './checkpoints.js'
import { handoverLs } from './handover-ls.js'
import { handoverInspect } from './handover-inspect.js'
import { locksLs } from './locks-ls.js'
import { eventsCommand } from './events.js'
import { doctorCommand } from './doctor.js'

/** The read side: listings and inspection. Nothing here writes to Redis. */
export function registerReadCommands(groups: Groups): void {
  groups.replicas.addCommand(replicasLs())
  groups.leases.addCommand(leasesLs())
  groups.chat.addCommand(chatLs())
  groups.chat.addCommand(chatInspect())
  groups.provider.addCommand(providerLs())
  groups.provider.addCommand(providerStatus())
  groups.checkpoints.addCommand(checkpointsLs())
  groups.checkpoints.addCommand(checkpointInspect())
  groups.handover.addCommand(handoverLs())
  groups.handover.addCommand(handoverInspect())
  groups.locks.addCommand(locksLs())
  groups.program.addCommand(eventsCommand())
  groups.program.addCommand(doctorCommand())
}
