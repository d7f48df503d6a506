// What the CLI uses from the library: one import point, so commands never reach into key names.
export * from '../src/index.js'
import { validatePrefix, InvalidIdError } from '../src/keys.js'
import { usage } from './output/errors.js'

export function validatePrefixForCli(prefix: unknown): string {
  try {
    return validatePrefix(prefix)
  } catch (err) {
    if (err instanceof InvalidIdError) throw usage(`--prefix: ${err.message}`)
    throw err
  }
}
