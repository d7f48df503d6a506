import type { Groups } from '../groups.js'
import { completeCommand, completionCommand } from './completion.js'
import { demoCommand } from '../demo/index.js'
import { watchCommand } from '../tui/watch.js'
import { configCommand } from '../config/index.js'
import { versionCommand } from './version.js'
import { exporterCommand } from '../exporter/command.js'
import { snapshotCommand } from '../snapshot/command.js'

/** watch (the dashboard), exporter (Prometheus), demo, config (contexts), version, completion. */
export function registerToolCommands(groups: Groups): void {
  for (const c of [
    watchCommand(),
    snapshotCommand(),
    exporterCommand(),
    demoCommand(),
    configCommand(),
    versionCommand(),
    completionCommand(),
    completeCommand(),
  ]) {
    groups.program.addCommand(c)
  }
}
