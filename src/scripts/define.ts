/**
 * How a Lua script is described to TypeScript: its name (the file lua/<name>.lua), its KEYS by role,
 * its ARGV in order with how each is written on the wire, and the one function that decodes its
 * reply. A call names its keys and arguments, so a missing, extra or mistyped one does not compile.
 */

/**
 * How one ARGV is written: `str` as is; `int` a whole number (truncated, for durations and counts);
 * `num` a number exactly as JavaScript prints it (fences, tickets, revisions); `json` as JSON;
 * `flag` '1' or ''; a trailing `?` also takes null (for json?: undefined; null is JSON), written as
 * '' — the scripts' "not given".
 */
export type ArgKind = 'str' | 'str?' | 'int' | 'num' | 'num?' | 'flag' | 'json' | 'json?'

interface ArgTypes {
  str: string
  'str?': string | null
  int: number
  num: number
  'num?': number | null
  flag: boolean
  json: unknown
  'json?': unknown
}

export type ArgSchema = Record<string, ArgKind>

/** The arguments of a call, by name, typed from the script's ARGV schema (a `?` kind may be left out). */
export type ScriptArgs<S extends ArgSchema> = { [P in keyof S as S[P] extends `${string}?` ? never : P]: ArgTypes[S[P]] } & {
  [P in keyof S as S[P] extends `${string}?` ? P : never]?: ArgTypes[S[P]]
}

/** What ioredis hands back for a script's reply (RESP2: Lua false and nil are null). */
export type Reply = unknown

export interface ScriptDef<K extends string, S extends ArgSchema, R> {
  /** lua/<name>.lua; the number after the last dash is the key count. */
  readonly name: string
  /** KEYS[1..n] by role, in order. */
  readonly keys: readonly K[]
  /** ARGV[1..n] by name, in order, with how each is written. */
  readonly argv: S
  /** The reply as a typed result: every status code of the script is read here and nowhere else. */
  readonly decode: (reply: Reply, rawKey: string) => R
  /**
   * What a reply means when a connection of the client closed during the call. The client then sends
   * the command again once it reconnects (ioredis `autoResendUnfulfilledCommands`), so the reply may
   * be a second run's, and a second run of a call that took effect can answer otherwise than the
   * first did. Every script says what its replies mean then, so no caller has to: the result to give
   * the caller — the reply as is, when a second run answers as the first one did (an idempotent
   * script, or one that knows its own earlier run by a token, a write id or a request id); what the
   * first run did, when the second run's answer can only mean the state the caller asked for holds (a
   * release finding nothing of its own: released by the first run, or not its own any more); or
   * UNKNOWN when it cannot be told (a conditional write refused: the first run may have written). The
   * caller then gets CoordinationUnavailableError ('unreachable'), as after a timeout.
   */
  readonly resent: (result: R) => R | typeof UNKNOWN
}

/** A reply whose outcome cannot be told (see ScriptDef.resent). */
export const UNKNOWN: unique symbol = Symbol('unknown outcome')

/** resent: the reply as is (a second run answers as the first one did). */
export const asIs = <R>(result: R): R => result

/** resent: unknown when `refused(result)` (the first run may have done what the second one refuses). */
export const unknownIf =
  <R>(refused: (result: R) => boolean) =>
  (result: R): R | typeof UNKNOWN =>
    refused(result) ? UNKNOWN : result

export function defineScript<const K extends string, const S extends ArgSchema, R>(def: ScriptDef<K, S, R>): ScriptDef<K, S, R> {
  return def
}

function encodeArg(kind: ArgKind, v: unknown, name: string): string {
  if (v === undefined || (v === null && !kind.startsWith('json'))) {
    if (kind.endsWith('?')) return ''
    throw new TypeError(`script argument ${name} is required`)
  }
  switch (kind) {
    case 'str':
    case 'str?':
      return String(v)
    case 'int':
      return String(Math.trunc(v as number))
    case 'num':
    case 'num?':
      return String(v)
    case 'flag':
      return v ? '1' : ''
    case 'json':
    case 'json?':
      return JSON.stringify(v)
  }
}

/** Each schema's [name, kind] pairs, made once (every turn encodes two scripts' arguments). */
const schemaEntries = new WeakMap<ArgSchema, Array<[string, ArgKind]>>()

/** ARGV in the script's order, each written as its kind says. */
export function encodeArgs<S extends ArgSchema>(schema: S, args: ScriptArgs<S>): string[] {
  let entries = schemaEntries.get(schema)
  if (!entries) schemaEntries.set(schema, (entries = Object.entries(schema)))
  const values = args as Record<string, unknown>
  const out = new Array<string>(entries.length)
  for (let i = 0; i < entries.length; i++) out[i] = encodeArg(entries[i]![1], values[entries[i]![0]], entries[i]![0])
  return out
}
