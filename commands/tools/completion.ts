/**
 * Shell completion (bash, zsh, fish) generated from the registered commands: subcommands and their
 * aliases, options, the values of every choice option, and — by a bounded read of Redis through the
 * hidden `__complete` command — replica ids, lead (provider) names, lock names and chat keys. The
 * script itself needs no Redis; a completion that cannot read Redis within a second offers nothing.
 */
import { Command, type Option } from 'commander'
import type { Context } from '../context.js'
import { openContext } from '../context.js'
import { reportError } from '../output/report.js'
import { usage } from '../output/errors.js'
import { listContexts } from '../config/contexts.js'
import { visible as shown } from '../output/safe-text.js'

/** What a value is, for completion. */
export type CompletionKind = 'replica' | 'lead' | 'lock' | 'chat' | 'checkpoint' | 'handover' | 'context' | 'file'

/** The arguments of commands, by canonical path: what each positional argument names. */
export const ARGUMENT_KINDS: Record<string, CompletionKind[]> = {
  'chat inspect': ['chat'],
  'chat release': ['chat'],
  'chat skip': ['chat'],
  'checkpoints inspect': ['checkpoint'],
  'checkpoints rm': ['checkpoint'],
  'checkpoints extend': ['checkpoint'],
  'handover inspect': ['handover'],
  'handover rm': ['handover'],
  'provider status': ['lead'],
  'provider yield': ['lead'],
  'locks release': ['lock'],
  'replicas evict': ['replica'],
  'config use-context': ['context'],
}

/** Options whose value names something completion can list. */
export const OPTION_KINDS: Record<string, CompletionKind> = {
  '--replica': 'replica',
  '--to': 'replica',
  '--context': 'context',
  '--tls-ca': 'file',
  '--password-file': 'file',
  '--from': 'file',
}

interface Node {
  /** Every spelling of the path (aliases included), e.g. `chat inspect`, `chats show`. */
  paths: string[]
  canonical: string
  subcommands: string[]
  options: Option[]
}

const visible = (c: Command) => !(c as Command & { _hidden?: boolean })._hidden

function walk(cmd: Command, paths: string[], canonical: string, out: Node[]): void {
  const subs = cmd.commands.filter(visible)
  out.push({ paths, canonical, subcommands: subs.flatMap((c) => [c.name(), ...c.aliases()]), options: [...cmd.options] })
  for (const c of subs) {
    const names = [c.name(), ...c.aliases()]
    walk(
      c,
      paths.flatMap((p) => names.map((n) => (p ? `${p} ${n}` : n))),
      canonical ? `${canonical} ${c.name()}` : c.name(),
      out,
    )
  }
}

function nodes(program: Command): Node[] {
  const out: Node[] = []
  walk(program, [''], '', out)
  return out
}

const flags = (o: Option) => [o.long, o.short].filter((f): f is string => Boolean(f))
const takesValue = (o: Option) => o.required || o.optional
const choicesOf = (o: Option) => (o as Option & { argChoices?: string[] }).argChoices ?? []

/** Every option of the tree that takes a value, once, with its choices or kind. */
function valueOptions(program: Command): Array<{ flags: string[]; choices: string[]; kind: CompletionKind | null }> {
  const seen = new Map<string, { flags: string[]; choices: string[]; kind: CompletionKind | null }>()
  const visit = (c: Command) => {
    for (const o of c.options.filter(takesValue)) {
      const key = flags(o).join(' ')
      if (!seen.has(key)) seen.set(key, { flags: flags(o), choices: choicesOf(o), kind: o.long ? (OPTION_KINDS[o.long] ?? null) : null })
    }
    c.commands.forEach(visit)
  }
  visit(program)
  return [...seen.values()]
}

const words = (xs: string[]) => xs.join(' ')

/** How to complete the value of one option: its choices, a file, or names read from Redis. */
function bashValue(o: Option): string | null {
  const kind = o.long ? OPTION_KINDS[o.long] : undefined
  if (choicesOf(o).length) return `COMPREPLY=($(compgen -W "${words(choicesOf(o))}" -- "$cur"))`
  if (kind === 'file') return 'COMPREPLY=($(compgen -f -- "$cur"))'
  if (kind) return `_botmesh_coord_dynamic ${kind}`
  return takesValue(o) ? 'COMPREPLY=()' : null
}

