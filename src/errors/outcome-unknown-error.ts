import { CoordinationError } from './coordination-error.js'

/**
 * An operator intervention's script was sent and no answer came (Redis did not answer within the
 * timeout, or the connection dropped): it may have been applied or not. Not a failure: `check` says
 * how to learn which (the state it would change, pinned to what the operator saw).
 */
export class OutcomeUnknownError extends CoordinationError {
  /** The intervention as the operator would type it, e.g. `chat release chat:42`. */
  readonly intervention: string
  /** How to learn the outcome, in words (e.g. "chat:42's fence is above 17… when it was applied"). */
  readonly check: string
  constructor(intervention: string, check: string, options?: { cause?: unknown }) {
    const why = options?.cause instanceof Error ? options.cause.message : 'no answer'
    super('ERR_OUTCOME_UNKNOWN', `${intervention}: outcome unknown (${why}): it may have been applied or not; ${check}`, options)
    this.intervention = intervention
    this.check = check
  }
}
