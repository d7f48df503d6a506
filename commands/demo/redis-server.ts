/**
 * The demo's Redis: the one at --url if it answers, else a throwaway redis-server on a free loopback
 * port (no persistence, a temp folder) that the demo stops on exit.
 */
import type { Redis } from 'ioredis'
import { startRedis } from '../../scripts/redis-procs.mjs'
import { loadIo, type Layout } from '../lib.js'

/** PING (and detect the layout) within timeoutMs; `{ error }` when nothing answers there. */
export async function probeRedis(url: string, timeoutMs = 1500): Promise<{ layout: Layout } | { error: string }> {
  let client: Redis | null = null
  try {
    client = (await loadIo()).connect({ url, layout: 'standalone', failFast: true, connectionName: 'botmesh-coord-demo' }) as Redis
    client.on('error', () => {})
    const c = client
    const info = await Promise.race([
      c.ping().then(() => c.info('cluster')),
      new Promise<never>((_, rej) => setTimeout(() => rej(new Error('timed out')), timeoutMs)),
    ])
    return { layout: /cluster_enabled:1/.test(info) ? 'cluster' : 'standalone' }
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) }
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
