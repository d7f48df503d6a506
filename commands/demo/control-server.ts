/**
 * The running demo's side of ./control.ts: the Unix socket that answers one JSON line per request, and
 * the state file the rehearsal sub-commands read to find it. One demo per prefix: a second one on the
 * same prefix refuses to start while the first is alive.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { demoPaths, isAlive, type ControlReply, type ControlRequest, type DemoState } from './control.js'

export interface ControlServerOptions {
  prefix: string
  /** Answers one request (a rejection is answered as `ok: false` with its message). */
  handle(req: ControlRequest): Promise<ControlReply>
  /** Where the requests that did something are logged. */
  err(line: string): void
}

export class ControlServer {
  readonly paths: { state: string; socket: string }
  private readonly opts: ControlServerOptions
  private server: Server | null = null

  constructor(opts: ControlServerOptions) {
    this.opts = opts
    this.paths = demoPaths(opts.prefix)
  }

  /** Listen on the socket; throws when another demo runs on this prefix. */
  async listen(): Promise<void> {
    const other = this.published()
    if (other && other.pid !== process.pid && isAlive(other.pid)) {
      throw new Error(`a demo is already running with prefix ${this.opts.prefix} (pid ${other.pid}); stop it first or use another --prefix`)
    }
    rmSync(this.paths.socket, { force: true }) // a stale socket of a demo that was killed
    this.server = createServer((sock: Socket) => this.serve(sock))
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject)
      this.server!.listen(this.paths.socket, () => resolve())
    })
  }

  /** Write the state file (best effort). */
  publish(state: DemoState): void {
    try {
      writeFileSync(this.paths.state, JSON.stringify(state, null, 2))
    } catch {
      // best effort
    }
  }

  /** Stop listening; remove the socket and the state file. */
  close(): void {
    this.server?.close()
    rmSync(this.paths.socket, { force: true })
    rmSync(this.paths.state, { force: true })
  }

  private published(): DemoState | null {
    try {
      return JSON.parse(readFileSync(this.paths.state, 'utf8')) as DemoState
    } catch {
      return null
    }
  }

  private serve(sock: Socket): void {
    let buf = ''
    sock.on('error', () => {})
    sock.on('data', (d) => {
      buf += d.toString()
      const nl = buf.indexOf('\n')
      if (nl < 0) return
      let req: ControlRequest
      try {
        req = JSON.parse(buf.slice(0, nl)) as ControlRequest
      } catch {
        return void sock.end(`${JSON.stringify({ ok: false, message: 'not JSON' })}\n`)
      }
      this.opts
        .handle(req)
        .catch((err: unknown) => ({ ok: false, message: err instanceof Error ? err.message : String(err) }))
        .then((reply) => {
          if (reply.ok && req.cmd !== 'status') this.opts.err(`control: ${reply.message}`)
          sock.end(`${JSON.stringify(reply)}\n`)
        })
    })
  }
}
