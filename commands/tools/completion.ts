import { Command, type Option } from 'commander'
import { usage, describeError } from '../output/errors.js'

/** The command tree as completion needs it: path → subcommands and options. */
interface Node {
  path: string
  subcommands: string[]
  options: string[]
}

function longFlags(options: readonly Option[]): string[] {
  return options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)))
}

function walk(cmd: Command, prefix: string, out: Node[]): void {
  const subs = cmd.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden)
  out.push({ path: prefix, subcommands: subs.flatMap((c) => [c.name(), ...c.aliases()]), options: [...longFlags(cmd.options), '--help'] })
  for (const c of subs) for (const name of [c.name(), ...c.aliases()]) walk(c, prefix ? `${prefix} ${name}` : name, out)
}

function valueOptions(program: Command): string[] {
  const all: Option[] = []
  const visit = (c: Command) => {
    all.push(...c.options)
    c.commands.forEach(visit)
  }
  visit(program)
  return [...new Set(all.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f))))]
}

export function bashScript(program: Command): string {
  const nodes: Node[] = []
  walk(program, '', nodes)
  const globals = longFlags(program.options).join(' ')
  const cases = nodes.map((n) => `    "${n.path}") words="${[...n.subcommands, ...n.options].join(' ')}" ;;`).join('\n')
  return `# botmesh-coord completion for bash. Install: botmesh-coord completion bash > /etc/bash_completion.d/botmesh-coord
_botmesh_coord() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="" words="" i skip=0
  case " ${valueOptions(program).join(' ')} " in *" $prev "*) COMPREPLY=(); return 0 ;; esac
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ $skip == 1 ]]; then skip=0; continue; fi
    case "\${COMP_WORDS[i]}" in
      ${valueOptions(program).join('|')}) skip=1 ;;
      -*) ;;
      *) cmd="\${cmd:+$cmd }\${COMP_WORDS[i]}" ;;
    esac
  done
  case "$cmd" in
${cases}
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words ${globals}" -- "$cur"))
}
complete -F _botmesh_coord botmesh-coord
`
}

export function zshScript(program: Command): string {
  return `#compdef botmesh-coord
# botmesh-coord completion for zsh. Install: botmesh-coord completion zsh > "\${fpath[1]}/_botmesh-coord"
autoload -U +X bashcompinit && bashcompinit
${bashScript(program).split('\n').slice(1).join('\n')}`
}

export function fishScript(program: Command): string {
  const nodes: Node[] = []
  walk(program, '', nodes)
  const lines = [
    '# botmesh-coord completion for fish. Install: botmesh-coord completion fish > ~/.config/fish/completions/botmesh-coord.fish',
    'complete -c botmesh-coord -f',
  ]
  const values = new Set(valueOptions(program))
  for (const o of program.options) {
    if (!o.long) continue
    lines.push(`complete -c botmesh-coord -l ${o.long.slice(2)}${values.has(o.long) ? ' -r' : ''} -d ${JSON.stringify(o.description)}`)
  }
  const top = nodes.find((n) => n.path === '')!
  lines.push(`complete -c botmesh-coord -n __fish_use_subcommand -a ${JSON.stringify(top.subcommands.join(' '))}`)
  for (const n of nodes) {
    const parts = n.path.split(' ')
    if (!n.path || parts.length !== 1) continue
    const cond = `__fish_seen_subcommand_from ${parts[0]}`
    if (n.subcommands.length)
      lines.push(`complete -c botmesh-coord -n ${JSON.stringify(cond)} -a ${JSON.stringify(n.subcommands.join(' '))}`)
    for (const sub of nodes.filter((m) => m.path.startsWith(`${n.path} `))) {
      const name = sub.path.split(' ')[1]
      for (const f of sub.options.filter((x) => x.startsWith('--') && x !== '--help')) {
        lines.push(`complete -c botmesh-coord -n ${JSON.stringify(`${cond}; and __fish_seen_subcommand_from ${name}`)} -l ${f.slice(2)}`)
      }
    }
    for (const f of n.options.filter((x) => x.startsWith('--') && x !== '--help'))
      lines.push(`complete -c botmesh-coord -n ${JSON.stringify(cond)} -l ${f.slice(2)}`)
  }
  return lines.join('\n') + '\n'
}

/** `completion bash|zsh|fish`: a completion script from the registered commands (no Redis needed). */
export function completionCommand(): Command {
  return new Command('completion')
    .description('print a shell completion script')
    .argument('<shell>', 'bash, zsh or fish')
    .addHelpText(
      'after',
      `
Examples:
  source <(botmesh-coord completion bash)
  botmesh-coord completion zsh > "\${fpath[1]}/_botmesh-coord"
  botmesh-coord completion fish > ~/.config/fish/completions/botmesh-coord.fish`,
    )
    .action((shell: string, _o: unknown, cmd: Command) => {
      try {
        let program = cmd
        while (program.parent) program = program.parent
        const make = { bash: bashScript, zsh: zshScript, fish: fishScript }[shell]
        if (!make) throw usage(`completion: unknown shell ${shell} (bash, zsh or fish)`)
        process.stdout.write(make(program))
      } catch (err) {
        const { line, code } = describeError(err)
        process.stderr.write(`botmesh-coord: ${line}\n`)
        process.exitCode = code
      }
    })
}
