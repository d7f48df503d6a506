import type { Groups } from '../registry.js'

/** watch (the dashboard), demo, completion. */
export function registerToolCommands(_groups: Groups): void {}