export function bashScript(program: Command): string {
  const all = nodes(program)
  const values = valueOptions(program)
  const globals = program.options.flatMap(flags)
  // The value of an option: per command (two commands' --sort differ), the global ones anywhere.
  const valueCases = [
    ...all
      .filter((n) => n.canonical)
      .flatMap((n) =>
        n.options.flatMap((o) => {
          const how = bashValue(o)
          return how ? n.paths.map((p) => `    "${p} ${flags(o).join(`"|"${p} `)}") ${how}; return 0 ;;`) : []
        }),
      ),
    ...program.options.flatMap((o) => {
      const how = bashValue(o)
      return how ? [`    *" ${flags(o).join('"|*" ')}") ${how}; return 0 ;;`] : []
    }),
  ].join('\n')
  const cases = all
    .flatMap((n) => n.paths.map((p) => `    "${p}") words="${words([...n.subcommands, ...n.options.flatMap(flags), '--help'])}" ;;`))
    .join('\n')
  const argCases = all
    .flatMap((n) =>
      ARGUMENT_KINDS[n.canonical]?.length ? n.paths.map((p) => `           "${p}") args="${words(ARGUMENT_KINDS[n.canonical]!)}" ;;`) : [],
    )
    .join('\n')
  return `# botmesh-coord completion for bash. Install: botmesh-coord completion bash > /etc/bash_completion.d/botmesh-coord
_botmesh_coord_dynamic() {
  local IFS=$'\\n'
  COMPREPLY=($(compgen -W "$(botmesh-coord __complete "$1" -- "\${COMP_WORDS[@]:1:$((COMP_CWORD - 1))}" 2>/dev/null)" -- "$cur"))
  type __ltrim_colon_completions >/dev/null 2>&1 && __ltrim_colon_completions "$cur"
}
_botmesh_coord() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="" words="" args="" i skip=0 npos=0
  type _get_comp_words_by_ref >/dev/null 2>&1 && _get_comp_words_by_ref -n : cur prev
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ $skip == 1 ]]; then skip=0; continue; fi
    case "\${COMP_WORDS[i]}" in
      ${values.flatMap((v) => v.flags).join('|')}) [[ $i -lt $((COMP_CWORD - 1)) ]] && skip=1 ;;
      -*) ;;
      *) if [[ -n "$args" ]]; then npos=$((npos + 1)); else cmd="\${cmd:+$cmd }\${COMP_WORDS[i]}"; fi
         case "$cmd" in
${argCases}
         esac ;;
    esac
  done
  case "$cmd $prev" in
${valueCases}
  esac
  case "$cmd" in
${cases}
    *) words="" ;;
  esac
  if [[ "$cur" != -* && -n "$args" ]]; then
    local kinds=($args)
    local kind="\${kinds[$npos]}"
    if [[ -n "$kind" ]]; then _botmesh_coord_dynamic "$kind"; return 0; fi
  fi
  COMPREPLY=($(compgen -W "$words ${words(globals)}" -- "$cur"))
}
complete -F _botmesh_coord botmesh-coord
`
}

export function zshScript(program: Command): string {
  return `#compdef botmesh-coord
# botmesh-coord completion for zsh. Install: botmesh-coord completion zsh > "\${fpath[1]}/_botmesh-coord"
autoload -U +X bashcompinit && bashcompinit
${bashScript(program).split('\n').slice(1).join('\n')}
# Autoloaded from $fpath, this file is the body of _botmesh-coord, run at the first Tab: complete that
# Tab too (the next ones go straight to _bash_complete through the line above).
if [[ "\${funcstack[1]}" == _botmesh-coord ]]; then _bash_complete -F _botmesh_coord "$@"; fi
`
}

export function fishScript(program: Command): string {
  const all = nodes(program)
  const dynamic = (kind: CompletionKind) =>
    kind === 'file' ? '-rF' : `-xa "(botmesh-coord __complete ${kind} -- (commandline -opc)[2..-1] 2>/dev/null)"`
  const optionLine = (cond: string, o: Option) => {
    const parts = ['complete -c botmesh-coord']
    if (cond) parts.push(`-n ${JSON.stringify(cond)}`)
    if (o.long) parts.push(`-l ${o.long.slice(2)}`)
    if (o.short) parts.push(`-s ${o.short.slice(1)}`)
    const kind = o.long ? OPTION_KINDS[o.long] : undefined
    if (choicesOf(o).length) parts.push(`-xa ${JSON.stringify(choicesOf(o).join(' '))}`)
    else if (kind) parts.push(dynamic(kind))
    else if (takesValue(o)) parts.push('-r')
    parts.push(`-d ${JSON.stringify(o.description)}`)
    return parts.join(' ')
  }
  const lines = [
    '# botmesh-coord completion for fish. Install: botmesh-coord completion fish > ~/.config/fish/completions/botmesh-coord.fish',
    'complete -c botmesh-coord -f',
  ]
  for (const o of program.options) lines.push(optionLine('', o))
  const top = all.find((n) => n.canonical === '')!
  lines.push(`complete -c botmesh-coord -n __fish_use_subcommand -a ${JSON.stringify(top.subcommands.join(' '))}`)
  for (const n of all) {
    if (!n.canonical) continue
    const depth = n.canonical.split(' ').length
    for (const p of n.paths) {
      const parts = p.split(' ')
      const cond = parts.map((w) => `__fish_seen_subcommand_from ${w}`).join('; and ')
      // A group's subcommands until one of them is typed (then its arguments are completed instead).
      if (depth === 1 && n.subcommands.length) {
        const open = `${cond}; and not __fish_seen_subcommand_from ${n.subcommands.join(' ')}`
        lines.push(`complete -c botmesh-coord -n ${JSON.stringify(open)} -a ${JSON.stringify(n.subcommands.join(' '))}`)
      }
      for (const o of n.options) lines.push(optionLine(cond, o))
      const kinds = ARGUMENT_KINDS[n.canonical]
      if (kinds?.[0] && kinds[0] !== 'file') lines.push(`complete -c botmesh-coord -n ${JSON.stringify(cond)} ${dynamic(kinds[0])}`)
    }
  }
  return lines.join('\n') + '\n'
}

