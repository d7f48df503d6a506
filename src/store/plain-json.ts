/**
 * Where a value stops being plain JSON, or null when it is plain JSON all the way down.
 * Plain JSON: null, booleans, finite numbers, strings, arrays, and objects whose prototype is
 * Object.prototype or null. A class instance, a function, a Date, a Map, undefined, a bigint, NaN or a
 * cycle would not survive the trip through the store unchanged, so they are refused, not coerced.
 */
export function plainJsonProblem(value: unknown, path = 'state', seen = new Set<object>()): string | null {
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
  if (Array.isArray(obj)) {
    seen.add(obj)
    for (let i = 0; i < obj.length; i++) {
      const p = plainJsonProblem(obj[i], `${path}[${i}]`, seen)
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
    const p = plainJsonProblem(v, `${path}.${k}`, seen)
    if (p) return p
  }
  seen.delete(obj)
  return null
}
