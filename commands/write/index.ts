import type { Groups } from '../registry.js'

/** Interventions (issue: the write side): provider yield, chat release/skip, checkpoint rm, lock release, replica evict. */
export function registerWriteCommands(_groups: Groups): void {}
