/**
 * `config get-contexts | current-context | use-context | set-context | delete-context | view`: the
 * contexts file, as kubectl's `config` commands handle theirs. Nothing here connects to Redis, and no
 * password is ever printed (a context names a password file or variable, never the password).
 */
import { resolve } from 'node:path'
import { Command } from 'commander'
import { maskUrl, urlSecrets } from '../lib.js'
import { makeColour } from '../output/colour.js'
import { cell, headersWanted, jsonOut, outputFormat, printList, type KindView, type Printer } from '../output/format.js'
import { reportError } from '../output/report.js'
import { notFound, usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { checkPrefix, globalOptions } from '../target.js'
import { configPath, readConfig, writeConfig, type ContextEntry } from './contexts.js'

interface ContextRow {
  kind: 'context'
  name: string
  current: boolean
  url: string | null
  sentinels: string | null
  masterName: string | null
  prefix: string | null
  layout: string | null
  tlsCa: string | null
  username: string | null
  passwordFile: string | null
  passwordEnv: string | null
  tls: boolean
  sentinelUsername: string | null
  sentinelPasswordFile: string | null
}

const printer = (cmd: Command): Printer => ({
  format: outputFormat(cmd),
  headers: headersWanted(cmd),
  c: makeColour({ color: globalOptions(cmd).color }),
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
})

/** Run a config action: errors become one line and their exit code. */
const action =
  <A extends unknown[]>(fn: (cmd: Command, ...args: A) => void) =>
  (...raw: unknown[]) => {
    const cmd = raw[raw.length - 1] as Command
    try {
      fn(cmd, ...(raw.slice(0, -2) as A))
      process.exitCode = EXIT.ok
    } catch (err) {
      process.exitCode = reportError(cmd, err)
    }
  }

function rows(): ContextRow[] {
  const config = readConfig()
  return Object.entries(config.contexts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, e]) => ({
      kind: 'context',
      name,
      current: name === config.currentContext,
      url: e.url ? maskUrl(e.url) : null,
      sentinels: e.sentinels ?? null,
      masterName: e.masterName ?? null,
      prefix: e.prefix ?? null,
      layout: e.layout ?? null,
      tlsCa: e.tlsCa ?? null,
      username: e.username ?? null,
      passwordFile: e.passwordFile ?? null,
      passwordEnv: e.passwordEnv ?? null,
      tls: e.tls === true,
      sentinelUsername: e.sentinelUsername ?? null,
      sentinelPasswordFile: e.sentinelPasswordFile ?? null,
    }))
}

const contextsView = (p: Printer): KindView<ContextRow> => ({
  list: 'contexts',
  name: (r) => `context/${r.name}`,
  empty: `no contexts in ${configPath()} (add one: botmesh-coord --url … --prefix … config set-context <name>)`,
  columns: [
    { header: 'CURRENT', value: (r) => (r.current ? p.c.green('*') : '') },
    { header: 'NAME', value: (r) => p.c.bold(cell(r.name)) },
    {
      header: 'URL',
      value: (r) => cell(r.url ?? (r.sentinels ? `${r.tls ? 'TLS ' : ''}sentinels ${r.sentinels} master ${r.masterName ?? '?'}` : null)),
    },
    { header: 'PREFIX', value: (r) => cell(r.prefix) },
    { header: 'LAYOUT', value: (r) => cell(r.layout) },
    { header: 'USER', value: (r) => cell(r.username), wide: true },
    { header: 'PASSWORD FROM', value: (r) => cell(r.passwordFile ?? (r.passwordEnv ? `$${r.passwordEnv}` : null)), wide: true },
    { header: 'TLS CA', value: (r) => cell(r.tlsCa), wide: true },
    { header: 'SENTINEL AUTH', value: (r) => cell(r.sentinelPasswordFile ?? r.sentinelUsername), wide: true },
  ],
})