/** `completion bash|zsh|fish`: a completion script from the registered commands (no Redis needed). */
export function completionCommand(): Command {
  return new Command('completion')
    .description('print a shell completion script (commands, options, choices, and names read from Redis)')
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
        process.exitCode = reportError(cmd, err)
      }
    })
}

// ------------------------------------------------------------------ values read from Redis

/** The target options on a command line being completed (`--url x`, `--prefix=y`…), to read the same Redis. */
export function targetWords(line: string[]): Record<string, string> {
  const wanted = ['--url', '--prefix', '--layout', '--tls-ca', '--context']
  const out: Record<string, string> = {}
  for (let i = 0; i < line.length; i++) {
    const w = line[i]!
    const eq = /^(--[\w-]+)=(.*)$/.exec(w)
    if (eq && wanted.includes(eq[1]!)) out[eq[1]!] = eq[2]!
    else if (wanted.includes(w) && i + 1 < line.length) out[w] = line[++i]!
  }
  return out
}

/** At most this many names per completion (a bounded read). */
const MAX = 200

/** Names of one kind, from a bounded read: the replica index and records, and one SCAN call. */
export async function completionValues(ctx: Context, kind: CompletionKind): Promise<string[]> {
  if (kind === 'replica') return (await ctx.reader.liveReplicas()).items.map((r) => r.replicaId).slice(0, MAX)
  const replicas = (await ctx.reader.liveReplicas()).items
  const fromBeats = new Set<string>()
  for (const r of replicas) {
    for (const h of r.leases.held) if ((kind === 'lead') === (h.kind === 'lead')) fromBeats.add(h.key)
    if (kind === 'lead') for (const c of r.leases.campaigns ?? []) fromBeats.add(c)
    if (kind === 'chat') for (const w of r.leases.waiting) fromBeats.add(w.key)
  }
  if (kind === 'lead') return [...fromBeats].slice(0, MAX)
  const segment = kind === 'lock' || kind === 'checkpoint' || kind === 'handover' ? kind : 'chat'
  const scanned = await ctx.reader.listMany({ [segment]: (id: string) => id } as Record<'chat', (id: string) => string>, {
    count: MAX,
    limit: MAX,
  })
  const ids = Object.values(scanned).flatMap((l) => l.items as string[])
  return [...new Set([...(kind === 'chat' ? fromBeats : []), ...ids])].slice(0, MAX)
}

/** The hidden `__complete <kind> -- <words>` command the completion scripts call. */
export function completeCommand(): Command {
  const cmd: Command = new Command('__complete')
    .description('print names for shell completion (used by the completion scripts)')
    .argument('<kind>')
    .argument('[words...]')
    .action(async (kind: string, line: string[]) => {
      try {
        if (kind === 'context') {
          for (const name of listContexts()) process.stdout.write(`${name}\n`)
          return
        }
        let root = cmd
        while (root.parent) root = root.parent
        for (const [flag, value] of Object.entries(targetWords(line ?? []))) {
          root.setOptionValueWithSource(
            flag.slice(2).replace(/-(\w)/g, (_, ch: string) => ch.toUpperCase()),
            value,
            'cli',
          )
        }
        root.setOptionValueWithSource('timeout', Math.min(1000, (root.opts() as { timeout: number }).timeout), 'cli')
        const ctx = await openContext(cmd)
        try {
          // Offered as listings show them: the form every command takes back.
          for (const v of await completionValues(ctx, kind as CompletionKind)) process.stdout.write(`${shown(v)}\n`)
        } finally {
          await ctx.close()
        }
      } catch {
        // A completion never disturbs the shell: nothing to offer.
      }
    })
  ;(cmd as Command & { _hidden?: boolean })._hidden = true
  return cmd
}
