import { CommanderError } from 'commander'
import { ConfigurationError, CoordinationUnavailableError, CorruptStateError, InvalidIdError, maskUrl } from '../../src/index.js'
import { EXIT, type ExitCode } from './exit-codes.js'

/** An error the CLI raises on purpose: its message is the one line printed, with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message)
  }
}

export const usage = (m: string) => new CliError(m, EXIT.usage)
export const notFound = (m: string) => new CliError(m, EXIT.notFound)
export const refused = (m: string) => new CliError(m, EXIT.refused)
export const conflict = (m: string) => new CliError(m, EXIT.conflict)

/** Remove anything that looks like a password from a message (URLs with credentials, AUTH args). */
export function scrub(message: string, secrets: string[] = []): string {
  let m = message.replace(/\b(rediss?:\/\/)[^\s@/]*@/g, '$1***@')
  for (const s of secrets) if (s && s.length >= 1) m = m.split(s).join('***')
  return m
}

/** Map any error to one line and an exit code. Never a stack trace. */
export function describeError(err: unknown, ctx: { url?: string; secrets?: string[] } = {}): { line: string; code: ExitCode } {
  const where = ctx.url ? ` at ${maskUrl(ctx.url)}` : ''
  const secrets = ctx.secrets ?? []
  if (err instanceof CliError) return { line: scrub(err.message, secrets), code: err.exitCode }
  if (err instanceof CommanderError) return { line: scrub(err.message.replace(/^error: /, ''), secrets), code: EXIT.usage }
  const msg = err instanceof Error ? err.message : String(err)
  if (/WRONGPASS|NOAUTH|invalid username-password|invalid password|Authentication required/i.test(msg)) {
    return { line: `authentication refused by Redis${where}: check the user and password in --url / REDIS_URL`, code: EXIT.auth }
  }
  const denied = aclDenial(msg)
  if (denied) return { line: scrub(`permission refused by Redis${where}: ${denied}`, secrets), code: EXIT.auth }
  if (/NOPERM/i.test(msg)) {
    const m = /NOPERM[^:]*:?\s*(.*)$/i.exec(msg)
    return { line: scrub(`permission refused by Redis${where}: ${m?.[1] || msg} (the ACL user lacks it)`, secrets), code: EXIT.auth }
  }
  if (err instanceof InvalidIdError || err instanceof ConfigurationError) return { line: scrub(msg, secrets), code: EXIT.usage }
  if (err instanceof CorruptStateError) return { line: scrub(msg, secrets), code: EXIT.corrupt }
  if (
    err instanceof CoordinationUnavailableError ||
    /ECONNREFUSED|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH|Connection is closed|connect ETIMEDOUT|Stream isn't writeable|certificate|SSL|TLS|EPROTO|ECONNRESET|None of startup nodes|Failed to refresh slots|did not answer/i.test(
      msg,
    )
  ) {
    return { line: `Redis unreachable${where}: ${scrub(shortNetError(msg), secrets)}`, code: EXIT.unreachable }
  }
  return { line: scrub(`unexpected error: ${msg}`, secrets), code: EXIT.internal }
}

function shortNetError(msg: string): string {
  if (/ECONNREFUSED/.test(msg)) return 'connection refused'
  if (/certificate|SSL|TLS|EPROTO/i.test(msg)) return `TLS handshake failed: ${msg} (pass the server's CA with --tls-ca / REDIS_TLS_CA)`
  if (/ENOTFOUND/.test(msg)) return 'host not found'
  if (/ETIMEDOUT|did not answer|timed out/i.test(msg)) return 'timed out'
  if (/None of startup nodes/.test(msg)) return 'no cluster node answered'
  return msg.replace(/^Redis unreachable:\s*/, '')
}

/**
 * What an ACL refusal says is missing, in one phrase naming the command, channel or key, with the
 * ACL rule that grants it; null when the message is not an ACL refusal. Redis words refusals inside a
 * script differently (no NOPERM prefix, no command name): those name the script instead.
 */
export function aclDenial(msg: string): string | null {
  let m = /NOPERM[^']*'([\w|]+)' command/i.exec(msg)
  if (m) return `the ACL user may not run ${m[1]!.toUpperCase()} (grant +${m[1]!.toLowerCase()})`
  if (/NOPERM.*access one of the keys/i.test(msg)) return 'the ACL user may not access these keys (grant ~<prefix>:*)'
  if (/NOPERM.*channel/i.test(msg)) return 'the ACL user may not use this pub/sub channel (grant &<prefix>:wake:*)'
  m = /user executing the script can't (run this command|publish to the channel|access at least one of the keys)/i.exec(msg)
  if (m) {
    const what = /publish/.test(m[1]!)
      ? 'may not publish to the wake channel (grant &<prefix>:wake:*)'
      : /keys/.test(m[1]!)
        ? 'may not access the keys (grant ~<prefix>:*)'
        : 'may not run a command the script uses (grant +@read +@write +time +publish +pexpire, or +@all -@dangerous)'
    return `inside a Lua script the ACL user ${what}`
  }
  return null
}
