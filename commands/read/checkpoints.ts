import { Command } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import { checkpointRow, checkpointRows, type CheckpointRow, type FlowCheckpoint } from '../lib.js'
import { cell, printOne, type KindView } from '../output/format.js'
import { jsonText } from '../output/safe-text.js'
import { agoMs, dur, leftMs } from '../output/time.js'
import { progress } from '../output/progress.js'
import { notFound, usage } from '../output/errors.js'
import { deployedFingerprints, fingerprintOptions, type FingerprintFlags } from './fingerprints.js'
import { leftOut } from '../snapshot/from.js'
import { byNumber, byNumberDesc, byText, examples, limitOption, listingCommand, nowAndReplicas, printCorrupt } from './common.js'
import { drain, rowStream, type RowStream } from './listing-stream.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

interface CheckpointsLsOptions extends FingerprintFlags {
  ephemeral?: boolean
  persistent?: boolean
  flow?: string
  limit?: number
  mismatched?: boolean
}

/** Checkpoints, as the scan reads them (the live replicas and the clock first). */
export async function streamCheckpoints(ctx: Context, o: CheckpointsLsOptions): Promise<RowStream<CheckpointRow>> {
  const deployed = deployedFingerprints(o)
  if (o.mismatched && !deployed) throw usage('--mismatched needs the deployed fingerprints: --fingerprint flow=fp or --fingerprint-file')
  const { nowMs, replicas } = await nowAndReplicas(ctx)
  const listed = ctx.reader.listStream(
    { checkpoint: ctx.io.LISTING_DECODERS.checkpoint },
    { limit: o.limit, onProgress: progress(ctx, 'checkpoints') },
  )
  const rows = (items: Array<{ value: FlowCheckpoint }>) =>
    checkpointRows(
      items.map((i) => i.value),
      replicas.items,
      nowMs,
      { ...o, deployed: deployed ?? undefined },
    )
  return rowStream(nowMs, listed, rows, [replicas])
}

function checkpointsView(ctx: Context): KindView<CheckpointRow> {
  const { c } = ctx
  return {
    list: 'checkpoints',
    name: (r) => `checkpoint/${r.key}`,
    empty: `no checkpoints match under prefix ${ctx.keys.prefix}`,
    columns: [
      { header: 'KEY', value: (r) => c.bold(cell(r.key)) },
      { header: 'FLOW', value: (r) => cell(r.flow) },
      { header: 'STEP', value: (r) => cell(r.step) },
      { header: 'REVISION', value: (r) => r.revision },
      {
        header: 'OWNER',
        value: (r) => (r.replicaId === null ? '-' : r.ownerAlive ? cell(r.replicaId) : c.dim(`${cell(r.replicaId)} (gone)`)),
      },
      { header: 'FENCE', value: (r) => r.fence ?? '-' },
      { header: 'UPDATED', value: (r) => agoMs(r.updatedAgoMs) },
      {
        header: 'TYPE',
        value: (r) =>
          !r.ephemeral
            ? 'persistent'
            : r.fallback
              ? c.yellow(`ephemeral ${cell(r.fingerprint)} ≠ deployed ${cell(r.deployedFingerprint)}: ${r.fallback}`)
              : c.cyan(`ephemeral ${cell(r.fingerprint ?? '')}`.trim()),
      },
      { header: 'EXPIRES IN', value: (r) => leftMs(r.expiresInMs) },
      { header: 'ANSWER', value: (r) => (r.answerBytes ? `${r.answerBytes} B` : '-') },
    ],
  }
}

/**
 * The checkpoint block of `chat inspect` and `checkpoint inspect`, from a safe row; `state` holds the
 * state and saved answer as JSON text (made from the raw values: JSON escapes what it holds).
 */
export function formatCheckpoint(ctx: Context, r: CheckpointRow, state?: { state: string; answer: string | null }): void {
  const { c } = ctx
  const kv = (k: string, val: string | number) => ctx.out(`${c.dim(k.padEnd(16))}${val}`)
  kv('checkpoint', `${c.bold(r.flow)} at step ${c.bold(r.step)}, revision ${r.revision}`)
  kv(
    '  written by',
    r.replicaId ? `${r.replicaId} ${c.dim(r.incarnation ?? '')} ${r.ownerAlive ? c.green('alive') : c.dim('gone')}` : c.dim('(unknown)'),
  )
  kv('  owner fence', r.fence ?? c.dim('(unfenced write)'))
  kv('  updated', agoMs(r.updatedAgoMs))
  if (r.ephemeral) kv('  ephemeral', `ttl ${dur(r.ttlMs)}, expires in ${leftMs(r.expiresInMs)}, fingerprint ${r.fingerprint}`)
  else kv('  persistent', 'no TTL')
  kv('  saved answer', r.answerBytes ? `${r.answerBytes} bytes` : '(none)')
  if (r.dataBytes !== null) kv('  data', `${r.dataBytes} bytes ${c.dim('(not read here: checkpoint inspect shows it)')}`)
  if (state) {
    kv('  state', state.state)
    if (state.answer !== null) kv('  answer', state.answer)
  }
}

