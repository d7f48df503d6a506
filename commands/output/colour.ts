import { Chalk, type ChalkInstance } from 'chalk'

/**
 * The one place that decides about colour: off with NO_COLOR (any value), --no-color, or when the
 * stream is not a terminal; FORCE_COLOR forces it on (tests of the coloured output).
 */
export function makeColour(options: { color?: boolean; stream?: NodeJS.WriteStream }): ChalkInstance {
  const stream = options.stream ?? process.stdout
  const forced = process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== '0'
  const off = options.color === false || process.env.NO_COLOR !== undefined || (!stream.isTTY && !forced)
  return new Chalk({ level: off ? 0 : 1 })
}
