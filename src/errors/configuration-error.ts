import { CoordinationError } from './coordination-error.js'

/** Options that cannot work (a client with keyPrefix, a bad duration, an unknown layout, a schema from the future). */
export class ConfigurationError extends CoordinationError {
  constructor(message: string, options?: { cause?: unknown }, code = 'ERR_CONFIGURATION') {
    super(code, message, options)
  }
}
