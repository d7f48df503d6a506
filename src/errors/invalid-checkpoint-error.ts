import { CoordinationError } from './coordination-error.js'

/** A checkpoint that cannot be stored: state that is not plain JSON, an answer above maxAnswerBytes. */
export class InvalidCheckpointError extends CoordinationError {
  readonly key: string
  constructor(key: string, message: string) {
    super('ERR_INVALID_CHECKPOINT', `checkpoint ${JSON.stringify(key)}: ${message}`)
    this.key = key
  }
}
