/**
 * The one connection of a command. With `--layout auto` the first connection asks the server
 * whether it is a Cluster node (INFO cluster) and, for a standalone server, is the command's
 * connection from then on; a Cluster gets its cluster client (one connection per master). Failures
 * keep their real cause (the client reports a refused connection, a TLS failure or a server that
 * does not speak RESP on its 'error' event, and rejects the command with "Connection is closed"), and
 * a failed SELECT of the URL's database is an error, not a silent fall-back to database 0.
 */
import { loadIo, maskUrl, type Io, type Layout, type RedisClient } from './lib.js'
import { ConnectionFailed, isReplyError, isSelectError, mostTelling, unreachable, usage } from './output/errors.js'
import type { Target } from './target.js'

export interface Connection {
  io: Io
  redis: RedisClient
  layout: Layout
  /** Run a first command: the real cause of a failure, and a failed SELECT, surface here. */
  check<T>(first: Promise<T>): Promise<T>
  /** What the client reported about a failed connection, if anything. */
  cause(): Error | null
  close(): Promise<void>
}

function isClusterClient(redis: RedisClient): redis is import('ioredis').Cluster {
  return (redis as { isCluster?: boolean }).isCluster === true
}

/** Bound a promise by the command timeout. */
function bounded<T>(p: Promise<T>, ms: number, url: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(unreachable(`Redis unreachable at ${maskUrl(url)}: timed out after ${ms}ms`)), ms)
    }),
  ])
}

function attach(io: Io, t: Target, layout: Layout, connectionName: string | undefined) {
  const redis = io.connect({ url: t.url, layout, tlsCaFile: t.tlsCa, failFast: true, connectionName, ...t.sentinelAuth })
  const errors: Error[] = []
  let selectError: Error | null = null
  const onError = (e: Error) => {
    if (isSelectError(e)) selectError ??= e
    else if (errors.length < 20) errors.push(e)
  }
  redis.on('error', onError)
  redis.on('node error', onError)
  const check = async <T>(first: Promise<T>): Promise<T> => {
    let value: T
    try {
      value = await bounded(first, t.timeoutMs, t.url)
    } catch (err) {
      // A refused command is Redis's answer; anything else is the connection's failure, whose
      // cause the client reported on its 'error' event.
      const cause = mostTelling(errors)
      if (isReplyError(err) || !cause) throw err
      throw new ConnectionFailed(cause)
    }
    if (selectError) {
      throw usage(`--url: database ${t.db} is not available at ${maskUrl(t.url)}: ${selectError.message}`)
    }
    return value
  }
  const close = async () => {
    if (redis.status === 'end') return
    // ioredis' disconnect() of a stream that failed to connect arms an un-referenced 2 s timer that
    // would keep the CLI alive after its answer: quit when connected, disconnect otherwise. A server
    // that accepted the connection and never answers would never answer QUIT either: it gets at most
    // a second (within the command's timeout), then the connection is dropped.
    const quit = redis.quit().then(
      () => true,
      () => false,
    )
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.min(t.timeoutMs, 1000))))
    const quitted = await Promise.race([quit, late])
    clearTimeout(timer)
    if (!quitted && (redis.status as string) !== 'end') {
      // disconnect() half-closes the socket and destroys it only 2 s later (a silent server never
      // closes its side): destroy it now.
      redis.disconnect()
      for (const node of isClusterClient(redis) ? redis.nodes() : [redis]) (node as { stream?: { destroy(): void } }).stream?.destroy()
    }
  }
  return { redis, check, close, cause: () => mostTelling(errors) }
}

/**
 * Open the command's connection; the layout is detected on it when `auto`. Its first command goes
 * alone, so that a server that does not speak RESP answers it (and is named as such) before any
 * second write meets a closed socket. No connection name: a CLI connection lives for one command.
 */
export async function openConnection(t: Target, connectionName?: string): Promise<Connection> {
  const io = await loadIo()
  if (t.layout === 'cluster' && t.db !== 0) throw usage(`--url: a Redis Cluster has only database 0; drop /${t.db} from the URL`)
  const first = attach(io, t, t.layout === 'cluster' ? 'cluster' : 'standalone', connectionName)
  if (t.layout === 'cluster') await connectMasters(first.redis as import('ioredis').Cluster, t.timeoutMs)
  if (t.layout !== 'auto') return { io, layout: t.layout, ...first }
  let info: string
  try {
    info = await first.check((first.redis as import('ioredis').Redis).info('cluster'))
  } catch (err) {
    await first.close()
    throw err
  }
  if (!/cluster_enabled:1/.test(info)) return { io, layout: 'standalone', ...first }
  await first.close()
  if (t.db !== 0) throw usage(`--url: ${maskUrl(t.url)} is a Redis Cluster node, which has only database 0; drop /${t.db} from the URL`)
  const conn = attach(io, t, 'cluster', connectionName)
  await connectMasters(conn.redis as import('ioredis').Cluster, t.timeoutMs)
  return { io, layout: 'cluster', ...conn }
}

/**
 * Connection set-up on a Cluster: once the slots are known, open every master's connection at once
 * (the client opens each at its first command), so that a command's first reads reach all the
 * masters they need in one round trip instead of one more per connection still being opened.
 * Best effort, at most a second: a failure or a master slow to answer is left to the command's own reads,
 * which report it as they do without this.
 */
async function connectMasters(redis: import('ioredis').Cluster, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(timeoutMs, 1000))))
  const opened = (async () => {
    await settled(redis)
    if (redis.status !== 'ready') return
    await Promise.all(redis.nodes('master').map((n) => (n.status === 'wait' ? n.connect().catch(() => {}) : settled(n))))
  })()
  await Promise.race([opened, bound])
  clearTimeout(timer)
}

/** Resolves once a client is ready, or failed, or ended (whichever comes first; at once when ready). */
function settled(client: import('ioredis').Cluster | import('ioredis').Redis): Promise<void> {
  if (client.status === 'ready' || client.status === 'end') return Promise.resolve()
  return new Promise<void>((resolve) => {
    const done = () => {
      for (const e of ['ready', 'error', 'end']) client.off(e, done)
      resolve()
    }
    for (const e of ['ready', 'error', 'end']) client.once(e, done)
  })
}
