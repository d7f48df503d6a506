/**
 * Where a command looks: the global options (each with its environment variable), the context's
 * values where neither was given, and the password from a file or an environment variable — resolved
 * and checked before anything connects. A bad URL, a database that is not a number, an unreadable CA
 * or password file, an unknown context or a bad prefix is one usage line (exit 2), not a stack trace.
 */
import { accessSync, constants, statSync } from 'node:fs'
import type { Command } from 'commander'
import {
  ConfigurationError,
  DEFAULT_URL,
  DEFAULT_PREFIX,
  parseRedisUrl,
  sentinelUrl,
  shellWord,
  validatePrefix,
  urlSecrets,
  withCredentials,
  InvalidIdError,
  type Layout,
  type RedisUrl,
} from './lib.js'
import { CliError, usage } from './output/errors.js'
import { activeContext, expandHome, passwordFromFile } from './config/contexts.js'
import { EXIT } from './output/exit-codes.js'

/** The global options as commander parsed them (cli.ts declares them). */
export interface GlobalOptions {
  url: string
  /** --sentinel host:port, repeated (or comma-separated) */
  sentinel?: string[]
  masterName?: string
  prefix: string
  layout: Layout | 'auto'
  tlsCa?: string
  json?: boolean
  output?: string
  headers?: boolean
  color?: boolean
  readOnly?: boolean
  /** ms (parsed by the option). */
  timeout: number
  context?: string
  passwordFile?: string
  /** The sentinels' own ACL user and password file (redis+sentinel://, --sentinel). */
  sentinelUsername?: string
  sentinelPasswordFile?: string
  /** --sentinel: reach the sentinels and the master over TLS (rediss+sentinel://). */
  tls?: boolean
}

export interface Target {
  /** As given (it may carry a password: connect with it, never print it). */
  url: string
  prefix: string
  layout: Layout | 'auto'
  /** The database of the URL's path (`/3`), 0 when none. */
  db: number
  /** The master a Sentinel group names (redis+sentinel://, --sentinel/--master-name), or null: a direct address. */
  sentinel: { masterName: string; sentinels: string[] } | null
  tlsCa?: string
  /** The sentinels' own ACL user and password, when they ask for one (never printed). */
  sentinelAuth: { sentinelUsername?: string; sentinelPassword?: string }
  /** How long one Redis call may take. */
  timeoutMs: number
  /** Passwords to scrub from any message. */
  secrets: string[]
  /** The context the values came from, if any. */
  context: string | null
}

export function globalOptions(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions
}

function secretsOf(url: string): string[] {
  return urlSecrets(url)
}

/** The URL and the secrets to scrub, for error lines — also when the target itself is invalid. */
export function urlContext(cmd: Command): { url: string; secrets: string[] } {
  try {
    const t = resolveTarget(cmd)
    return { url: t.url, secrets: t.secrets }
  } catch {
    const url = globalOptions(cmd).url || DEFAULT_URL
    return { url, secrets: secretsOf(url) }
  }
}

/** Check the URL (the library's reading of it): scheme, hosts, ports, database, master name. */
export function checkUrl(url: string): RedisUrl {
  try {
    return parseRedisUrl(url)
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err
    const hint = /unsupported scheme|not a Redis URL/.test(err.message) ? ' (a password goes in --password-file or REDIS_PASSWORD)' : ''
    throw usage(`--url: ${err.message}${hint}`)
  }
}

/**
 * `--sentinel host:port …` with `--master-name` (or a context's sentinels and masterName): the
 * sentinel URL they mean, or null when the target is a URL. The more explicit wins — the command
 * line over the environment over the context — and a URL and sentinels at the same level conflict.
 */
