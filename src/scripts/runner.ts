import type { RedisKey } from '../keys.js'
import { keyText } from '../bytes.js'
import { errorFromRedis } from '../errors/from-redis.js'
import { batchTaskWrites, connectionCloses, withTimeout, type RedisClient } from '../connection.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { encodeArgs, UNKNOWN, type ArgSchema, type ScriptArgs, type ScriptDef } from './define.js'
import { loadScript } from './load.js'

/**
 * Runs lua/ scripts by EVALSHA and falls back to EVAL on NOSCRIPT (the script cache is empty after a
 * restart or failover). NOSCRIPT means the script did not run, so the fallback never applies it twice.
 * Every call is bounded by `timeoutMs`: a Redis that does not answer becomes CoordinationUnavailableError.
 */
export class ScriptRunner {
  private readonly closes: () => number
  constructor(
    private readonly redis: RedisClient,
    private readonly timeoutMs: number,
  ) {
    this.closes = connectionCloses(redis)
  }

  /**
   * Run one script with its keys (by role) and arguments (by name), and decode its reply.
   * `timeoutMs` overrides the runner's bound for one call (polls and renewals wait up to about a lease).
   */
  async call<K extends string, S extends ArgSchema, R>(
    def: ScriptDef<K, S, R>,
    keys: NoInfer<Record<K, RedisKey>>,
    args: NoInfer<ScriptArgs<S>>,
    timeoutMs = this.timeoutMs,
  ): Promise<R> {
    const script = loadScript(def.name)
    const keyList = def.keys.map((role) => keys[role])
    if (keyList.length !== script.numberOfKeys) {
      throw new Error(`script ${def.name} takes ${script.numberOfKeys} keys, its definition names ${keyList.length}`)
    }
    return this.run(def, keyList, encodeArgs(def.argv, args), timeoutMs)
  }

  /**
   * Run a script that takes any number of keys (lease-renew-many-0: on a standalone server, where
   * every key is on the one node), each with its own trailing argument after the named ones.
   */
  callMany<S extends ArgSchema, R>(
    def: ScriptDef<never, S, R>,
    keyList: RedisKey[],
    args: NoInfer<ScriptArgs<S>>,
    perKey: string[],
    timeoutMs = this.timeoutMs,
  ): Promise<R> {
    if (perKey.length !== keyList.length) throw new Error(`script ${def.name}: one trailing argument per key`)
    return this.run(def, keyList, [...encodeArgs(def.argv, args), ...perKey], timeoutMs)
  }

  private async run<K extends string, S extends ArgSchema, R>(
    def: ScriptDef<K, S, R>,
    keyList: RedisKey[],
    argv: string[],
    timeoutMs: number,
  ): Promise<R> {
    const script = loadScript(def.name)
    // Calls made in the same task leave together, a few to a write (batchTaskWrites): a lone command
    // (a turn's take or release) still goes out before the loop turns. A caller that sends many
    // together across tasks (the renewal cycle) corks the connection around them itself (batchWrites).
    const redis = this.redis
    batchTaskWrites(redis)
    const ifNoScript = (err: unknown): Promise<unknown> => {
      if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err
      return redis.eval(script.source, keyList.length, ...keyList, ...argv)
    }
    let reply: unknown
    const closesBefore = this.closes()
    try {
      reply = await withTimeout(redis.evalsha(script.sha, keyList.length, ...keyList, ...argv).catch(ifNoScript), timeoutMs, def.name)
    } catch (err) {
      throw errorFromRedis(err, keyList[0] === undefined ? undefined : keyText(keyList[0]))
    }
    const name = keyList[0] === undefined ? def.name : keyText(keyList[0])
    const result = def.decode(reply, name)
    if (this.closes() === closesBefore) return result
    // The connection dropped during the call: the reply may be a second run's (see ScriptDef.resent).
    const meant = def.resent(result)
    if (meant === UNKNOWN) {
      throw new CoordinationUnavailableError(
        'unreachable',
        `the connection to Redis dropped while ${def.name} was under way: it may have taken effect before the client sent it again, so its refusal is not known to be the outcome`,
        { key: keyList[0] === undefined ? undefined : keyText(keyList[0]) },
      )
    }
    return meant
  }
}
