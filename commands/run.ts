import type { Command } from 'commander'
import { openContext, type Context, type OpenOptions } from './context.js'
import { urlContext } from './target.js'
import { reportError } from './output/report.js'
import { EXIT } from './output/exit-codes.js'
import { fromFile, fromRefusal } from './snapshot/from.js'

/**
 * Wrap a command action: open the context (connection, reader, admin, colour), run, close, and turn
 * any error into one line on stderr plus a documented exit code. The action returns its exit code.
 */
export function run<Args extends unknown[]>(
  fn: (ctx: Context, ...args: Args) => Promise<number | void>,
  options: { connect?: boolean; /** connects by itself yet answers from a snapshot too (--from) */ replays?: boolean } & OpenOptions = {},
): (...raw: unknown[]) => Promise<void> {
  return async (...raw: unknown[]) => {
    const cmd = raw[raw.length - 1] as Command
    const args = raw.slice(0, -1) as Args
    let ctx: Context | null = null
    try {
      if (options.connect === false && !options.replays && fromFile(cmd) !== undefined) throw fromRefusal(`${cmd.name()}`)
      if (options.connect !== false) ctx = await openContext(cmd, options)
      const code = await fn(ctx as Context, ...args)
      process.exitCode = code ?? EXIT.ok
    } catch (err) {
      process.exitCode = reportError(cmd, ctx ? ctx.explain(err) : err, { ...urlContext(cmd), names: args })
    } finally {
      await ctx?.close()
    }
  }
}
