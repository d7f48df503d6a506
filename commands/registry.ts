import { Command } from 'commander'
import { registerReadCommands } from './read/index.js'
import { registerWriteCommands } from './write/index.js'
import { registerToolCommands } from './tools/index.js'
import { usageLine } from './output/report.js'
import type { Groups } from './groups.js'

export type { Groups } from './groups.js'

function group(program: Command, name: string, alias: string, description: string, examples: string[]): Command {
  const g = new Command(name)
    .alias(alias)
    .description(description)
    .addHelpText('after', `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}`)
  program.addCommand(g)
  return g
}

export function registerCommands(program: Command): void {
  const groups: Groups = {
    program,
    replicas: group(program, 'replicas', 'replica', 'live replicas; evict a zombie', [
      'botmesh-coord --prefix shop replicas ls',
      'botmesh-coord --prefix shop replicas ls --all',
      'botmesh-coord --prefix shop replica evict pod-a --if-incarnation 3f2a9c1b --reason "event loop stuck"',
    ]),
    leases: group(program, 'leases', 'lease', 'every lease: chat turns, provider leads, locks, other leads', [
      'botmesh-coord --prefix shop leases ls',
      'botmesh-coord --prefix shop leases ls --stale --sort expires',
    ]),
    chat: group(program, 'chat', 'chats', "chats' turns and queues; unstick one", [
      'botmesh-coord --prefix shop chat ls --waiting',
      'botmesh-coord --prefix shop chat inspect chat:42 --explain',
      'botmesh-coord --prefix shop chat release chat:42 --if-fence 1795982440397002 --reason "handler hung"',
    ]),
    provider: group(program, 'provider', 'providers', 'who leads each provider; ask the leader to step down', [
      'botmesh-coord --prefix shop provider ls',
      'botmesh-coord --prefix shop provider status whatsapp',
      'botmesh-coord --prefix shop provider yield whatsapp --if-fence 1795982440391117 --wait',
    ]),
    checkpoints: group(program, 'checkpoints', 'checkpoint', 'conversation checkpoints (persistent and ephemeral)', [
      'botmesh-coord --prefix shop checkpoints ls --ephemeral',
      'botmesh-coord --prefix shop checkpoint inspect chat:42',
      'botmesh-coord --prefix shop checkpoint rm chat:42 --dry-run',
    ]),
    handover: group(program, 'handover', 'handovers', 'handover markers of waiting async conversations', [
      'botmesh-coord --prefix shop handover ls',
    ]),
    locks: group(program, 'locks', 'lock', 'fenced locks and scheduler leads', [
      'botmesh-coord --prefix shop locks ls --held',
      'botmesh-coord --prefix shop lock release invoice:run --if-fence 1767225600000789 --reason "holder pod gone"',
    ]),
  }
  registerReadCommands(groups)
  registerWriteCommands(groups)
  registerToolCommands(groups)
  program.helpCommand(false)
  program.addCommand(helpCommand())
  program.addCommand(optionsCommand())
  configure(program)
}

/** The line each command's help has instead of the global options block (kubectl-style). */
export const GLOBAL_OPTIONS_LINE = 'Global options (--url, --context, --prefix, -o, --read-only, …): botmesh-coord options'

/** `options`: the global options every command accepts, before or after the subcommand. */
function optionsCommand(): Command {
  const cmd: Command = new Command('options')
    .description('the global options every command accepts (before or after the subcommand)')
    .addHelpText('after', '\nExample:\n  botmesh-coord options')
    .action(() => {
      let root = cmd
      while (root.parent) root = root.parent
      process.stdout.write(`${globalOptionsText(root)}\n`)
    })
  return cmd
}

/** The root's options, as its help prints them. */
export function globalOptionsText(root: Command): string {
  const help = root.createHelp()
  const width = help.padWidth(root, help)
  const lines = help.visibleOptions(root).map((o) => help.formatItem(help.optionTerm(o), width, help.optionDescription(o), help))
  return [
    'The following options can be passed to any command, before or after it (one marked env: also from that environment variable):',
    '',
    ...lines,
  ].join('\n')
}

/** The subcommand a path of names (or aliases) leads to, and how far it got. */
export function findCommand(root: Command, names: string[]): { cmd: Command; rest: string[] } {
  let cmd = root
  let i = 0
  for (; i < names.length; i++) {
    const next = cmd.commands.find((c) => c.name() === names[i] || c.aliases().includes(names[i]!))
    if (!next) break
    cmd = next
  }
  return { cmd, rest: names.slice(i) }
}

/** `help [command...]`: the help of any command, leaves included (`help chat inspect`). */
function helpCommand(): Command {
  const help: Command = new Command('help')
    .description('the help of a command, e.g. botmesh-coord help chat inspect')
    .argument('[command...]', 'the command, as you would type it')
    .action((names: string[]) => {
      let root = help
      while (root.parent) root = root.parent
      const { cmd, rest } = findCommand(root, names)
      if (rest.length) {
        const where = cmd.parent ? ` ${path(cmd)}` : ''
        process.stderr.write(usageLine(`unknown command '${rest[0]}' in help ${names.join(' ')} (see botmesh-coord${where} --help)`))
        process.exitCode = 2
        return
      }
      cmd.outputHelp()
    })
  return help
}

/**
 * Every command: one line pointing to the global options (`botmesh-coord options`) in its help, usage errors on one line with the suggestion and
 * the command's own `--help` (as JSON when JSON was asked for), exit code 2 through exitOverride.
 */
function configure(cmd: Command): void {
  cmd.exitOverride()
  cmd.showSuggestionAfterError(true)
  // The ~45 global options live in `botmesh-coord options`; each command's help points there in one line.
  cmd.configureHelp({ showGlobalOptions: false, sortSubcommands: false })
  if (cmd.parent) cmd.addHelpText('after', `\n${GLOBAL_OPTIONS_LINE}`)
  cmd.configureOutput({
    outputError: (str, write) =>
      write(
        usageLine(
          `${str
            .replace(/^error: /, '')
            .replace(/\s*\n\s*/g, ' ')
            .trim()} (see botmesh-coord${cmd.parent ? ` ${path(cmd)}` : ''} --help)`,
        ),
      ),
  })
  for (const sub of cmd.commands) configure(sub)
}

function path(cmd: Command): string {
  const names: string[] = []
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name())
  return names.join(' ')
}
