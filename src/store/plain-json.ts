import { JSON_MAX_DEPTH } from '../wire/json.js'

/**
 * Deepest nesting of arrays and objects a stored value may have: the store wraps it in one object
 * (`{"state": …}`), and a reader refuses a record nested deeper than JSON_MAX_DEPTH.
 */
export const PLAIN_JSON_MAX_DEPTH = JSON_MAX_DEPTH - 1

/**
 * Where a value stops being plain JSON, or null when it is plain JSON all the way down.
 * Plain JSON: null, booleans, finite numbers, strings, arrays, and objects whose prototype is
 * Object.prototype or null. A class instance, a function, a Date, a Map, undefined, a bigint, NaN or a
 * cycle would not survive the trip through the store unchanged, so they are refused, not coerced; so
 * is a value nested deeper than PLAIN_JSON_MAX_DEPTH (it could not be read back), checked before the
 * stack runs out.
 */
export function plainJsonProblem(value: unknown, path = 'state', seen = new Set<object>(), depth = 0): string | null {
  if (value === null) return null
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return null
    case 'number':
      return Number.isFinite(value) ? null : `${path} is ${value} (not representable in JSON)`
    case 'undefined':
      return `${path} is undefined`
    case 'function':
      return `${path} is a function`
    case 'bigint':
      return `${path} is a bigint`
    case 'symbol':
      return `${path} is a symbol`
  }
  const obj = value as object
  if (seen.has(obj)) return `${path} is a circular reference`
  if (depth >= PLAIN_JSON_MAX_DEPTH) {
    return `${/^[^.[]*/.exec(path)![0]} is nested deeper than ${PLAIN_JSON_MAX_DEPTH} levels of arrays and objects`
  }
  if (Array.isArray(obj)) {
    seen.add(obj)
    for (let i = 0; i < obj.length; i++) {
      const p = plainJsonProblem(obj[i], `${path}[${i}]`, seen, depth + 1)
      if (p) return p
    }
    seen.delete(obj)
    return null
  }
  const proto = Object.getPrototypeOf(obj)
  if (proto !== Object.prototype && proto !== null) {
    const name = (proto?.constructor as { name?: string } | undefined)?.name ?? 'object'
    return `${path} is a ${name === 'Date' ? 'Date' : `${name} instance`}, not a plain object`
  }
  seen.add(obj)
  for (const [k, v] of Object.entries(obj)) {
    const p = plainJsonProblem(v, `${path}.${k}`, seen, depth + 1)
    if (p) return p
  }
  seen.delete(obj)
  return null
}
