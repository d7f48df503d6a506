import { Command } from 'commander'
import { registerReadCommands } from './read/index.js'
import { registerWriteCommands } from './write/index.js'
import { registerToolCommands } from './tools/index.js'

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

function group(program: Command, name: string, alias: string, description: string): Command {
  const g = new Command(name).alias(alias).description(description)
  g.exitOverride()
  program.addCommand(g)
  return g
}

export function registerCommands(program: Command): void {
  const groups: Groups = {
    program,
    replicas: group(program, 'replicas', 'replica', 'live replicas; evict a zombie'),
    leases: group(program, 'leases', 'lease', 'every lease: chat turns, provider leads, locks, other leads'),
    chat: group(program, 'chat', 'chats', "chats' turns and queues; unstick one"),
    provider: group(program, 'provider', 'providers', 'who leads each provider; ask the leader to step down'),
    checkpoints: group(program, 'checkpoints', 'checkpoint', 'conversation checkpoints (persistent and ephemeral)'),
    handover: group(program, 'handover', 'handovers', 'handover markers of waiting async conversations'),
    locks: group(program, 'locks', 'lock', 'fenced locks'),
  }
  registerReadCommands(groups)
  registerWriteCommands(groups)
  registerToolCommands(groups)
}
