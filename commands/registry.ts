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
  for (const c of program.commands) oneLineErrors(c)
}

/**
 * Commander prints a subcommand's usage errors with its own defaults (no `botmesh-coord:` prefix,
 * "Did you mean" on a second line): give every command the one-line form and exit code 2.
 */
function oneLineErrors(cmd: Command): void {
  cmd.exitOverride()
  cmd.showSuggestionAfterError(true)
  cmd.configureOutput({
    outputError: (str, write) =>
      write(
        `botmesh-coord: ${str
          .replace(/^error: /, '')
          .replace(/\s*\n\s*/g, ' ')
          .trim()} (see botmesh-coord ${path(cmd)} --help)\n`,
      ),
  })
  for (const sub of cmd.commands) oneLineErrors(sub)
}

function path(cmd: Command): string {
  const names: string[] = []
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name())
  return names.join(' ')
}
