/**
 * The demo's Redis: the one at --url if it answers, else a throwaway redis-server on a free loopback
 * port (no persistence, a temp folder) that the demo stops on exit.
 */
import { spawn } from 'node:child_process'
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import type { Redis } from 'ioredis'
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

export function findOnPath(bin: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue
    try {
      accessSync(join(dir, bin), constants.X_OK)
      return join(dir, bin)
    } catch {
      // keep looking
    }
  }
  return null
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen({ port: 0, host: '127.0.0.1' }, () => {
      const addr = srv.address()
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))))
    })
  })
}

export interface ThrowawayRedis {
  url: string
  pid: number
  port: number
  dir: string
  stop(): Promise<void>
}

export async function startThrowawayRedis(bin: string): Promise<ThrowawayRedis> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'botmesh-coord-demo-redis-'))
  // Its own process group (detached): a Ctrl-C in the terminal reaches only the demo, which stops
  // the replicas first (they release their leases into a live Redis) and this server last.
  const child = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', join(dir, 'redis.log')],
    { cwd: dir, stdio: 'ignore', detached: true },
  )
  child.unref()
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('spawn', () => resolve(child.pid!))
    child.once('error', reject)
  })
  const exited = () => child.exitCode !== null || child.signalCode !== null
  const stop = async (): Promise<void> => {
    if (!exited()) {
      try {
        process.kill(pid, 'SIGCONT') // in case someone froze it
        process.kill(pid, 'SIGTERM')
      } catch {
        // gone
      }
      const deadline = Date.now() + 3000
      while (!exited() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
      if (!exited()) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone
        }
        const d2 = Date.now() + 2000
        while (!exited() && Date.now() < d2) await new Promise((r) => setTimeout(r, 25))
      }
    }
    rmSync(dir, { recursive: true, force: true })
  }
  const url = `redis://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  for (;;) {
    if (exited()) {
      await stop()
      throw new Error(`redis-server exited at start (code ${child.exitCode})`)
    }
    if ('layout' in (await probeRedis(url, 500))) return { url, pid, port, dir, stop }
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`redis-server on port ${port} did not answer within 10s`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}
