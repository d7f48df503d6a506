/** Two stores on one prefix for the tests of a call sent twice: one behind a reply-eating proxy, one direct. */
import { RedisStore } from '../../src/index.js'
import { redisUrl, uniquePrefix } from './redis.js'
import { replyEater } from './proxies.js'

/** The proxy, the store behind it (`url`), the direct store `other`; each closed by `cleanup`. */
export async function storesBehindReplyEater(name: string, cleanup: Array<() => Promise<unknown>>) {
  const proxy = await replyEater(Number(new URL(redisUrl()).port))
  cleanup.push(() => proxy.close())
  const prefix = uniquePrefix(name)
  const url = `redis://127.0.0.1:${proxy.port}`
  const store = new RedisStore({ url, prefix })
  cleanup.push(() => store.close())
  const other = new RedisStore({ url: redisUrl(), prefix })
  cleanup.push(() => other.close())
  return { proxy, store, other, url, prefix }
}

/** A call's outcome as a value: `{ value }` or `{ err }`. */
export const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (err: unknown) => ({ err }),
  )
