import { Command } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import { checkpointRow, checkpointRows, type CheckpointRow, type Json } from '../lib.js'
import { jsonOut } from '../output/json.js'
import { table } from '../output/table.js'
import { agoMs, dur, leftMs } from '../output/time.js'
import { progress } from '../output/progress.js'
import { notFound } from '../output/errors.js'
import { examples, limitOption, nowAndReplicas, printCorrupt, printScanNotes, scanInfo } from './common.js'

interface CheckpointsLsOptions {
  ephemeral?: boolean
  persistent?: boolean
  flow?: string
  limit?: number
}

export async function collectCheckpoints(ctx: Context, o: CheckpointsLsOptions) {
  const [{ nowMs, replicas }, cps] = await Promise.all([
    nowAndReplicas(ctx),
    ctx.reader.checkpoints({ limit: o.limit, onProgress: progress(ctx, 'checkpoints') }),
  ])
  const checkpoints = checkpointRows(cps.items, replicas.items, nowMs, o)
  return { nowMs, checkpoints, ...scanInfo(replicas, cps) }
}

export function printCheckpoints(ctx: Context, data: Awaited<ReturnType<typeof collectCheckpoints>>): void {
  const { c } = ctx
  if (data.checkpoints.length === 0) ctx.out(c.dim(`no checkpoints match under prefix ${ctx.keys.prefix}`))
  else
    ctx.out(
      table(
        ['KEY', 'FLOW', 'STEP', 'REVISION', 'OWNER', 'FENCE', 'UPDATED', 'TYPE', 'EXPIRES IN', 'ANSWER'].map((h) => c.dim(h)),
        data.checkpoints.map((r: CheckpointRow) => [
          c.bold(r.key),
          r.flow,
          r.step,
          r.revision,
          r.replicaId === null ? '-' : r.ownerAlive ? r.replicaId : c.dim(`${r.replicaId} (gone)`),
          r.fence ?? '-',
          agoMs(r.updatedAgoMs),
          r.ephemeral ? c.cyan(`ephemeral ${r.fingerprint ?? ''}`.trim()) : 'persistent',
          leftMs(r.expiresInMs),
          r.answerBytes ? `${r.answerBytes} B` : '-',
        ]),
      ),
    )
  printScanNotes(ctx, data)
}

/** The checkpoint block of `chat inspect` and `checkpoint inspect`. */
export function formatCheckpoint(ctx: Context, r: CheckpointRow, state?: { state: Json; answer: Json | null }): void {
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
  if (state) {
    kv('  state', JSON.stringify(state.state))
    if (state.answer !== null) kv('  answer', JSON.stringify(state.answer))
  }
}

export function checkpointsLs(): Command {
  return new Command('ls')
    .alias('list')
    .description('conversation checkpoints, persistent and ephemeral: flow, step, revision, owner and its fence, TTL')
    .option('--ephemeral', 'only ephemeral (forward) checkpoints')
    .option('--persistent', 'only persistent checkpoints')
    .option('--flow <name>', 'only checkpoints of this flow')
    .addOption(limitOption())
    .addHelpText(
      'after',
      examples('botmesh-coord --prefix shop checkpoints ls', 'botmesh-coord --prefix shop checkpoints ls --ephemeral --flow order --json'),
    )
    .action(
      run(async (ctx, o: CheckpointsLsOptions) => {
        const data = await collectCheckpoints(ctx, o)
        if (ctx.json) ctx.out(jsonOut('checkpoints', data))
        else printCheckpoints(ctx, data)
      }),
    )
}

export async function collectCheckpoint(ctx: Context, key: string) {
  const [detail, replicas] = await Promise.all([ctx.reader.chat(key), ctx.reader.liveReplicas()])
  if (!detail.checkpoint) throw notFound(`no checkpoint for ${JSON.stringify(key)} under prefix ${ctx.keys.prefix}`)
  const row = checkpointRow(detail.checkpoint, detail.nowMs, replicas.items, detail.checkpointTtlMs)
  return {
    nowMs: detail.nowMs,
    checkpoint: { ...row, state: detail.checkpoint.state, answer: detail.checkpoint.answer },
    chatFence: detail.chat?.fence ?? null,
    corrupt: replicas.corrupt,
  }
}

export function checkpointInspect(): Command {
  return new Command('inspect')
    .alias('show')
    .description('one checkpoint whole: flow, step, revision, owner and fence, TTL and fingerprint, its state and saved answer')
    .argument('<key>', 'the chat key the checkpoint belongs to (as the runtime passed it)')
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
        if (ctx.json) ctx.out(jsonOut('checkpoint', data))
        else {
          ctx.out(`${ctx.c.dim('chat'.padEnd(16))}${ctx.c.bold(key)} ${ctx.c.dim(`(turn fence ${data.chatFence ?? '-'})`)}`)
          formatCheckpoint(ctx, data.checkpoint, data.checkpoint)
        }
        printCorrupt(ctx, data.corrupt)
      }),
    )
}
