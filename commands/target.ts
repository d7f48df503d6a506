/**
 * Where a command looks: the global options (each with its environment variable), the context's
 * values where neither was given, and the password from a file or an environment variable — resolved
 * and checked before anything connects. A bad URL, a database that is not a number, an unreadable CA
 * or password file, an unknown context or a bad prefix is one usage line (exit 2), not a stack trace.
 */
import { accessSync, constants, statSync } from 'node:fs'
import type { Command } from 'commander'
import { DEFAULT_URL, maskUrl, validatePrefix, InvalidIdError, type Layout } from './lib.js'
import { CliError, usage } from './output/errors.js'
import { activeContext, expandHome, passwordFromFile } from './config/contexts.js'
import { EXIT } from './output/exit-codes.js'

/** The global options as commander parsed them (cli.ts declares them). */
export interface GlobalOptions {
  url: string
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
}

export interface Target {
  /** As given (it may carry a password: connect with it, never print it). */
  url: string
  prefix: string
  layout: Layout | 'auto'
  /** The database of the URL's path (`/3`), 0 when none. */
  db: number
  tlsCa?: string
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
  try {
    const u = new URL(url)
    return [u.password, decodeURIComponent(u.password)].filter(Boolean)
  } catch {
    return []
  }
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

/** Check the URL: scheme, host, port, database. */
export function checkUrl(url: string): { db: number } {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    throw usage(
      `--url: not a Redis URL: ${maskUrl(url)} (expected redis://host:port[/db] or rediss://…; a password goes in --password-file or REDIS_PASSWORD)`,
    )
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    throw usage(`--url: unsupported scheme ${u.protocol} in ${maskUrl(url)} (use redis:// or rediss:// for TLS)`)
  }
  if (!u.hostname) throw usage(`--url: no host in ${maskUrl(url)}`)
  const path = u.pathname.replace(/^\//, '')
  if (path !== '' && !/^\d+$/.test(path))
    throw usage(`--url: the path of ${maskUrl(url)} must be a database number (/0, /1, …), not /${path}`)
  return { db: path === '' ? 0 : Number(path) }
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
  let url = pick('url', c?.url) || DEFAULT_URL
  const { db } = checkUrl(url)
  const prefix = checkPrefix(pick('prefix', c?.prefix))
  const tlsCa = pick('tlsCa', c?.tlsCa ? expandHome(c.tlsCa) : undefined)
  if (tlsCa) checkReadableFile(tlsCa, '--tls-ca')
  const secrets = secretsOf(url)
  const pw = password(o, given, given('url') ? undefined : c)
  if (pw !== null || (c?.username && !given('url'))) {
    const u = new URL(url)
    if (c?.username && !given('url') && !u.username) u.username = encodeURIComponent(c.username)
    if (pw !== null) u.password = encodeURIComponent(pw)
    url = u.toString()
    if (pw !== null) secrets.push(pw, encodeURIComponent(pw))
  }
  return {
    url,
    prefix,
    layout: pick('layout', c?.layout) ?? 'auto',
    db,
    tlsCa,
    timeoutMs: o.timeout,
    secrets,
    context: active?.name ?? null,
  }
}
