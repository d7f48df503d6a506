/**
 * Bounded JSON: every JSON value read from Redis (heartbeat fields, checkpoints, handover markers,
 * events, audit records) and from files the operator is handed (snapshots) is parsed through here,
 * so one hostile or corrupt record nested 100,000 deep or megabytes long is refused as that one
 * record (the caller names its key) instead of exhausting the stack or memory of every reader.
 */

/** Deepest nesting of arrays and objects accepted in a record. */
export const JSON_MAX_DEPTH = 64
/** Largest JSON text accepted in one Redis record (UTF-8 bytes). */
export const JSON_MAX_RECORD_BYTES = 8 * 1024 * 1024

export interface JsonLimits {
  maxDepth?: number
  maxBytes?: number
}

/** Why `text` exceeds the limits (a short phrase), or null when it is within them. Linear, no recursion. */
export function jsonLimitProblem(text: string, limits: JsonLimits = {}): string | null {
  const maxDepth = limits.maxDepth ?? JSON_MAX_DEPTH
  const maxBytes = limits.maxBytes ?? JSON_MAX_RECORD_BYTES
  // A UTF-16 unit is at most 3 UTF-8 bytes: only a long text needs its bytes counted.
  if (text.length > maxBytes || (text.length * 3 > maxBytes && Buffer.byteLength(text) > maxBytes)) {
    return `is larger than ${maxBytes} bytes`
  }
  if (text.length <= maxDepth) return null
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return `is nested deeper than ${maxDepth} levels`
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return null
}

/** Thrown by parseBoundedJson: not JSON, or beyond the limits (`message` says which). */
export class JsonLimitError extends Error {}

/** JSON.parse within the limits; JsonLimitError (message: "is not valid JSON", "is nested deeper than 64 levels", ...) otherwise. */
export function parseBoundedJson(text: string, limits?: JsonLimits): unknown {
  const problem = jsonLimitProblem(text, limits)
  if (problem) throw new JsonLimitError(problem)
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new JsonLimitError('is not valid JSON')
  }
}
