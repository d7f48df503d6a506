import type { Groups } from '../registry.js'
import { replicasLs } from './replicas-ls.js'

/** The read side: listings and inspection. */
export function registerReadCommands(groups: Groups): void {
  groups.replicas.addCommand(replicasLs())
}
