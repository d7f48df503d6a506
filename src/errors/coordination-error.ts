/** Base of every error this library throws on purpose. `code` is stable: match on it, not on the message. */
export class CoordinationError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}
