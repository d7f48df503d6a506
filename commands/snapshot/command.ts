/**
 * `snapshot -o <file>`: the coordination state under the prefix, captured to a file in one bounded
 * pass, for a postmortem (`--from <file>` replays every read command on it). Mode 0600, written
 * whole or not at all (a temporary file renamed); gzipped when the name ends in .gz.
 */
import { statSync } from 'node:fs'
import { Command, InvalidArgumentError, Option } from 'commander'
import { run } from '../run.js'
import { maskUrl } from '../lib.js'
import { usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { checkReplaceable } from '../output/files.js'
import { jsonOut, outputIsFile } from '../output/format.js'
import { progress } from '../output/progress.js'
import { dur } from '../output/time.js'
import { examples } from '../read/common.js'
import { snapshotDiffCommand } from './diff.js'
import { SnapshotFileWriter } from './writer.js'
import type { Snapshot } from '../lib-io.js'

interface SnapshotFlags {
  force?: boolean
  maxKeys?: number
  includeState?: boolean
  events: number
}

const positive = (max: number) => (v: string) => {
  const n = Number(v)
  if (!Number.isInteger(n) || n <= 0 || n > max) throw new InvalidArgumentError(`a whole number from 1 to ${max} is expected`)
  return n
}

const size = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`)

export function snapshotCommand(): Command {
  const cmd: Command = new Command('snapshot')
    .description(
      'capture the coordination state to a file (-o <file>, gzipped when it ends in .gz; mode 0600) for a postmortem; --from <file> then answers every read command from it',
    )
    .addOption(new Option('--max-keys <n>', 'stop after this many keys: the snapshot says it is partial').argParser(positive(100_000_000)))
    .option('--force', 'replace what is at the -o path even when it is not a regular file (a symlink, a FIFO, a device)')
    .option('--include-state', 'also keep conversation state, saved answers and handover marker data (left out by default)')
    .addOption(new Option('--events <n>', 'most recent events kept').argParser(positive(100_000)).default(1000))
    .addHelpText(
      'after',
      `${examples(
        'botmesh-coord --prefix shop snapshot -o incident.json.gz',
        'botmesh-coord --from incident.json.gz chat inspect chat:42 --explain',
        'botmesh-coord --from incident.json.gz doctor',
        'botmesh-coord snapshot diff before.json.gz after.json.gz',
      )}

The capture is one pass: SCAN on every master, one pipeline per batch. It is not atomic across keys:
each record keeps the Redis time it was read at, and the file the time span of the capture.`,
    )
  outputIsFile(cmd)
  cmd.addCommand(snapshotDiffCommand())
  return cmd.action(
    run(async (ctx, flags: SnapshotFlags) => {
      if (ctx.from) throw usage('snapshot reads a live Redis: drop --from')
      const path = (cmd.optsWithGlobals() as { output?: string }).output
      if (!path) throw usage('snapshot needs -o <file> (e.g. -o incident.json.gz)')
      checkReplaceable(path, '-o', flags.force === true)
      const started = performance.now()
      const file = new SnapshotFileWriter(path, path.endsWith('.gz'))
      let capture: Snapshot['capture']
      try {
        capture = await ctx.io.captureTo(
          new ctx.io.RedisSource(ctx.redis),
          ctx.keys,
          {
            url: maskUrl(ctx.url),
            maxKeys: flags.maxKeys,
            includeState: flags.includeState === true,
            events: flags.events,
            onProgress: progress(ctx, 'keys for the snapshot'),
          },
          file,
        )
      } catch (err) {
        file.discard()
        throw err
      }
      const took = Math.round(performance.now() - started)
      const summary = {
        file: path,
        bytes: statSync(path).size,
        keys: capture.keys,
        records: capture.records,
        startedAtMs: capture.startedAtMs,
        spanMs: capture.finishedAtMs - capture.startedAtMs,
        tookMs: took,
        includeState: capture.includeState,
        partial: capture.partial,
      }
      if (ctx.json) ctx.out(jsonOut('snapshot', summary))
      else
        ctx.out(
          `snapshot of prefix ${ctx.keys.prefix}: ${summary.keys.toLocaleString('en-US')} keys, ${summary.records.toLocaleString('en-US')} records, ` +
            `read over ${dur(summary.spanMs)} (Redis time) → ${path} (${size(summary.bytes)}, mode 0600${summary.includeState ? ', with conversation state' : ''})`,
        )
      if (capture.partial) ctx.err(ctx.c.yellow(`partial snapshot: ${capture.partial}; replayed commands will say so`))
      const readable = ctx.io.snapshotReadLimit()
      if (file.jsonBytes > readable)
        ctx.err(
          ctx.c.yellow(
            `this snapshot is ${size(file.jsonBytes)} of JSON: past the ${size(readable)} --from reads here (${ctx.io.snapshotLimitReason(readable)}); keep it for the record, or take one with --max-keys to replay`,
          ),
        )
      return EXIT.ok
    }),
  )
}
