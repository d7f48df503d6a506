import type { Command } from 'commander'

/** `watch`: the live ink dashboard (dashboard issue). null until built. */
export function watchCommand(): Command | null {
  return null
}
