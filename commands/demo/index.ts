import type { Command } from 'commander'

/** `demo`: real replicas on a local Redis (demo issue). null until built. */
export function demoCommand(): Command | null {
  return null
}
