/**
 * Redis URLs: the default, their forms read into parts, and the form that is safe to print. No I/O here.
 *
 * - `redis://[user:pass@]host:port[/db]`, `rediss://…` (TLS): one server, or any node of a Cluster;
 * - `redis+sentinel://[user:pass@]host:port[,host:port…]/<master-name>[/db]`, `rediss+sentinel://…`
 *   (TLS to the sentinels and the master): the master a group of Redis Sentinels names, followed
 *   through failovers. The user and password are the master's (an ACL user); sentinels that ask for a
 *   password of their own get it from the `sentinelPassword` option.
 */
import { DEFAULTS } from './defaults.js'
import { ConfigurationError } from './errors/configuration-error.js'

export const DEFAULT_URL = DEFAULTS.url

/** The default port of a sentinel. */
export const SENTINEL_PORT = 26379

export interface HostPort {
  host: string
  port: number
}

/** A URL read into its parts. */
export type RedisUrl =
  | ({ kind: 'direct'; tls: boolean; db: number; username?: string; password?: string } & HostPort)
  | { kind: 'sentinel'; tls: boolean; db: number; username?: string; password?: string; sentinels: HostPort[]; masterName: string }

const SCHEMES = 'redis://, rediss://, redis+sentinel:// or rediss+sentinel://'

function hostPort(text: string, defaultPort: number, raw: string): HostPort {
  const m = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d*))?$/.exec(text)
  if (!m) throw new ConfigurationError(`not a host:port in ${maskUrl(raw)}: ${JSON.stringify(text)}`)
  const host = m[1]!.replace(/^\[|\]$/g, '')
  if (!host) throw new ConfigurationError(`no host in ${maskUrl(raw)}`)
  const port = m[2] ? Number(m[2]) : defaultPort
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ConfigurationError(`bad port in ${maskUrl(raw)}: ${m[2]}`)
  return { host, port }
}

function database(text: string | undefined, raw: string): number {
  if (text === undefined || text === '') return 0
  if (!/^\d+$/.test(text)) {
    throw new ConfigurationError(`the database in ${maskUrl(raw)} must be a number (/0, /1, …), not /${text}`)
  }
  return Number(text)
}

function decode(part: string | undefined): string | undefined {
  if (part === undefined || part === '') return undefined
  try {
    return decodeURIComponent(part)
  } catch {
    return part
  }
}

