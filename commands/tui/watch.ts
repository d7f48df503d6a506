import { Command, Option } from 'commander'
import { run } from '../run.js'
import { closeContext, openContext } from '../context.js'
import { parseDuration } from '../lib.js'
import { jsonOut } from '../output/json.js'
import { usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { colourEnabled, runDashboard, DEFAULT_INTERVAL_MS } from './dashboard.js'
import { runJsonl, snapshotRecord } from './jsonl.js'
import { openSource } from './source.js'

interface WatchFlags {
  interval?: string
  jsonl?: boolean
  count?: string
  top?: string
}

export const NOT_A_TERMINAL =
  'watch needs a terminal: use --json for one snapshot, or `watch --jsonl` for one JSON snapshot per refresh (pipes, scripts)'

function positiveInt(v: string | undefined, what: string): number | undefined {
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n <= 0) throw usage(`${what} must be a positive integer, not ${v}`)
  return n
}

/** `watch`: the live dashboard (ink), or its data as JSON lines. */
export function watchCommand(): Command {
  const cmd: Command = new Command('watch')
    .description('the live dashboard: replicas, providers, stuck and busy chats, expiring leases, events; act with y / r / s')
    .addOption(new Option('--interval <duration>', 'refresh period (e.g. 500ms, 2s)').default('1s'))
    .addOption(new Option('--jsonl', 'no screen: one JSON snapshot per refresh on stdout (the dashboard data plus header fields)'))
    .addOption(new Option('--count <n>', 'with --jsonl: stop after n snapshots'))
    .addOption(new Option('--top <n>', 'chats read per refresh at most (the stuck and busiest first)').default('30'))
    .addHelpText(
      'after',
      `
Keys: tab/←→ panels, ↑↓ rows, / filter, ⏎ chat detail, y yield provider, r release chat,
s skip ticket (in a chat), p pause, ? help, q quit. y / r / s ask first and carry --if-fence.

Examples:
  botmesh-coord --prefix shop watch
  botmesh-coord --prefix shop --read-only watch --interval 2s
  botmesh-coord --prefix shop watch --jsonl --count 10 | jq .commands`,
    )
  return cmd.action(
    run(
      async (_none, flags: WatchFlags) => {
        const intervalMs = flags.interval ? parseDuration(flags.interval, '--interval') : DEFAULT_INTERVAL_MS
        if (intervalMs < 100) throw usage('--interval must be at least 100ms')
        const count = positiveInt(flags.count, '--count')
        const top = positiveInt(flags.top, '--top')
        const g = cmd.optsWithGlobals() as { json?: boolean; readOnly?: boolean; color?: boolean; tlsCa?: string; timeout?: string }
        const screen = !flags.jsonl && !g.json
        if (screen && !(process.stdout.isTTY && process.stdin.isTTY)) throw usage(NOT_A_TERMINAL)
        if (count !== undefined && !flags.jsonl) throw usage('--count goes with --jsonl')
        // Like every command: one line and an exit code when Redis is unreachable at the start;
        // the layout is detected here. The dashboard then runs on its own reconnecting client.
        const ctx = await openContext(cmd)
        const base = {
          url: ctx.url,
          prefix: ctx.keys.prefix,
          layout: ctx.keys.layout,
          tlsCa: g.tlsCa,
          timeoutMs: g.timeout ? Number(g.timeout) : undefined,
        }
        await closeContext(ctx)
        if (screen) {
          await runDashboard({ ...base, interval: intervalMs, readOnly: Boolean(g.readOnly), color: colourEnabled(g.color) })
          return EXIT.ok
        }
        const source = openSource({ ...base, topChats: top })
        try {
          if (g.json && !flags.jsonl) {
            const snap = await source.read()
            process.stdout.write(`${jsonOut('dashboard', snapshotRecord(source, snap, { seq: 1, intervalMs, commandsPerSec: null }))}\n`)
            return EXIT.ok
          }
          const abort = new AbortController()
          const stop = () => abort.abort()
          process.once('SIGINT', stop)
          process.once('SIGTERM', stop)
          try {
            await runJsonl(source, { intervalMs, count, signal: abort.signal })
          } finally {
            process.off('SIGINT', stop)
            process.off('SIGTERM', stop)
          }
          return EXIT.ok
        } finally {
          await source.close()
        }
      },
      { connect: false },
    ),
  )
}
