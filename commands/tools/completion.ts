import type { Command } from 'commander'

/** `completion bash|zsh|fish` (read-side issue). null until built. */
export function completionCommand(): Command | null {
  return null
}
