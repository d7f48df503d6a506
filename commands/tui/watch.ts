import { Command, Option } from 'commander'
import { run } from '../run.js'
import { openContext } from '../context.js'
import { loadIo, loadWriteSide } from '../lib.js'
import { MIN_INTERVAL_MS, durationOption, interruptSignal } from '../duration.js'
import { jsonOut } from '../output/format.js'
import { usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { stdoutClosedSignal } from '../output/streams.js'
import { runJsonl, snapshotRecord } from './jsonl.js'
import { openSource } from './source.js'
import { RecordingWriter, readRecording, replaySource, skippedLines, snapshotAsRecording } from './recording.js'
import { fromFile, loadSnapshot } from '../snapshot/from.js'

interface WatchFlags {
  /** ms */
  interval: number
  record?: string
  replay?: string
  includeState?: boolean
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
    .addOption(
      durationOption('--interval <duration>', 'refresh period (e.g. 500ms, 2s)', { min: MIN_INTERVAL_MS, default: '1s', timer: true }),
    )
    .addOption(new Option('--jsonl', 'no screen: one JSON snapshot per refresh on stdout (the dashboard data plus header fields)'))
    .addOption(new Option('--count <n>', 'with --jsonl: stop after n snapshots'))
    .addOption(new Option('--top <n>', 'chats read per refresh at most (the stuck and busiest first)').default('30'))
    .addOption(new Option('--record <file>', "append every refresh's raw reads to a recording (JSON lines, mode 0600) for --replay"))
    .addOption(new Option('--include-state', 'with --record: keep conversation state and marker data too (left out by default)'))
    .addOption(new Option('--replay <file>', 'play a recording (watch --record) instead of reading Redis: the incident as it unfolded'))
    .addHelpText(
      'after',
      `
Keys: tab/←→ panels, ↑↓ rows, / filter, ⏎ chat detail, y yield provider, r release chat,
s skip ticket (in a chat), p pause, ? help, q quit. y / r / s ask first and carry --if-fence.
Replaying (--replay, or --from <snapshot>): space or p pause/play, . and , one refresh forward/back,
+ and - speed ×2 / ÷2, ] and [ jump 10 s, g jump to a time (HH:MM:SS UTC, Enter).

Examples:
  botmesh-coord --prefix shop watch
  botmesh-coord --prefix shop --read-only watch --interval 2s
  botmesh-coord --prefix shop watch --jsonl --count 10 | jq .commands
  botmesh-coord --prefix shop watch --record incident.jsonl
  botmesh-coord watch --replay incident.jsonl`,
    )
  return cmd.action(
    run(
      async (_none, flags: WatchFlags) => {
        const intervalMs = flags.interval
        const count = positiveInt(flags.count, '--count')
        const top = positiveInt(flags.top, '--top')
        const g = cmd.optsWithGlobals() as { json?: boolean; readOnly?: boolean; color?: boolean; tlsCa?: string; timeout: number }
        const screen = !flags.jsonl && !g.json
        if (screen && !(process.stdout.isTTY && process.stdin.isTTY)) throw usage(NOT_A_TERMINAL)
        if (count !== undefined && !flags.jsonl) throw usage('--count goes with --jsonl')
        const from = fromFile(cmd)
        if (flags.replay !== undefined || from !== undefined) {
          if (flags.record !== undefined) throw usage('--record reads a live Redis; it does not go with --replay or --from')
          const file = flags.replay ?? from!
          const recording =
            flags.replay !== undefined ? readRecording(flags.replay) : snapshotAsRecording((await loadSnapshot(from!)).snapshot)
          const io = await loadIo()
          if (screen) {
            const { runDashboard, colourEnabled } = await import('./dashboard.js')
            const t = recording.header.target
            await runDashboard({
              url: t.url,
              prefix: t.prefix,
              layout: t.layout,
              interval: intervalMs,
              readOnly: true,
              color: colourEnabled(g.color),
              replay: { file, recording },
            })
            for (const l of skippedLines(file, recording.refreshes)) process.stderr.write(`botmesh-coord: ${l}\n`)
            return EXIT.ok
          }
          // --jsonl / --json: each recorded refresh as the dashboard's JSON, in order, at once.
          const source = replaySource(io, file, recording, { topChats: top })
          const n = g.json && !flags.jsonl ? 1 : recording.refreshes.length
          for (let i = 0, seq = 0; i < n && (count === undefined || seq < count); i++) {
            source.player.index = i
            source.player.playing = false
            const snap = await source.read()
            // A line that does not parse was passed over: go on after the refresh shown (never show one twice).
            if (source.player.index < i) break
            i = source.player.index
            seq++
            const rec = snapshotRecord(source, snap, { seq, intervalMs, commandsPerSec: null })
            process.stdout.write(g.json && !flags.jsonl ? `${jsonOut('dashboard', rec)}\n` : `${JSON.stringify(rec)}\n`)
          }
          for (const l of skippedLines(file, recording.refreshes)) process.stderr.write(`botmesh-coord: ${l}\n`)
          return EXIT.ok
        }
        if (flags.includeState && flags.record === undefined) throw usage('--include-state goes with --record')
        // Like every command: one line and an exit code when Redis is unreachable at the start;
        // the layout is detected here. The dashboard then runs on its own reconnecting client.
        const ctx = await openContext(cmd)
        let record: RecordingWriter | undefined
        try {
          record =
            flags.record !== undefined
              ? new RecordingWriter(flags.record, {
                  target: { url: ctx.url, prefix: ctx.keys.prefix, layout: ctx.keys.layout },
                  includeState: flags.includeState === true,
                })
              : undefined
        } catch (err) {
          await ctx.close()
          throw err
        }
        const base = {
          io: ctx.io,
          write: await loadWriteSide(),
          url: ctx.url,
          prefix: ctx.keys.prefix,
          layout: ctx.keys.layout,
          tlsCa: g.tlsCa,
          sentinelAuth: ctx.target.sentinelAuth,
          timeoutMs: g.timeout,
          record,
          includeState: flags.includeState === true,
        }
        await ctx.close()
        if (screen) {
          // ink, react and yoga load only here (and in the demo).
          const { runDashboard, colourEnabled } = await import('./dashboard.js')
          await runDashboard({
            ...base,
            interval: intervalMs,
            readOnly: Boolean(g.readOnly),
            color: colourEnabled(g.color),
            record,
            includeState: base.includeState,
          })
          return EXIT.ok
        }
        const source = openSource({ ...base, topChats: top })
        try {
          if (g.json && !flags.jsonl) {
            const snap = await source.read()
            process.stdout.write(`${jsonOut('dashboard', snapshotRecord(source, snap, { seq: 1, intervalMs, commandsPerSec: null }))}\n`)
            return EXIT.ok
          }
          await runJsonl(source, { intervalMs, count, signals: [interruptSignal(), stdoutClosedSignal()] })
          return EXIT.ok
        } finally {
          await source.close()
        }
      },
      { connect: false, replays: true },
    ),
  )
}
