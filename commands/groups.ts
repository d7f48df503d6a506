import type { Command } from 'commander'

/** The command groups; read/, write/ and tools/ add their subcommands to them. */
export interface Groups {
  program: Command
  replicas: Command
  leases: Command
  chat: Command
  provider: Command
  checkpoints: Command
  handover: Command
  locks: Command
}
