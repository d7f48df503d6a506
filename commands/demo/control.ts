/**
 * How `demo kill|freeze|start|close-transport|open-transport|yield|hang|stale-write|deploy-flow|status`, run from another terminal,
 * reach a running demo: a small state file and a Unix socket in the temp folder, both named after the
 * prefix. The running demo answers one JSON line per request on the socket.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CliError, notFound } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'

/** What a running demo publishes about itself (also what `demo status --json` prints). */
export interface DemoState {
  pid: number
  prefix: string
  url: string
  layout: string
  socket: string
  startedAt: number
  /** The throwaway redis-server this demo started, if any. */
  redis: { pid: number; port: number; dir: string } | null
  replicas: Array<{ replicaId: string; pid: number | null; state: string; log: string; incarnation: string | null }>
}

export interface ControlRequest {
  cmd: 'kill' | 'freeze' | 'start' | 'close-transport' | 'open-transport' | 'yield' | 'status' | 'stale-write' | 'deploy-flow' | 'hang'
  replica?: string
  seconds?: number
  to?: string
  /** `start`: the flow version the replica runs (a changed flow has another fingerprint: a rolling deploy). */
  flowVersion?: string
  /** `stale-write`: the chat (default: one the replica holds no part of); `hang`: the chat (default chat:1); `deploy-flow`: the flow. */
  chat?: string
  flow?: string
  /** `deploy-flow`: the version deployed (default: the next one). */
  version?: string
}

export interface ControlReply {
  ok: boolean
  message: string
  state?: DemoState
}

function slug(prefix: string): string {
  if (/^[\w.-]{1,40}$/.test(prefix)) return prefix
  return createHash('sha256').update(prefix).digest('hex').slice(0, 16)
}

export function demoPaths(prefix: string): { state: string; socket: string } {
  const base = join(tmpdir(), `botmesh-coord-demo-${slug(prefix)}`)
  return { state: `${base}.json`, socket: `${base}.sock` }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The state of the demo running on this prefix, or null (no file, or its process is gone). */
export function readDemoState(prefix: string): DemoState | null {
  try {
    const s = JSON.parse(readFileSync(demoPaths(prefix).state, 'utf8')) as DemoState
    return isAlive(s.pid) ? s : null
  } catch {
    return null
  }
}

/** Send one request to the demo running on this prefix. */
export async function request(prefix: string, req: ControlRequest, timeoutMs = 10_000): Promise<ControlReply> {
  const state = readDemoState(prefix)
  if (!state)
    throw notFound(
      `no demo running with prefix ${prefix} (start one with: botmesh-coord demo${prefix === 'demo' ? '' : ` --prefix ${prefix}`})`,
    )
  return new Promise<ControlReply>((resolve, reject) => {
    const sock = createConnection(state.socket)
    let buf = ''
    const timer = setTimeout(() => {
      sock.destroy()
      reject(new CliError(`the demo (pid ${state.pid}) did not answer within ${timeoutMs}ms`, EXIT.unreachable))
    }, timeoutMs)
    sock.on('error', (err) => {
      clearTimeout(timer)
      reject(new CliError(`cannot reach the demo (pid ${state.pid}) at ${state.socket}: ${err.message}`, EXIT.unreachable))
    })
    sock.on('data', (d) => {
      buf += d.toString()
      const nl = buf.indexOf('\n')
      if (nl < 0) return
      clearTimeout(timer)
      sock.end()
      try {
        resolve(JSON.parse(buf.slice(0, nl)) as ControlReply)
      } catch {
        reject(new CliError('the demo answered something that is not JSON', EXIT.internal))
      }
    })
    sock.write(`${JSON.stringify(req)}\n`)
  })
}