function sentinelTarget(
  cmd: Command,
  o: GlobalOptions,
  ctx: { url?: string; sentinels?: string; masterName?: string; tls?: boolean } | undefined,
): string | null {
  const rank = (k: keyof GlobalOptions, inContext: boolean) => {
    const source = cmd.getOptionValueSourceWithGlobals(k)
    return source === 'cli' ? 3 : source === 'env' ? 2 : inContext ? 1 : 0
  }
  const sentinelRank = Math.max(rank('sentinel', !!ctx?.sentinels), rank('masterName', !!ctx?.masterName))
  if (sentinelRank === 0) return null
  const urlRank = rank('url', !!ctx?.url)
  if (urlRank > sentinelRank) return null
  if (urlRank === sentinelRank) {
    throw usage('--sentinel and --url name two targets: give one (a Sentinel URL is redis+sentinel://host:port,…/<master-name>)')
  }
  const pick = <T>(k: keyof GlobalOptions, fromOption: T, fromContext: T) => (rank(k, false) ? fromOption : (fromContext ?? fromOption))
  const sentinels = pick('sentinel', o.sentinel, ctx?.sentinels?.split(',').filter(Boolean)) ?? []
  const masterName = pick('masterName', o.masterName, ctx?.masterName)
  if (!sentinels.length) throw usage('--master-name: give the sentinels too (--sentinel host:port, once per sentinel)')
  if (!masterName) throw usage('--sentinel: give the name of the master they follow too (--master-name <name>)')
  for (const s of sentinels) {
    if (!/^(\[[^\]]+\]|[^:,/@[\]]+)(:\d{1,5})?$/.test(s)) throw usage(`--sentinel: not a host:port: ${JSON.stringify(s)}`)
  }
  return sentinelUrl(sentinels, masterName, { tls: rank('tls', false) ? o.tls === true : (ctx?.tls ?? false) })
}

/**
 * The sentinels' own user and password (they may ask for one apart from the master's): the command
 * line or its environment variable, else the context. The password comes from a file
 * (--sentinel-password-file, the context's sentinelPasswordFile) or REDIS_SENTINEL_PASSWORD.
 */
function sentinelAuth(
  o: GlobalOptions,
  given: (k: keyof GlobalOptions) => boolean,
  ctx: { sentinelUsername?: string; sentinelPasswordFile?: string } | undefined,
): Target['sentinelAuth'] {
  const username = given('sentinelUsername') ? o.sentinelUsername : ctx?.sentinelUsername
  let password: string | undefined
  if (o.sentinelPasswordFile && given('sentinelPasswordFile')) {
    password = passwordFromFile(o.sentinelPasswordFile, '--sentinel-password-file')
  } else if (process.env.REDIS_SENTINEL_PASSWORD) {
    password = process.env.REDIS_SENTINEL_PASSWORD
  } else if (ctx?.sentinelPasswordFile) {
    password = passwordFromFile(expandHome(ctx.sentinelPasswordFile), "the context's sentinelPasswordFile")
  }
  return { ...(username ? { sentinelUsername: username } : {}), ...(password ? { sentinelPassword: password } : {}) }
}

/** A file the user named must be a readable file: a usage error naming the option otherwise. */
export function checkReadableFile(path: string, what: string): void {
  try {
    if (!statSync(path).isFile()) throw usage(`${what}: ${path} is not a file`)
    accessSync(path, constants.R_OK)
  } catch (err) {
    if (err instanceof CliError) throw err
    const code = (err as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code ?? err)
    throw new CliError(`${what}: cannot read ${path}: ${why}`, EXIT.usage)
  }
}

/** A usable prefix, or a usage error naming --prefix. */
export function checkPrefix(p: unknown): string {
  try {
    return validatePrefix(p)
  } catch (err) {
    if (err instanceof InvalidIdError) throw usage(`--prefix: ${err.message}`)
    throw err
  }
}

/** Where the password comes from, first found: --password-file, REDIS_PASSWORD, the context's file or variable, the URL. */
function password(
  o: GlobalOptions,
  given: (k: keyof GlobalOptions) => boolean,
  ctx: { passwordFile?: string; passwordEnv?: string } | undefined,
): string | null {
  if (o.passwordFile && given('passwordFile')) return passwordFromFile(o.passwordFile, '--password-file')
  if (process.env.REDIS_PASSWORD) return process.env.REDIS_PASSWORD
  if (ctx?.passwordFile) return passwordFromFile(ctx.passwordFile, "the context's passwordFile")
  if (ctx?.passwordEnv) {
    const v = process.env[ctx.passwordEnv]
    if (!v) throw usage(`the context's passwordEnv names ${ctx.passwordEnv}, which is not set`)
    return v
  }
  return null
}

