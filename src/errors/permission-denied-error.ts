import { ConfigurationError } from './configuration-error.js'

/**
 * The Redis ACL user lacks a permission the replica cannot work without (a command, the keys under
 * the prefix, the wake channels). `grant` is the ACL rule that gives it (`+subscribe`,
 * `&shop:wake:*`, `~shop:*`, …); the message names it. A ConfigurationError with its own code
 * `ERR_NO_PERMISSION`: the user's rules must change, retrying does not help.
 */
export class PermissionDeniedError extends ConfigurationError {
  readonly grant: string
  constructor(what: string, grant: string, options?: { cause?: unknown }) {
    super(`the Redis user ${what} (grant ${grant})`, options, 'ERR_NO_PERMISSION')
    this.grant = grant
  }
}
