import { CoordinationError } from './coordination-error.js'

/** A Redis value under our prefix has the wrong type or cannot be decoded. Names the raw key. */
export class CorruptStateError extends CoordinationError {
  readonly redisKey: string
  constructor(redisKey: string, detail: string, options?: { cause?: unknown }) {
    super('ERR_CORRUPT_STATE', `corrupt value at Redis key ${JSON.stringify(redisKey)}: ${detail}`, options)
    this.redisKey = redisKey
  }
}