/**
 * Resolve and check the global options of a command: an option given on the command line or by its
 * environment variable wins over the context, which wins over the built-in default.
 */
export function resolveTarget(cmd: Command): Target {
  const o = globalOptions(cmd)
  const given = (k: keyof GlobalOptions) => {
    const source = cmd.getOptionValueSourceWithGlobals(k)
    return source === 'cli' || source === 'env'
  }
  const active = activeContext(o.context)
  const c = active?.entry
  const pick = <K extends 'url' | 'prefix' | 'layout' | 'tlsCa'>(k: K, fromContext: GlobalOptions[K] | undefined): GlobalOptions[K] =>
    given(k) || fromContext === undefined ? o[k] : fromContext
  const viaSentinels = sentinelTarget(cmd, o, c ?? undefined)
  let url = viaSentinels ?? (pick('url', c?.url) || DEFAULT_URL)
  const parsed = checkUrl(url)
  const db = parsed.db
  const prefix = checkPrefix(pick('prefix', c?.prefix))
  const tlsCa = pick('tlsCa', c?.tlsCa ? expandHome(c.tlsCa) : undefined)
  if (tlsCa) checkReadableFile(tlsCa, '--tls-ca')
  const secrets = secretsOf(url)
  const pw = password(o, given, given('url') ? undefined : c)
  if (pw !== null || (c?.username && !given('url'))) {
    const username = c?.username && !given('url') && !parsed.username ? c.username : undefined
    url = withCredentials(url, { username, password: pw ?? undefined })
    if (pw !== null) secrets.push(pw, encodeURIComponent(pw))
  }
  const sentinel = parsed.kind === 'sentinel' ? sentinelAuth(o, given, c ?? undefined) : {}
  if (sentinel.sentinelPassword) secrets.push(sentinel.sentinelPassword, encodeURIComponent(sentinel.sentinelPassword))
  return {
    url,
    prefix,
    layout: pick('layout', c?.layout) ?? 'auto',
    db,
    sentinel:
      parsed.kind === 'sentinel' ? { masterName: parsed.masterName, sentinels: parsed.sentinels.map((h) => `${h.host}:${h.port}`) } : null,
    tlsCa,
    sentinelAuth: sentinel,
    timeoutMs: o.timeout,
    secrets,
    context: active?.name ?? null,
  }
}

/** The subcommands a printed suggestion may start with (after `botmesh-coord `). */
const SUGGESTED =
  /\bbotmesh-coord (?=(?:chat|chats|checkpoint|checkpoints|provider|providers|replica|replicas|lease|leases|lock|locks|handover|handovers|doctor|events|snapshot|watch|demo) )/g

/**
 * The connection a printed command needs to reach the Redis it came from, as words for a command
 * line: the context's name if one was used, else `--url` (a URL with a password is printed as the
 * environment variable that holds it, never the password) and `--prefix` when not the default.
 */
export function connectionWords(t: Pick<Target, 'url' | 'prefix' | 'context'>): string {
  if (t.context) return `--context ${shellWord(t.context)}`
  const words: string[] = []
  if (t.url && t.url !== DEFAULT_URL) words.push(secretsOf(t.url).length ? '--url $REDIS_URL' : `--url ${shellWord(t.url)}`)
  if (t.prefix && t.prefix !== DEFAULT_PREFIX) words.push(`--prefix ${shellWord(t.prefix)}`)
  return words.join(' ')
}

/** Every `botmesh-coord <command>` in a suggestion, with the connection it came from. */
export function withConnection(text: string, words: string): string {
  return words ? text.replace(SUGGESTED, `botmesh-coord ${words} `) : text
}
