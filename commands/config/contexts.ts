/**
 * Contexts, as kubectl has them: named targets in a config file — url (or sentinels and masterName), prefix, layout, TLS CA,
 * username and where the password comes from (a file, or an environment variable; never the file
 * itself) — chosen with `--context` / BOTMESH_CONTEXT or the file's current context. A command-line
 * option or its environment variable wins over the context, which wins over the built-in default.
 *
 * The file: $BOTMESH_CONFIG, else $XDG_CONFIG_HOME/botmesh-coord/config.json (default
 * ~/.config/botmesh-coord/config.json), written with mode 0600.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { CliError, usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { checkReplaceable } from '../output/files.js'

export interface ContextEntry {
  url?: string
  /** Redis Sentinels (host:port,host:port…) of the master named by masterName (instead of url). */
  sentinels?: string
  masterName?: string
  prefix?: string
  layout?: 'auto' | 'standalone' | 'cluster'
  tlsCa?: string
  /** The ACL user (instead of one in the URL). */
  username?: string
  /** A file holding the password (its first line). */
  passwordFile?: string
  /** The name of an environment variable holding the password. */
  passwordEnv?: string
  /** With sentinels: TLS to them and to the master (rediss+sentinel://). */
  tls?: boolean
  /** The sentinels' own ACL user, and a file holding their password, when they ask for one. */
  sentinelUsername?: string
  sentinelPasswordFile?: string
}

export interface Config {
  currentContext?: string
  contexts: Record<string, ContextEntry>
}

/** The fields a context may set, and what each means (for `config set-context` and the docs). */
export const CONTEXT_FIELDS = [
  'url',
  'sentinels',
  'masterName',
  'prefix',
  'layout',
  'tlsCa',
  'username',
  'passwordFile',
  'passwordEnv',
  'tls',
  'sentinelUsername',
  'sentinelPasswordFile',
] as const

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.BOTMESH_CONFIG) return resolve(env.BOTMESH_CONFIG)
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config')
  return join(base, 'botmesh-coord', 'config.json')
}

/** `~/x` → the home folder's x (paths in the config file may start with ~). */
export function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p
}

/** The config file, or an empty one when there is none; a broken file is a usage error naming it. */
export function readConfig(path = configPath()): Config {
  if (!existsSync(path)) return { contexts: {} }
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'))
  } catch (err) {
    throw new CliError(`config file ${path} is not valid JSON: ${(err as Error).message}`, EXIT.usage)
  }
  const o = raw as { 'current-context'?: unknown; contexts?: unknown }
  if (!o || typeof o !== 'object' || (o.contexts !== undefined && (typeof o.contexts !== 'object' || o.contexts === null))) {
    throw usage(`config file ${path}: expected {"current-context": "…", "contexts": {"<name>": {…}}}`)
  }
  const contexts: Record<string, ContextEntry> = {}
  for (const [name, entry] of Object.entries((o.contexts ?? {}) as Record<string, unknown>)) {
    if (!entry || typeof entry !== 'object') throw usage(`config file ${path}: context ${JSON.stringify(name)} is not an object`)
    const e: ContextEntry = {}
    for (const [k, v] of Object.entries(entry)) {
      if (!(CONTEXT_FIELDS as readonly string[]).includes(k)) {
        throw usage(
          `config file ${path}: context ${JSON.stringify(name)} has an unknown field ${JSON.stringify(k)} (${CONTEXT_FIELDS.join(', ')})`,
        )
      }
      if (k === 'tls') {
        if (typeof v !== 'boolean') throw usage(`config file ${path}: ${name}.tls must be true or false`)
        e.tls = v
        continue
      }
      if (typeof v !== 'string') throw usage(`config file ${path}: ${name}.${k} must be a string`)
      ;(e as Record<string, string>)[k] = v
    }
    if (e.layout && !['auto', 'standalone', 'cluster'].includes(e.layout))
      throw usage(`config file ${path}: ${name}.layout must be auto, standalone or cluster`)
    contexts[name] = e
  }
  const current = typeof o['current-context'] === 'string' ? o['current-context'] : undefined
  return { currentContext: current, contexts }
}

/**
 * Create a folder and its missing parents one level at a time (mode 0700). Node's recursive mkdir
 * loops forever under /proc, where a missing name cannot be created yet its parent "exists".
 */
function makeFolders(dir: string): void {
  const missing: string[] = []
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(d)) break
    missing.unshift(d)
    if (dirname(d) === d) break
  }
  for (const d of missing) mkdirSync(d, { mode: 0o700 })
}

const WHY: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'a read-only file system',
  ENOENT: 'no such folder (it cannot be created there)',
  ENOTDIR: 'a part of the path is not a folder',
}

/**
 * Write the config file whole (a temporary file renamed); a path that is not a regular file is
 * refused unless `force`. A path that cannot be written (a folder under /proc or /sys, no permission)
 * is one line, exit 2.
 */
export function writeConfig(config: Config, path = configPath(), force = false): void {
  checkReplaceable(path, 'config file', force, ' (--force replaces it; or point BOTMESH_CONFIG at the file itself)')
  const tmp = `${path}.${process.pid}.tmp`
  try {
    makeFolders(dirname(path))
    const body = { 'current-context': config.currentContext ?? null, contexts: config.contexts }
    rmSync(tmp, { force: true }) // a stale one of a process with this pid; never followed if a link
    writeFileSync(tmp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600, flag: 'wx' })
    chmodSync(tmp, 0o600)
    renameSync(tmp, path)
  } catch (err) {
    rmSync(tmp, { force: true })
    const code = String((err as NodeJS.ErrnoException).code ?? err)
    throw new CliError(
      `config file ${path}: cannot write it: ${WHY[code] ?? code} (set BOTMESH_CONFIG or XDG_CONFIG_HOME to a writable place)`,
      EXIT.usage,
    )
  }
}

export function listContexts(path = configPath()): string[] {
  try {
    return Object.keys(readConfig(path).contexts).sort()
  } catch {
    return []
  }
}

/**
 * The context in use: `--context` / BOTMESH_CONTEXT (it must exist), else the file's current
 * context (if it exists), else none.
 */
export function activeContext(named: string | undefined, path = configPath()): { name: string; entry: ContextEntry } | null {
  const config = readConfig(path)
  if (named !== undefined) {
    const entry = config.contexts[named]
    if (!entry) {
      const known = Object.keys(config.contexts)
      throw usage(
        `no context ${JSON.stringify(named)} in ${path}${known.length ? ` (contexts: ${known.join(', ')})` : ' (it has no contexts)'}`,
      )
    }
    return { name: named, entry }
  }
  if (config.currentContext && config.contexts[config.currentContext]) {
    return { name: config.currentContext, entry: config.contexts[config.currentContext]! }
  }
  return null
}

/** Read a password from a file (its first line, without the newline). */
export function passwordFromFile(file: string, what: string): string {
  const path = expandHome(file)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw usage(
      `${what}: cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code)}`,
    )
  }
  const pw = text.split(/\r?\n/)[0] ?? ''
  if (!pw) throw usage(`${what}: ${path} is empty`)
  return pw
}
