import type { Context } from '../context.js'

/**
 * Progress for long scans, on stderr, only on a terminal and only once a scan has run for a second:
 * "scanning chats… 120,000 keys". Cleared when the next output comes.
 */
export function progress(ctx: Context, what: string): (seen: number) => void {
  const started = Date.now()
  const tty = process.stderr.isTTY && !ctx.json
  let shown = false
  return (seen: number) => {
    if (!tty || Date.now() - started < 1000) return
    shown = true
    process.stderr.write(`\r${ctx.c.dim(`scanning ${what}… ${seen.toLocaleString('en-US')} keys`)}\u001b[K`)
    if (shown) process.once('beforeExit', () => process.stderr.write('\r\u001b[K'))
  }
}
