import { CoordinationError } from './coordination-error.js'

/** An id (chat key, lead name, lock key, replicaId), a prefix or a layout that cannot be used as given. */
export class InvalidIdError extends CoordinationError {
  constructor(message: string) {
    super('ERR_INVALID_ID', message)
  }
}