/** Read a Redis URL into its parts; a URL that cannot work is a ConfigurationError naming it (masked). */
export function parseRedisUrl(raw: string): RedisUrl {
  const m = /^([a-z][a-z0-9+.-]*):\/\/(?:([^@/]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?[^#]*)?(?:#.*)?$/i.exec(raw.trim())
  if (!m) {
    throw new ConfigurationError(
      `not a Redis URL: ${maskUrl(raw)} (expected redis://host:port[/db] or rediss://…, or redis+sentinel://host:port[,host:port…]/<master-name>[/db])`,
    )
  }
  const scheme = m[1]!.toLowerCase()
  const [user, pass] = m[2] === undefined ? [] : ((i) => (i < 0 ? [m[2]!] : [m[2]!.slice(0, i), m[2]!.slice(i + 1)]))(m[2].indexOf(':'))
  const username = decode(user)
  const password = decode(pass)
  const path = (m[4] ?? '').replace(/^\//, '')
  const auth = { ...(username ? { username } : {}), ...(password !== undefined ? { password } : {}) }
  if (scheme === 'redis' || scheme === 'rediss') {
    if (m[3]!.includes(',')) {
      throw new ConfigurationError(
        `${maskUrl(raw)} names several hosts: for Redis Sentinel use redis+sentinel://host:port,host:port/<master-name>`,
      )
    }
    const { host, port } = m[3] ? hostPort(m[3], 6379, raw) : { host: '127.0.0.1', port: 6379 }
    return { kind: 'direct', tls: scheme === 'rediss', host, port, db: database(path, raw), ...auth }
  }
  if (scheme === 'redis+sentinel' || scheme === 'rediss+sentinel') {
    const sentinels = m[3]!
      .split(',')
      .filter(Boolean)
      .map((hp) => hostPort(hp, SENTINEL_PORT, raw))
    if (!sentinels.length)
      throw new ConfigurationError(`no sentinel in ${maskUrl(raw)} (redis+sentinel://host:port[,host:port…]/<master-name>)`)
    const [name, db, ...rest] = path.split('/')
    const masterName = decode(name)
    if (!masterName)
      throw new ConfigurationError(`no master name in ${maskUrl(raw)} (redis+sentinel://host:port[,host:port…]/<master-name>[/db])`)
    if (rest.length) throw new ConfigurationError(`too many path parts in ${maskUrl(raw)} (expected /<master-name>[/db])`)
    return { kind: 'sentinel', tls: scheme === 'rediss+sentinel', sentinels, masterName, db: database(db, raw), ...auth }
  }
  throw new ConfigurationError(`unsupported scheme ${scheme}: in ${maskUrl(raw)} (use ${SCHEMES})`)
}

/** The URL of a sentinel group, for `--sentinel host:port … --master-name <name>`. */
export function sentinelUrl(sentinels: string[], masterName: string, opts: { tls?: boolean; db?: number } = {}): string {
  const name = encodeURIComponent(masterName)
  return `${opts.tls ? 'rediss' : 'redis'}+sentinel://${sentinels.join(',')}/${name}${opts.db ? `/${opts.db}` : ''}`
}

/** The same URL with this user and password (either may be absent: left as it was). */
export function withCredentials(raw: string, creds: { username?: string; password?: string }): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)(?:([^@/]*)@)?(.*)$/i.exec(raw)
  if (!m) return raw
  const [oldUser, oldPass] =
    m[2] === undefined ? [] : ((i) => (i < 0 ? [m[2]!] : [m[2]!.slice(0, i), m[2]!.slice(i + 1)]))(m[2].indexOf(':'))
  const user = creds.username !== undefined ? encodeURIComponent(creds.username) : (oldUser ?? '')
  const pass = creds.password !== undefined ? encodeURIComponent(creds.password) : oldPass
  if (!user && pass === undefined) return `${m[1]}${m[3]}`
  return `${m[1]}${user}${pass !== undefined ? `:${pass}` : ''}@${m[3]}`
}

/**
 * Query parameters that carry a secret (`?password=…`, `&sentinelPassword=…`, a token): ioredis reads
 * options from a URL's query, so a password may come that way as well as `user:pass@`.
 */
const SECRET_PARAM = /([?&][^=&#]*(?:pass|pwd|secret|token|auth)[^=&#]*=)([^&#]*)/gi

/** Every secret a URL carries (the userinfo's password, secret query parameters), as written and decoded. */
export function urlSecrets(url: string): string[] {
  const found: string[] = []
  const pw = /^[a-z][a-z0-9+.-]*:\/\/[^@/:]*:([^@/]*)@/i.exec(url)?.[1]
  if (pw) found.push(pw)
  for (const m of url.matchAll(SECRET_PARAM)) if (m[2]) found.push(m[2])
  return found.flatMap((s) => [s, decode(s) ?? s, decode(s.replace(/\+/g, ' ')) ?? s]).filter((s, i, all) => all.indexOf(s) === i)
}

/** A URL with its password replaced (in the userinfo and in the query): safe to print, log, or put in an error. */
export function maskUrl(url: string): string {
  const masked = url.replace(SECRET_PARAM, (_, name: string, value: string) => (value ? `${name}***` : name))
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@(.*)$/i.exec(masked)
  if (m) {
    const colon = m[2]!.indexOf(':')
    // user@ alone is a user name (redis://user@host); what follows a colon is the password.
    const user = colon < 0 ? m[2]! : `${m[2]!.slice(0, colon)}:***`
    return `${m[1]}${user}@${m[3]}`.replace(/\/$/, '')
  }
  return masked.replace(/\/$/, '')
}
