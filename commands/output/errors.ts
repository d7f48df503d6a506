/**
 * The error classifier: every error the CLI can meet becomes one line and a documented exit code
 * (docs/operations.md, "Errors and exit codes"). Errors are told apart by what they are — the CLI's
 * own CliError, commander's errors, the library's error classes, Redis's replies (ioredis ReplyError,
 * whose first word is Redis's error code), Node's system and TLS errors (their `code`) — walking the
 * `cause` chain, never by re-reading messages in several places. The one exception is the RESP
 * decoder of ioredis, which throws a plain Error: it is recognised here, and only here.
 *
 * This module loads no Redis client (`--version` and `--help` import it): ReplyError is recognised by
 * its class name.
 */
import { CommanderError } from 'commander'
import {
  ConfigurationError,
  CoordinationUnavailableError,
  CorruptStateError,
  InvalidIdError,
  isAclRefusal,
  maskUrl,
  notMaster,
  OutcomeUnknownError,
} from '../lib.js'
import { EXIT, type ExitCode } from './exit-codes.js'
import { showNames } from './safe-text.js'

/** An error the CLI raises on purpose: its message is the one line printed, with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'CliError'
  }
}

export const usage = (m: string) => new CliError(m, EXIT.usage)
export const notFound = (m: string) => new CliError(m, EXIT.notFound)
export const refused = (m: string) => new CliError(m, EXIT.refused)
export const conflict = (m: string) => new CliError(m, EXIT.conflict)
export const corrupt = (m: string) => new CliError(m, EXIT.corrupt)
export const unreachable = (m: string) => new CliError(m, EXIT.unreachable)

/** The connection failed; `cause` is what the client reported (a system, TLS or protocol error). */
export class ConnectionFailed extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause })
    this.name = 'ConnectionFailed'
  }
}

/** Remove anything that looks like a password from a message (URLs with credentials, given secrets). */
export function scrub(message: string, secrets: string[] = []): string {
  let m = message
    .replace(/\b(rediss?(?:\+sentinel)?:\/\/)[^\s@/]*@/g, '$1***@')
    .replace(/\brediss?(?:\+sentinel)?:\/\/\S+/g, (u) => maskUrl(u))
  for (const s of secrets) if (s) m = m.split(s).join('***')
  return m
}

type Coded = Error & { code?: unknown; syscall?: unknown; path?: unknown; command?: { name?: string } }

/** A reply of Redis refusing a command (ioredis ReplyError; also inside a pipeline or a script). */
export function isReplyError(err: unknown): boolean {
  return err instanceof Error && err.name === 'ReplyError'
}

/** The Redis error code of a reply: its first word (`WRONGPASS`, `NOPERM`, `ERR`, …). */
function replyCode(err: Error): string {
  return /^[A-Z]+/.exec(err.message)?.[0] ?? 'ERR'
}

/** The SELECT of the URL's database failed (ioredis reports it as an 'error' event of the handshake). */
export function isSelectError(err: unknown): boolean {
  return isReplyError(err) && (err as Coded).command?.name === 'select'
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS did not answer)',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset by the server',
  EPIPE: 'connection closed by the server',
  ECONNABORTED: 'connection aborted',
}

const FILE_CODES: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'is a folder, not a file',
  ENOTDIR: 'a part of the path is not a folder',
}

/** Node's TLS and certificate errors (their `code`). */
function isTlsError(err: Coded): boolean {
  const code = typeof err.code === 'string' ? err.code : ''
  return (
    /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_OSSL_)/.test(code) ||
    (err as { library?: unknown }).library === 'SSL routines'
  )
}

/**
 * Of the errors a connection reported, the one that says most: a server that does not speak RESP
 * or fails TLS explains the resets and closed pipes that follow it.
 */
export function mostTelling(errors: Error[]): Error | null {
  return errors.find(isProtocolError) ?? errors.find((e) => isTlsError(e as Coded)) ?? errors[0] ?? null
}

/** The RESP decoder's own errors (plain Errors of ioredis): the server does not speak Redis's protocol. */
function isProtocolError(err: Error): boolean {
  return !isReplyError(err) && /^(Unknown RESP type|Protocol error)/.test(err.message)
}