export function configCommand(): Command {
  const config = new Command('config').description(
    'contexts: named targets (url, prefix, layout, TLS CA, user, password file) in a config file',
  )
  config.addHelpText(
    'after',
    `
The file: $BOTMESH_CONFIG, else $XDG_CONFIG_HOME/botmesh-coord/config.json (~/.config/botmesh-coord/config.json).
A command uses --context / BOTMESH_CONTEXT, else the current context; options and their environment
variables given on the command line win over the context.

Examples:
  botmesh-coord --url rediss://redis.internal:6380 --prefix shop --tls-ca /etc/ssl/redis-ca.pem \\
    --password-file ~/.config/botmesh-coord/prod.pw config set-context prod --username ops
  botmesh-coord config use-context prod
  botmesh-coord config get-contexts
  botmesh-coord --context staging leases ls`,
  )
  config.addCommand(
    new Command('get-contexts')
      .addHelpText('after', '\nExample:\n  botmesh-coord config get-contexts -o wide')
      .description('list the contexts; * marks the current one')
      .action(
        action((cmd) => {
          const p = printer(cmd)
          printList(p, contextsView(p), rows(), { file: configPath() })
        }),
      ),
  )
  config.addCommand(
    new Command('current-context')
      .addHelpText('after', '\nExample:\n  botmesh-coord config current-context')
      .description('print the name of the current context')
      .action(
        action(() => {
          const current = readConfig().currentContext
          if (!current) throw notFound(`no current context in ${configPath()}`)
          process.stdout.write(`${current}\n`)
        }),
      ),
  )
  config.addCommand(
    new Command('use-context')
      .addHelpText('after', '\nExample:\n  botmesh-coord config use-context prod')
      .description('make a context the current one')
      .argument('<name>', 'the context')
      .option('--force', 'replace the config file even when it is not a regular file (a symlink, a FIFO)')
      .action(
        action((cmd, name: string) => {
          const c = readConfig()
          if (!c.contexts[name])
            throw notFound(
              `no context ${JSON.stringify(name)} in ${configPath()} (contexts: ${Object.keys(c.contexts).join(', ') || 'none'})`,
            )
          writeConfig({ ...c, currentContext: name }, configPath(), cmd.opts().force === true)
          process.stdout.write(`switched to context ${JSON.stringify(name)}\n`)
        }),
      ),
  )
  config.addCommand(
    new Command('set-context')
      .addHelpText(
        'after',
        '\nExamples:\n  botmesh-coord --url rediss://redis.internal:6380 --prefix shop --password-file ~/.redis-pw config set-context prod --username ops\n  botmesh-coord --prefix staging config set-context prod',
      )
      .description(
        'create or update a context from the target options given on the command line (--url or --sentinel/--master-name, --prefix, --layout, --tls-ca, --password-file)',
      )
      .argument('<name>', 'the context')
      .option('--username <user>', 'the ACL user')
      .option('--password-env <variable>', 'an environment variable that holds the password')
      .option('--current', 'also make it the current context')
      .option('--force', 'replace the config file even when it is not a regular file (a symlink, a FIFO)')
      .action(
        action((cmd, name: string) => {
          const o = cmd.opts() as { username?: string; passwordEnv?: string; current?: boolean; force?: boolean }
          const g = globalOptions(cmd)
          const given = (k: string) => cmd.getOptionValueSourceWithGlobals(k) === 'cli'
          if (given('url') && urlSecrets(g.url).length) {
            throw usage('set-context: put the password in a file (--password-file) or a variable (--password-env), not in --url')
          }
          const c = readConfig()
          const entry: ContextEntry = { ...c.contexts[name] }
          if (given('url')) {
            entry.url = g.url
            delete entry.sentinels
            delete entry.masterName
          }
          if (given('sentinel') && g.sentinel?.length) {
            entry.sentinels = g.sentinel.join(',')
            delete entry.url
          }
          // Paths are kept absolute (or ~/…), so the context works from any folder.
          const abs = (p: string) => (p.startsWith('~') ? p : resolve(p))
          if (given('masterName') && g.masterName) entry.masterName = g.masterName
          if (given('tls')) entry.tls = g.tls === true
          if (given('sentinelUsername') && g.sentinelUsername) entry.sentinelUsername = g.sentinelUsername
          if (given('sentinelPasswordFile') && g.sentinelPasswordFile) entry.sentinelPasswordFile = abs(g.sentinelPasswordFile)
          // A prefix every command would refuse is not saved either (one line, exit 2, saying why).
          if (given('prefix')) entry.prefix = checkPrefix(g.prefix)
          if (given('layout')) entry.layout = g.layout
          if (given('tlsCa') && g.tlsCa) entry.tlsCa = abs(g.tlsCa)
          if (o.username !== undefined) entry.username = o.username
          if (given('passwordFile') && g.passwordFile) entry.passwordFile = abs(g.passwordFile)
          if (o.passwordEnv !== undefined) entry.passwordEnv = o.passwordEnv
          if (Object.keys(entry).length === 0)
            throw usage(
              `set-context: give at least one of --url, --sentinel, --master-name, --tls, --sentinel-username, --sentinel-password-file, --prefix, --layout, --tls-ca, --username, --password-file, --password-env`,
            )
          writeConfig(
            {
              currentContext: o.current || !c.currentContext ? name : c.currentContext,
              contexts: { ...c.contexts, [name]: entry },
            },
            configPath(),
            o.force === true,
          )
          process.stdout.write(`context ${JSON.stringify(name)} ${c.contexts[name] ? 'updated' : 'created'} in ${configPath()}\n`)
        }),
      ),
  )
  config.addCommand(
    new Command('delete-context')
      .addHelpText('after', '\nExample:\n  botmesh-coord config delete-context staging')
      .description('remove a context')
      .argument('<name>', 'the context')
      .option('--force', 'replace the config file even when it is not a regular file (a symlink, a FIFO)')
      .action(
        action((cmd, name: string) => {
          const c = readConfig()
          if (!c.contexts[name]) throw notFound(`no context ${JSON.stringify(name)} in ${configPath()}`)
          const { [name]: _gone, ...rest } = c.contexts
          writeConfig(
            { currentContext: c.currentContext === name ? undefined : c.currentContext, contexts: rest },
            configPath(),
            cmd.opts().force === true,
          )
          process.stdout.write(`deleted context ${JSON.stringify(name)}\n`)
        }),
      ),
  )
  config.addCommand(
    new Command('view')
      .addHelpText('after', '\nExample:\n  botmesh-coord config view')
      .description('print the config file (URLs masked; passwords are never in it)')
      .action(
        action((cmd) => {
          const c = readConfig()
          const masked = Object.fromEntries(
            Object.entries(c.contexts).map(([n, e]) => [n, { ...e, ...(e.url ? { url: maskUrl(e.url) } : {}) }]),
          )
          const body = { file: configPath(), 'current-context': c.currentContext ?? null, contexts: masked }
          if (outputFormat(cmd) === 'json') process.stdout.write(`${jsonOut('config', body)}\n`)
          else process.stdout.write(`${JSON.stringify(body, null, 2)}\n`)
        }),
      ),
  )
  return config
}
