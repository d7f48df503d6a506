import { CoordinationError } from './coordination-error.js'

/** An id (chat key, lead name, lock key, replicaId, incarnation), a prefix or a layout that cannot be used as given. */
export class InvalidIdError extends CoordinationError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_INVALID_ID', message, options)
  }
}
