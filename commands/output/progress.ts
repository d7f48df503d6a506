import type { Context } from '../context.js'
import { rawWrite } from './safe-text.js'

/**
 * Progress for long scans, on stderr, only on a terminal and only once a scan has run for a second:
 * "scanning chats… 120,000 keys". Cleared when the next output comes.
 */
export function progress(ctx: Context, what: string): (seen: number) => void {
  const started = Date.now()
  const tty = process.stderr.isTTY && !ctx.json
  return (seen: number) => {
    if (!tty || stopped || Date.now() - started < 1000) return
    if (!shown) process.once('beforeExit', clear)
    shown = true
    rawWrite('stderr', `\r${ctx.c.dim(`scanning ${what}… ${seen.toLocaleString('en-US')} keys`)}\u001b[K`)
  }
}

let shown = false
let stopped = false
const clear = () => {
  if (shown) rawWrite('stderr', '\r\u001b[K')
  shown = false
}

/** No more scan progress: rows are being printed to the same terminal (a listing that streams). */
export function stopProgress(): void {
  clear()
  stopped = true
}

/**
 * Progress of a bulk intervention, on stderr, only on a terminal: "removing checkpoints… 400/2000".
 * Cleared when done.
 */
export function countProgress(ctx: Context, what: string): { update(done: number, total: number): void; done(): void } {
  const tty = process.stderr.isTTY && !ctx.json
  let shown = false
  return {
    update(done, total) {
      if (!tty) return
      shown = true
      rawWrite('stderr', `\r${ctx.c.dim(`${what}… ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`)}\u001b[K`)
    },
    done() {
      if (shown) rawWrite('stderr', '\r\u001b[K')
    },
  }
}
