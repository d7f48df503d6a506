import type { Groups } from '../registry.js'
import { completionCommand } from './completion.js'
import { demoCommand } from '../demo/index.js'
import { watchCommand } from '../tui/watch.js'

/** watch (the dashboard), demo, completion. */
export function registerToolCommands(groups: Groups): void {
  for (const c of [watchCommand(), demoCommand(), completionCommand()]) if (c) groups.program.addCommand(c)
}
