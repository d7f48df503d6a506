/**
 * `snapshot diff a b`: what changed between two snapshots — holders, fences, tickets, leaders,
 * checkpoints' revisions, replicas started or restarted — read from each file through the reader
 * the read commands use, as a table or JSON.
 */
import { Command } from 'commander'
import { run } from '../run.js'
import { printerOf } from '../context.js'
import { KeyLayout, type Change, type DecodedState, type Io, type Snapshot } from '../lib.js'
import { usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { cell, printList, type KindView } from '../output/format.js'
import { dur } from '../output/time.js'
import { examples } from '../read/common.js'
import { loadSnapshot } from './from.js'

/** A snapshot's state, decoded by the reader the read commands use. */
async function decoded(io: Io, s: Snapshot): Promise<DecodedState> {
  const reader = new io.StateReader(new io.RecordedSource(s.records), new KeyLayout(s.target.prefix, s.target.layout))
  const d = io.LISTING_DECODERS
  const [lists, replicas, checkpoints, handovers] = await Promise.all([
    reader.listMany({ chat: d.chat, lead: d.lead, lock: d.lock }),
    reader.replicas(),
    reader.checkpoints(),
    reader.handovers(),
  ])
  return {
    replicas: replicas.items.filter((r) => r.expiresAtMs > s.capture.startedAtMs),
    chats: lists.chat.items,
    leads: lists.lead.items,
    locks: lists.lock.items,
    checkpoints: checkpoints.items,
    handovers: handovers.items,
  }
}

function diffView(): KindView<Change> {
  return {
    list: 'changes',
    name: (r) => `${r.kind}/${r.key}`,
    empty: 'no changes between the two snapshots',
    columns: [
      { header: 'KIND', value: (r) => r.kind },
      { header: 'KEY', value: (r, c) => c.bold(cell(r.key)) },
      { header: 'CHANGE', value: (r) => r.change },
      { header: 'BEFORE', value: (r) => cell(r.before) },
      { header: 'AFTER', value: (r) => cell(r.after) },
    ],
  }
}

export function snapshotDiffCommand(): Command {
  const cmd: Command = new Command('diff')
    .description('what changed between two snapshots: holders, fences, tickets, leaders, checkpoints’ revisions, replicas')
    .argument('<before>', 'the earlier snapshot file')
    .argument('<after>', 'the later snapshot file')
    .addHelpText(
      'after',
      examples(
        'botmesh-coord snapshot diff before.json.gz after.json.gz',
        'botmesh-coord snapshot diff before.json.gz after.json.gz -o json',
      ),
    )
  return cmd.action(
    run(
      async (_none, a: string, b: string) => {
        const ctx = printerOf(cmd)
        const [x, y] = await Promise.all([loadSnapshot(a, 'snapshot diff'), loadSnapshot(b, 'snapshot diff')])
        if (x.snapshot.target.prefix !== y.snapshot.target.prefix)
          throw usage(`snapshot diff: ${a} holds prefix ${x.snapshot.target.prefix}, ${b} holds ${y.snapshot.target.prefix}`)
        const changes = x.io.diffStates(await decoded(x.io, x.snapshot), await decoded(y.io, y.snapshot))
        const side = (file: string, s: Snapshot) => ({ file, takenAtMs: s.capture.startedAtMs, partial: s.capture.partial })
        const later = y.snapshot.capture.startedAtMs - x.snapshot.capture.startedAtMs
        ctx.err(
          ctx.c.dim(
            `from ${a} (taken ${new Date(x.snapshot.capture.startedAtMs).toISOString()}) to ${b} (${later >= 0 ? `${dur(later)} later` : `${dur(-later)} earlier`})`,
          ),
        )
        for (const [f, s] of [
          [a, x.snapshot],
          [b, y.snapshot],
        ] as const)
          if (s.capture.partial)
            ctx.err(ctx.c.yellow(`${f} is partial (${s.capture.partial}): keys it did not read show as added or removed`))
        printList(ctx, diffView(), changes, { from: side(a, x.snapshot), to: side(b, y.snapshot) })
        return EXIT.ok
      },
      { connect: false },
    ),
  )
}
