// What the CLI uses from the library: one import point, so commands never reach into key names.
export * from '../src/index.js'
import { validatePrefix } from '../src/keys.js'
import { InvalidIdError } from '../src/errors/index.js'
import { usage } from './output/errors.js'

export function validatePrefixForCli(prefix: unknown): string {
  try {
    return validatePrefix(prefix)
  } catch (err) {
    if (err instanceof InvalidIdError) throw usage(`--prefix: ${err.message}`)
    throw err
  }
}

/**
 * ioredis rejects commands on a refused or failed connection with "Connection is closed." and
 * reports the real cause (ECONNREFUSED, ENOTFOUND, a TLS or auth failure) only on the client's
 * 'error' event. Put that cause back into the error the command sees, so the one line says why.
 */
export function withConnectionCause(err: unknown, cause: Error | null): unknown {
  if (!cause || !(err instanceof Error)) return err
  if (!/Connection is closed|Stream isn't writeable|enableOfflineQueue|MaxRetriesPerRequest|connect ETIMEDOUT/i.test(err.message))
    return err
  const e = new Error(cause.message, { cause })
  ;(e as Error & { code?: string }).code = (cause as Error & { code?: string }).code
  return e
}

// The pure views shared with the dashboard (rows, explain verdicts).
export * from '../src/state/views.js'

// Per-node commands (doctor's INFO / CONFIG GET on every master).
export { masters, isCluster } from '../src/connection.js'
