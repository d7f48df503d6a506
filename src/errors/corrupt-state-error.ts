import { CoordinationError } from './coordination-error.js'
import { keyText } from '../bytes.js'

/** A Redis value under our prefix has the wrong type or cannot be decoded. Names the raw key. */
export class CorruptStateError extends CoordinationError {
  readonly redisKey: string
  /** `redisKey`: the key's name, or its bytes (a name that is not UTF-8: see ../bytes.ts). */
  constructor(redisKey: string | Buffer, detail: string, options?: { cause?: unknown }) {
    const name = keyText(redisKey)
    super('ERR_CORRUPT_STATE', `corrupt value at Redis key ${JSON.stringify(name)}: ${detail}`, options)
    this.redisKey = name
  }
}
