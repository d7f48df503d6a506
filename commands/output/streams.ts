/**
 * The process's output streams: a closed stdout (`| head -1`) ends any command quietly, followers
 * included; warnings the Redis client prints on its own go through the tool's one-line output.
 */
import { spawn } from 'node:child_process'
import { fstatSync } from 'node:fs'

let guarded = false

/** Exit 0 at once and silently when stdout's reader went away (EPIPE), as `head` expects. */
export function quietOnClosedPipe(): void {
  if (guarded) return
  guarded = true
  const onError = (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') process.exit(0)
    throw err
  }
  process.stdout.on('error', onError)
  process.stderr.on('error', onError)
}

/**
 * Resolves once stdout has passed on what it was given, at once unless more than its high-water mark
 * waits (a pipe to a slower reader: `| jq`, `| less`): a streamed listing reads no further ahead of
 * its reader than that, where it would otherwise hold every row it had printed (a million chats: 2 GB).
 * A reader that goes away ends the process (quietOnClosedPipe) or closes the stream: either way this
 * does not wait on.
 */
export function stdoutDrained(): Promise<void> {
  const out = process.stdout
  if (!out.writableNeedDrain) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done)
      out.off('close', done)
      out.off('error', done)
      resolve()
    }
    out.on('drain', done)
    out.on('close', done)
    out.on('error', done)
  })
}

/**
 * Aborted when stdout is a pipe whose reader closed, even while nothing is written (a follower with
 * no new events). Node cannot poll a pipe's write end, so a watcher does: GNU `tail -f --pid`, which
 * exits by SIGPIPE the moment the reader of the pipe it shares with us goes away. Where no such
 * tail exists the signal never fires, and the closed pipe is noticed at the next write instead.
 */
export function stdoutClosedSignal(): AbortSignal {
  const ctl = new AbortController()
  let fifo = false
  try {
    fifo = fstatSync(1).isFIFO()
  } catch {
    // not a file descriptor we can inspect
  }
  if (!fifo) return ctl.signal
  try {
    const watcher = spawn('tail', ['-f', `--pid=${process.pid}`, '-s', '1', '/dev/null'], { stdio: ['ignore', 'inherit', 'ignore'] })
    watcher.on('error', () => {})
    watcher.on('exit', (_code, signal) => {
      if (signal === 'SIGPIPE') ctl.abort()
    })
    watcher.unref()
    const stop = () => watcher.kill()
    process.once('exit', stop)
    ctl.signal.addEventListener('abort', () => process.off('exit', stop), { once: true })
  } catch {
    // no tail: noticed at the next write
  }
  return ctl.signal
}

/**
 * The Redis client writes some warnings with console.warn (`[WARN] Redis server does not require a
 * password, but a password was supplied.`): print each once, as `botmesh-coord: warning: …`.
 */
export function routeLibraryWarnings(): void {
  const seen = new Set<string>()
  console.warn = (...args: unknown[]) => {
    const text = args
      .map(String)
      .join(' ')
      .replace(/^\[(WARN|ERROR)\]\s*/, '')
      .trim()
    if (!text || seen.has(text)) return
    seen.add(text)
    process.stderr.write(`botmesh-coord: warning: ${text}\n`)
  }
}
