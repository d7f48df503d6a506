import { errorFromRedis } from '../errors/from-redis.js'
import { withTimeout, type RedisClient } from '../connection.js'
import { loadScript } from './load.js'

export type ScriptArg = string | number

/**
 * Runs lua/ scripts by EVALSHA and falls back to EVAL on NOSCRIPT (the script cache is empty after a
 * restart or failover). NOSCRIPT means the script did not run, so the fallback never applies it twice.
 * Every call is bounded by `timeoutMs`: a Redis that does not answer becomes CoordinationUnavailableError.
 */
export class ScriptRunner {
  constructor(
    private readonly redis: RedisClient,
    private readonly timeoutMs: number,
  ) {}

  /** `timeoutMs` overrides the runner's bound for one call (polls and renewals wait up to about a lease). */
  async run<T = unknown>(name: string, keys: string[], args: ScriptArg[], timeoutMs = this.timeoutMs): Promise<T> {
    const script = loadScript(name)
    if (keys.length !== script.numberOfKeys) {
      throw new Error(`script ${name} takes ${script.numberOfKeys} keys, got ${keys.length}`)
    }
    const argv = args.map((a) => (typeof a === 'number' ? String(Math.trunc(a)) : a))
    const call = async (): Promise<T> => {
      try {
        return (await this.redis.evalsha(script.sha, keys.length, ...keys, ...argv)) as T
      } catch (err) {
        if (err instanceof Error && err.message.startsWith('NOSCRIPT')) {
          return (await this.redis.eval(script.source, keys.length, ...keys, ...argv)) as T
        }
        throw err
      }
    }
    try {
      return await withTimeout(call(), timeoutMs, name)
    } catch (err) {
      throw errorFromRedis(err, keys[0])
    }
  }
}