/** The error itself and its causes, outermost first. */
function chain(err: unknown): unknown[] {
  const out: unknown[] = []
  for (let e: unknown = err; e !== undefined && e !== null && out.length < 8; e = (e as { cause?: unknown }).cause) {
    out.push(e)
    if (!(e instanceof Error)) break
  }
  return out
}

export interface Described {
  line: string
  code: ExitCode
}

/** Map any error to one line and an exit code. Never a stack trace, never a password. */
export function describeError(err: unknown, ctx: { url?: string; secrets?: string[]; names?: unknown } = {}): Described {
  const where = ctx.url ? ` at ${maskUrl(ctx.url)}` : ''
  const d = classify(err, where)
  // A key or id the line quotes is shown as listings show it (and as the command takes it back).
  return { line: scrub(showNames(d.line, ctx.names), ctx.secrets ?? []), code: d.code }
}

function classify(err: unknown, where: string): Described {
  const all = chain(err)
  const first = all[0]
  if (first instanceof CliError) return { line: first.message, code: first.exitCode }
  if (first instanceof CommanderError) return { line: first.message.replace(/^error: /, ''), code: EXIT.usage }
  if (first instanceof CorruptStateError) return { line: first.message, code: EXIT.corrupt }
  if (first instanceof OutcomeUnknownError) return { line: first.message, code: EXIT.unknown }
  if (first instanceof InvalidIdError || first instanceof ConfigurationError) return { line: first.message, code: EXIT.usage }
  // A Sentinel or a replica where a master is needed: say which, and what to give instead.
  for (const e of all) {
    if (e instanceof Error && /No such master with that name/.test(e.message)) {
      return {
        line: `the sentinels${where} follow no master of that name: check --master-name (SENTINEL MASTERS lists theirs)`,
        code: EXIT.usage,
      }
    }
    // The sentinels' own password refused (the client names it as its last error with every sentinel).
    if (
      e instanceof Error &&
      /All sentinels are unreachable.*Last error: (WRONGPASS|NOAUTH|.*invalid (username-)?password)/.test(e.message)
    ) {
      return {
        line: `authentication refused by the sentinels${where}: check their own user and password (--sentinel-username, --sentinel-password-file, REDIS_SENTINEL_PASSWORD, the context)`,
        code: EXIT.auth,
      }
    }
    const role = notMaster(e)
    if (role?.role === 'sentinel') {
      return {
        line: `not a Redis master${where}: it is a Redis Sentinel; give the sentinels and the master's name (--sentinel host:port --master-name <name>, or --url redis+sentinel://host:port,…/<name>)`,
        code: EXIT.usage,
      }
    }
    if (role?.role === 'replica') {
      return {
        line: `not the Redis master${where}: it is a read-only replica (a failover may have just demoted it); point at the master, or at its sentinels (--sentinel … --master-name …)`,
        code: EXIT.unreachable,
      }
    }
  }
  // The most specific cause decides: a system, TLS, protocol or Redis error under a wrapper.
  for (const e of [...all].reverse()) {
    if (!(e instanceof Error)) continue
    const found = specific(e as Coded, where)
    if (found) return found
  }
  if (first instanceof ConnectionFailed) return { line: `Redis unreachable${where}: ${first.message}`, code: EXIT.unreachable }
  if (first instanceof CoordinationUnavailableError) {
    const why = first.reason === 'unreachable' ? first.message.replace(/^Redis unreachable:\s*/, '') : first.message
    return { line: `Redis unreachable${where}: ${/did not answer/.test(why) ? 'timed out' : why}`, code: EXIT.unreachable }
  }
  const e = first as Coded
  if (e instanceof Error && ['MaxRetriesPerRequestError', 'ClusterAllFailedError'].includes(e.name)) {
    return { line: `Redis unreachable${where}: ${e.message}`, code: EXIT.unreachable }
  }
  if (e instanceof Error && /^Connection is closed|^Stream isn't writeable/.test(e.message)) {
    return { line: `Redis unreachable${where}: the connection closed`, code: EXIT.unreachable }
  }
  const msg = e instanceof Error ? e.message : String(e)
  return { line: `unexpected error: ${msg} (a bug: please report it)`, code: EXIT.internal }
}