export function checkpointsLs(): Command {
  return listingCommand<CheckpointRow, CheckpointsLsOptions>({
    name: 'ls',
    description: 'conversation checkpoints, persistent and ephemeral: flow, step, revision, owner and its fence, TTL',
    examples: [
      'botmesh-coord --prefix shop checkpoints ls',
      'botmesh-coord --prefix shop checkpoints ls --ephemeral --flow order -o json',
      'botmesh-coord --prefix shop checkpoints ls --sort updated --replica pod-a',
      'botmesh-coord --prefix shop checkpoints ls --fingerprint order=3f9a1c --mismatched',
    ],
    view: checkpointsView,
    sorts: {
      key: byText((r) => r.key),
      flow: (a, b) => byText<CheckpointRow>((r) => r.flow)(a, b) || byText<CheckpointRow>((r) => r.step)(a, b),
      updated: byNumber((r) => r.updatedAgoMs),
      revision: byNumber((r) => r.revision),
      expires: byNumber((r) => r.expiresInMs),
      answer: byNumberDesc((r) => r.answerBytes),
    },
    replicasOf: (r) => [r.replicaId],
    options: (cmd) =>
      fingerprintOptions(cmd)
        .option('--ephemeral', 'only ephemeral (forward) checkpoints')
        .option('--persistent', 'only persistent checkpoints')
        .option('--flow <name>', 'only checkpoints of this flow')
        .option('--mismatched', 'only ephemeral checkpoints of another version of a deployed flow (with --fingerprint): not resumed')
        .addOption(limitOption())
        .addHelpText(
          'after',
          '\nWith the deployed fingerprints (--fingerprint flow=fp, --fingerprint-file), an ephemeral checkpoint of another\nversion of its flow shows "≠ deployed …: changed" (JSON: fallback "changed"): the runtime will not resume it.',
        ),
    collect: async (ctx, o) => drain(await streamCheckpoints(ctx, o)),
    stream: streamCheckpoints,
  })
}

export async function collectCheckpoint(ctx: Context, key: string) {
  // One checkpoint whole, its state and saved answer with it (a listing reads their length only).
  const [detail, replicas] = await Promise.all([ctx.reader.chat(key, { tickets: 1, checkpointData: true }), ctx.reader.liveReplicas()])
  if (!detail.checkpoint) throw notFound(`no checkpoint for "${key}" under prefix ${ctx.keys.prefix}`)
  const row = checkpointRow(detail.checkpoint, detail.nowMs, replicas.items, detail.checkpointTtlMs)
  // From a snapshot taken without --include-state: the state and answer are not in the file.
  const omitted = leftOut(ctx.reader.source, ctx.keys.chat(key).checkpoint)
  return {
    nowMs: detail.nowMs,
    checkpoint: { ...row, state: detail.checkpoint.state, answer: detail.checkpoint.answer },
    chatFence: detail.chat?.fence ?? null,
    ...(omitted ? { leftOutOfSnapshot: omitted.includes('d') ? ['state', 'answer'] : omitted } : {}),
    corrupt: replicas.corrupt,
  }
}

export function checkpointInspect(): Command {
  return new Command('inspect')
    .alias('show')
    .description('one checkpoint whole: flow, step, revision, owner and fence, TTL and fingerprint, its state and saved answer')
    .argument('<key>', 'the chat key the checkpoint belongs to (as the runtime passed it)', nameArg(NAME_KINDS.checkpoint, 'a checkpoint'))
    .addHelpText(
      'after',
      examples(
        'botmesh-coord --prefix shop checkpoint inspect chat:42',
        'botmesh-coord --prefix shop checkpoint inspect chat:42 --json | jq .checkpoint.state',
      ),
    )
    .action(
      run(async (ctx, key: string) => {
        const data = await collectCheckpoint(ctx, key)
        printOne(ctx, 'checkpoint', data, `checkpoint/${key}`, (safe) => {
          ctx.out(`${ctx.c.dim('chat'.padEnd(16))}${ctx.c.bold(safe.checkpoint.key)} ${ctx.c.dim(`(turn fence ${safe.chatFence ?? '-'})`)}`)
          const { state, answer } = data.checkpoint
          formatCheckpoint(
            ctx,
            safe.checkpoint,
            data.leftOutOfSnapshot
              ? { state: ctx.c.dim('(not in the snapshot: it was taken without --include-state)'), answer: null }
              : { state: jsonText(state), answer: answer === null ? null : jsonText(answer) },
          )
        })
        printCorrupt(ctx, data.corrupt)
      }),
    )
}
