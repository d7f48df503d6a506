import { Command, CommanderError, Option } from 'commander'
import { DEFAULT_PREFIX, DEFAULT_URL, DEFAULTS, LAYOUTS, PACKAGE_VERSION, formatDuration, idFromBytes } from './lib.js'
import { usage } from './output/errors.js'
import { durationOption } from './duration.js'
import { EXIT } from './output/exit-codes.js'
import { OUTPUT_FORMATS, checkOutputFormat } from './output/format.js'
import { reportError } from './output/report.js'
import { quietOnClosedPipe, routeLibraryWarnings } from './output/streams.js'
import { fromVisible, guardTerminal } from './output/safe-text.js'
import { makeColour } from './output/colour.js'
import { registerCommands } from './registry.js'

/** Options whose value names something from Redis (a replica, a flow, an incarnation, a fingerprint). */
const NAME_OPTIONS = ['replica', 'to', 'flow', 'ifIncarnation', 'fingerprint', 'fingerprintNot', 'owner']

/** `--key-hex`: the first argument as hex bytes. */
function hexName(v: unknown): unknown {
  if (typeof v !== 'string') return v
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(v))
    throw usage(`--key-hex: ${JSON.stringify(v)} is not hex bytes (two hex digits per byte, e.g. 63686174ff)`)
  return idFromBytes(Buffer.from(v, 'hex'))
}

function shownName(v: unknown): unknown {
  if (typeof v === 'string') return fromVisible(v)
  return Array.isArray(v) ? v.map(shownName) : v
}

/** The botmesh-coord entry: global options, command registration, parsing. */
export function buildProgram(): Command {
  const program = new Command('botmesh-coord')
    .description('See and safely change the Redis coordination state of replicated botmesh bots')
    .version(PACKAGE_VERSION, '-V, --version', 'print the version')
    .addOption(
      new Option(
        '--url <url>',
        'Redis URL (rediss:// for TLS; on a Cluster, any node; redis+sentinel://host:port,…/<master-name> for Sentinel)',
      )
        .env('REDIS_URL')
        .default(DEFAULT_URL),
    )
    .addOption(
      new Option('--sentinel <host:port>', 'a Redis Sentinel of the master named by --master-name (repeat for each sentinel)')
        .argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), ...v.split(',').filter(Boolean)])
        .env('REDIS_SENTINELS'),
    )
    .addOption(new Option('--master-name <name>', 'the master the sentinels follow (with --sentinel)').env('REDIS_MASTER_NAME'))
    .addOption(
      new Option('--sentinel-username <user>', "the sentinels' own ACL user, when they ask for one").env('REDIS_SENTINEL_USERNAME'),
    )
    .addOption(
      new Option(
        '--sentinel-password-file <file>',
        "a file whose first line is the sentinels' own password (also REDIS_SENTINEL_PASSWORD holds one)",
      ).env('BOTMESH_SENTINEL_PASSWORD_FILE'),
    )
    .addOption(new Option('--tls', 'with --sentinel: TLS to the sentinels and the master (as rediss+sentinel://)').env('REDIS_TLS'))
    .addOption(new Option('--prefix <prefix>', 'key prefix of the bot').env('BOTMESH_PREFIX').default(DEFAULT_PREFIX))
    .addOption(
      new Option('--layout <layout>', 'key layout (auto: a Cluster node means cluster)')
        .choices(['auto', ...LAYOUTS])
        .env('BOTMESH_LAYOUT')
        .default('auto'),
    )
    .addOption(new Option('--tls-ca <file>', 'PEM file of the CA that signed the server certificate').env('REDIS_TLS_CA'))
    .addOption(
      new Option('--context <name>', 'the named target to use (config get-contexts); default: the current context').env('BOTMESH_CONTEXT'),
    )
    .addOption(
      new Option('--password-file <file>', "a file whose first line is Redis's password (also REDIS_PASSWORD holds one)").env(
        'BOTMESH_PASSWORD_FILE',
      ),
    )
    .addOption(
      new Option('-o, --output <format>', 'output format: table, wide (more columns), json, jsonl, name (snapshot: the file to write)')
        .choices([...OUTPUT_FORMATS])
        // Checked before the action instead (checkOutputFormat): `snapshot -o <file>` names a file.
        .argParser((v: string) => v),
    )
    .addOption(new Option('--json', 'same as -o json: machine output, stable field names, schemaVersion'))
    .addOption(new Option('--no-headers', 'tables without their header line'))
    .addOption(new Option('--no-color', 'no colours (also NO_COLOR)'))
    .addOption(new Option('--read-only', 'refuse every command that changes state').env('BOTMESH_READ_ONLY'))
    .addOption(
      new Option(
        '--from <snapshot>',
        'answer read commands from a snapshot file (botmesh-coord snapshot -o) instead of Redis; writes refuse',
      ),
    )
    .addOption(new Option('--key-hex', "the command's key or name argument is given as hex bytes (ff00…), for keys no terminal shows"))
    .addOption(
      durationOption('--timeout <duration>', 'how long one Redis call may take', {
        min: 1,
        default: formatDuration(DEFAULTS.commandTimeoutMs),
        timer: true,
      }),
    )
  program.addHelpText(
    'after',
    `
Examples:
  botmesh-coord --prefix shop leases ls
  botmesh-coord --prefix shop chat inspect chat:42 --explain
  REDIS_URL=rediss://ops@redis:6380 botmesh-coord provider yield whatsapp --if-fence 1795982440391117 --wait`,
  )
  // BOTMESH_READ_ONLY=0 (or false/no/empty) means off; commander would take any value as on.
  program.hook('preAction', (root) => {
    const env = process.env.BOTMESH_READ_ONLY
    if (root.getOptionValueSource('readOnly') === 'env' && env !== undefined && /^(0|false|no|off|)$/i.test(env.trim())) {
      root.setOptionValueWithSource('readOnly', false, 'env')
    }
  })
  // Names on the command line are read in the form listings show them (escaped: `chat:\x1b`,
  // `\xff`), so a key shown can be passed back whatever bytes it holds: every positional argument,
  // and the options that name a replica, a flow or an incarnation.
  program.hook('preAction', (root, action) => {
    const hex = root.opts().keyHex === true
    action.processedArgs = action.processedArgs.map((v, i) => (hex && i === 0 ? hexName(v) : shownName(v)))
    for (const name of NAME_OPTIONS) {
      const v: unknown = action.getOptionValue(name)
      if (v !== undefined) action.setOptionValueWithSource(name, shownName(v), action.getOptionValueSource(name) ?? 'cli')
    }
  })
  // -o names a format, except for a command whose output is a file (snapshot -o incident.json.gz).
  program.hook('preAction', (root, action) => checkOutputFormat(root, action))
  registerCommands(program)
  return program
}

/** Parse and run; resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  quietOnClosedPipe()
  routeLibraryWarnings()
  // Whatever a command prints passes the terminal guard: SGR colours only where the tool colours that stream.
  const color = argv.includes('--no-color') ? false : undefined
  guardTerminal({
    stdout: makeColour({ color, stream: process.stdout }).level > 0,
    stderr: makeColour({ color, stream: process.stderr }).level > 0,
  })
  const program = buildProgram()
  try {
    await program.parseAsync(argv)
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok
      return EXIT.usage // commander already printed its one line
    }
    return reportError(null, err)
  }
  return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok
}

// Entry point when run as the CLI (bin/botmesh-coord.js imports this module).
if (process.env.BOTMESH_COORD_NO_MAIN !== '1') {
  const code = await main(process.argv)
  process.exitCode = code
}