/** A system, TLS, protocol or Redis reply error: its line, or null for any other error. */
function specific(e: Coded, where: string): Described | null {
  if (e instanceof CliError) return { line: e.message, code: e.exitCode }
  const code = typeof e.code === 'string' ? e.code : ''
  if (isReplyError(e)) return reply(e, where)
  if (isProtocolError(e)) {
    const got = /"(.)"/.exec(e.message)?.[1]
    return {
      line: `no Redis${where}: the server does not speak the Redis protocol${got ? ` (its first byte was ${JSON.stringify(got)})` : ''}; check the host and port of --url`,
      code: EXIT.unreachable,
    }
  }
  if (isTlsError(e)) {
    return {
      line: `Redis unreachable${where}: TLS handshake failed: ${e.message} (pass the server's CA with --tls-ca / REDIS_TLS_CA)`,
      code: EXIT.unreachable,
    }
  }
  if (NETWORK_CODES[code]) return { line: `Redis unreachable${where}: ${NETWORK_CODES[code]}`, code: EXIT.unreachable }
  if (FILE_CODES[code] && typeof e.path === 'string') {
    return { line: `cannot read ${e.path}: ${FILE_CODES[code]}`, code: EXIT.usage }
  }
  return null
}

function reply(e: Coded, where: string): Described {
  const code = replyCode(e)
  if (code === 'WRONGPASS' || code === 'NOAUTH' || /invalid (username-)?password/i.test(e.message)) {
    return {
      line: `authentication refused by Redis${where}: check the user and password (--url, --password-file, REDIS_PASSWORD, the context)`,
      code: EXIT.auth,
    }
  }
  const denied = aclDenial(e.message)
  if (denied) return { line: `permission refused by Redis${where}: ${denied}`, code: EXIT.auth }
  if (code === 'WRONGTYPE') return { line: `a key holds the wrong Redis type: ${e.message}`, code: EXIT.corrupt }
  if (code === 'OOM') {
    return {
      line: `Redis is out of memory${where}: it refuses writes (maxmemory reached); free memory or raise maxmemory`,
      code: EXIT.unreachable,
    }
  }
  if (['LOADING', 'BUSY', 'MASTERDOWN', 'CLUSTERDOWN', 'TRYAGAIN', 'READONLY'].includes(code)) {
    return { line: `Redis cannot serve now${where}: ${e.message}`, code: EXIT.unreachable }
  }
  if (isSelectError(e)) return { line: `database not available${where}: ${e.message}`, code: EXIT.usage }
  return { line: `Redis refused a command${where}: ${e.message}`, code: EXIT.internal }
}

/**
 * What an ACL refusal says is missing, in one phrase naming the command, channel or key, with the
 * ACL rule that grants it; null when the message is not an ACL refusal. Redis words refusals inside a
 * script differently (no NOPERM prefix, no command name): those name the script instead.
 */
export function aclDenial(msg: string): string | null {
  if (!isAclRefusal(msg)) return null
  // An operator script's own check, before any write (lua/includes/acl.lua): the command, or the key.
  let m = /NOPERM botmesh: the ACL user may not run (\w+) on /.exec(msg)
  if (m)
    return `the ACL user may not run ${m[1]} on the keys of the prefix (grant +${m[1]!.toLowerCase()} on ~<prefix>:*); nothing was written`
  m = /(?:NOPERM|No permissions)[^']*'([\w|]+)' command/i.exec(msg)
  if (m) return `the ACL user may not run ${m[1]!.toUpperCase()} (grant +${m[1]!.toLowerCase()})`
  if (/(NOPERM.*access one of the keys|No permissions to access a key)/i.test(msg))
    return 'the ACL user may not access these keys (grant ~<prefix>:*)'
  if (/(NOPERM|No permissions).*channel/i.test(msg)) return 'the ACL user may not use this pub/sub channel (grant &<prefix>:wake:*)'
  if (/^NOPERM/.test(msg)) return `${msg.replace(/^NOPERM\s*/, '')} (the ACL user lacks it)`
  m = /user executing the script can't (run this command|publish to the channel|access at least one of the keys)/i.exec(msg)
  if (m) {
    const what = /publish/.test(m[1]!)
      ? 'may not publish to the wake channel (grant &<prefix>:wake:*)'
      : /keys/.test(m[1]!)
        ? 'may not access the keys (grant ~<prefix>:*)'
        : 'may not run a command the script uses (grant +@read +@write +time +publish +pexpire, or +@all -@dangerous)'
    return `inside a Lua script the ACL user ${what}`
  }
  return `${msg} (the ACL user lacks it)`
}
