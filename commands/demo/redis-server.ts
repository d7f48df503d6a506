/**
 * The demo's Redis: the one at --url if it answers, else a throwaway redis-server on a free loopback
 * port (no persistence, a temp folder) that the demo stops on exit.
 */
import type { Redis } from 'ioredis'
import { startRedis } from '../../scripts/redis-procs.mjs'
import { loadIo, maskUrl, type Layout } from '../lib.js'
import { ConnectionFailed, describeError, isReplyError, mostTelling, unreachable } from '../output/errors.js'
import type { ExitCode } from '../output/exit-codes.js'

/**
 * PING (and detect the layout) within timeoutMs; when nothing answers there, `{ error }` is the
 * classifier's one line (a refused connection, a server that does not speak RESP, a refused password)
 * and its exit code.
 */
export async function probeRedis(url: string, timeoutMs = 1500): Promise<{ layout: Layout } | { error: string; code: ExitCode }> {
  let client: Redis | null = null
  const errors: Error[] = []
  try {
    client = (await loadIo()).connect({ url, layout: 'standalone', failFast: true, connectionName: 'botmesh-coord-demo' }) as Redis
    client.on('error', (e: Error) => errors.length < 20 && errors.push(e))
    const c = client
    const info = await Promise.race([
      c.ping().then(() => c.info('cluster')),
      new Promise<never>((_, rej) =>
        setTimeout(() => rej(unreachable(`Redis unreachable at ${maskUrl(url)}: timed out after ${timeoutMs}ms`)), timeoutMs),
      ),
    ])
    return { layout: /cluster_enabled:1/.test(info) ? 'cluster' : 'standalone' }
  } catch (err) {
    // The client rejects with "Connection is closed"; what it reported on 'error' is the real cause.
    const cause = mostTelling(errors)
    const { line, code } = describeError(cause && !isReplyError(err) ? new ConnectionFailed(cause) : err, { url })
    return { error: line, code }
  } finally {
    client?.disconnect()
  }
}

// The one launcher of throwaway servers (tests, benchmark, fault campaign and this demo): bundled
// into dist by the build.
export { findOnPath } from '../../scripts/redis-procs.mjs'

export interface ThrowawayRedis {
  url: string
  pid: number
  port: number
  dir: string
  stop(): Promise<void>
}

/**
 * A redis-server on a free loopback port, no persistence, in a temp folder — in its own process
 * group (detached): a Ctrl-C in the terminal reaches only the demo, which stops the replicas first
 * (they release their leases into a live Redis) and this server last.
 */
export function startThrowawayRedis(bin: string): Promise<ThrowawayRedis> {
  return startRedis({ bin, detached: true })
}
