import { Command, Option } from 'commander'
import type { Context } from '../context.js'
import { checkpointRows, shellWord, type CheckpointFilter } from '../lib.js'
import { conflict, notFound, usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { cell } from '../output/format.js'
import { progress } from '../output/progress.js'
import { ago, dur, leftMs } from '../output/time.js'
import { durationOption } from '../duration.js'
import { printCorrupt } from '../read/common.js'
import { bulkPlan } from './bulk.js'
import { changed, parseFence, withWriteOptions, writeAction, type Plan, type WriteFlags } from './common.js'
import { stripAudit } from './chat.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

interface CheckpointRmFlags extends WriteFlags {
  ifRevision?: string
  /** The older spelling of --if-revision. */
  revision?: string
  flow?: string
  ephemeral?: boolean
  fingerprintNot?: string
  /** ms */
  olderThan?: number
  ownerDead?: boolean
}

/** The bulk selection flags, as given (none: one checkpoint by key). */
function bulkFilter(f: CheckpointRmFlags): CheckpointFilter | null {
  const filter: CheckpointFilter = {
    ...(f.flow !== undefined ? { flow: f.flow } : {}),
    ...(f.ephemeral ? { ephemeral: true } : {}),
    ...(f.fingerprintNot !== undefined ? { fingerprintNot: f.fingerprintNot } : {}),
    ...(f.olderThan !== undefined ? { olderThanMs: f.olderThan } : {}),
    ...(f.ownerDead ? { ownerDead: true } : {}),
  }
  return Object.keys(filter).length ? filter : null
}

/** The command line of a bulk removal, as recorded. */
function bulkCommand(f: CheckpointRmFlags): string {
  return [
    'checkpoints rm',
    `--flow ${shellWord(f.flow!)}`,
    f.ephemeral ? '--ephemeral' : '',
    f.fingerprintNot !== undefined ? `--fingerprint-not ${shellWord(f.fingerprintNot)}` : '',
    f.olderThan !== undefined ? `--older-than ${dur(f.olderThan)}` : '',
    f.ownerDead ? '--owner-dead' : '',
  ]
    .filter(Boolean)
    .join(' ')
}

/** `checkpoints rm --flow …`: every checkpoint the filter selects, each removed by its own compare-and-set on the revision listed. */
export async function planCheckpointsRm(ctx: Context, flags: CheckpointRmFlags, filter: CheckpointFilter): Promise<Plan> {
  const [nowMs, replicas, cps] = await Promise.all([
    ctx.reader.now(),
    ctx.reader.liveReplicas(),
    ctx.reader.checkpoints({ onProgress: progress(ctx, 'checkpoints') }),
  ])
  printCorrupt(ctx, [...replicas.corrupt, ...cps.corrupt])
  const entries = checkpointRows(cps.items, replicas.items, nowMs, filter).map((r) => ({
    key: r.key,
    revision: r.revision,
    flow: r.flow,
    step: r.step,
    replicaId: r.replicaId,
    ownerAlive: r.ownerAlive,
    ephemeral: r.ephemeral,
    fingerprint: r.fingerprint,
    updatedAgoMs: r.updatedAgoMs,
    expiresInMs: r.expiresInMs,
  }))
  const selection = [
    `flow ${filter.flow}`,
    filter.ephemeral ? 'ephemeral' : '',
    filter.fingerprintNot !== undefined ? `fingerprint not ${filter.fingerprintNot}` : '',
    filter.olderThanMs !== undefined ? `written more than ${dur(filter.olderThanMs)} ago` : '',
    filter.ownerDead ? 'writer has no live heartbeat' : '',
  ]
    .filter(Boolean)
    .join(', ')
  const command = bulkCommand(flags)
  return bulkPlan(ctx, {
    action: 'checkpoints-rm',
    noun: 'checkpoints',
    selection,
    filter: { ...filter },
    entries,
    line: (e) =>
      `${cell(e.key)}  ${cell(e.step)}  rev ${e.revision}  by ${cell(e.replicaId)}${e.replicaId && !e.ownerAlive ? ' (gone)' : ''}  written ${dur(e.updatedAgoMs)} ago  ${e.ephemeral ? `ephemeral ${cell(e.fingerprint)}, expires in ${leftMs(e.expiresInMs)}` : 'persistent'}`,
    then: 'each is deleted if still at the revision listed (one compare-and-set each; one that changed is skipped and counted): its conversation starts over at the next message',
    warnings: entries.some((e) => e.ownerAlive)
      ? [
          `${entries.filter((e) => e.ownerAlive).length} of them were written by a live replica: a conversation it still runs ends as a lost turn at its next checkpoint write`,
        ]
      : [],
    command,
    run: (o) => ctx.admin.removeCheckpoints(entries, { ...o, reason: flags.reason }),
  })
}

export async function planCheckpointRm(
  ctx: Context,
  key: string,
  flags: { ifRevision?: string; revision?: string; reason?: string },
): Promise<Plan> {
  const wanted = parseFence(flags.ifRevision ?? flags.revision, flags.ifRevision !== undefined ? '--if-revision' : '--revision')
  const { chat, checkpoint: cp, checkpointTtlMs, nowMs } = await ctx.reader.chat(key)
  if (!cp) throw notFound(`${key} has no checkpoint: nothing to remove`)
  if (wanted !== null && cp.revision !== wanted) {
    throw conflict(
      `the state changed since you looked: the checkpoint of ${key} is at revision ${cp.revision}, not ${wanted}; nothing done`,
    )
  }
  const { c } = ctx
  const lines = [
    `checkpoint ${c.bold(`${cp.flow}/${cp.step}`)} revision ${cp.revision}, written ${ago(cp.updatedAt, nowMs)}${cp.owner ? ` by ${cp.owner.replicaId} (fence ${cp.owner.fence ?? '-'})` : ''}`,
    cp.ephemeral
      ? `ephemeral  expires in ${checkpointTtlMs === null ? '?' : `${Math.round(checkpointTtlMs / 1000)}s`} anyway (fingerprint ${cp.ephemeral.fingerprint.slice(0, 12)})`
      : 'persistent: stays until removed',
    `then       deleted if still at revision ${cp.revision}: the conversation starts over for the next message`,
  ]
  const warnings: string[] = []
  if (chat?.holder) {
    warnings.push(
      `${key} is held by ${chat.holder.replicaId} (fence ${chat.fence}): its next checkpoint write is refused (revision conflict) and that conversation ends as a lost turn`,
    )
  }
  return {
    title: `remove the checkpoint of ${key}`,
    command: `checkpoint rm ${key} --if-revision ${cp.revision}`,
    inspect: `checkpoint inspect ${shellWord(key)}`,
    lines,
    warnings,
    json: { action: 'checkpoint-rm', key, expected: { revision: cp.revision }, flow: cp.flow, step: cp.step },
    execute: async () => {
      const r = await ctx.admin.removeCheckpoint(key, cp.revision, {
        reason: flags.reason,
        command: `checkpoint rm ${key} --if-revision ${cp.revision}`,
      })
      const json = { action: 'checkpoint-rm', ...stripAudit(r) }
      if (r.status === 'removed')
        return {
          code: EXIT.ok,
          audit: r.audit,
          json,
          lines: [`removed the checkpoint of ${key} (${r.flow}/${r.step}, revision ${r.revision})`],
        }
      if (r.status === 'absent') return changed(`${key} has no checkpoint any more`, json, r.audit)
      return changed(
        `the checkpoint of ${key} is at revision ${r.revision} now (${r.flow}/${r.step} by ${r.owner ?? '?'}), not ${cp.revision}`,
        json,
        r.audit,
      )
    },
  }
}

export function checkpointRm(): Command {
  return withWriteOptions(
    new Command('rm')
      .alias('remove')
      .description(
        'delete a checkpoint, compare-and-set on its revision (default: the revision shown); with --flow, every checkpoint the filters select',
      )
      .argument('[key]', 'the chat key of the checkpoint', nameArg(NAME_KINDS.checkpoint, 'a checkpoint'))
      .addOption(new Option('--if-revision <rev>', 'only if the checkpoint is still at this revision'))
      .addOption(new Option('--revision <rev>', 'same as --if-revision').hideHelp())
      .addOption(new Option('--flow <name>', 'bulk: the checkpoints of this flow (required for a bulk removal)'))
      .addOption(new Option('--ephemeral', 'bulk: only ephemeral (forward) checkpoints'))
      .addOption(new Option('--fingerprint-not <fp>', 'bulk: only ephemeral checkpoints written by another flow version than <fp>'))
      .addOption(durationOption('--older-than <duration>', 'bulk: only those last written longer ago than this', { min: 1 }))
      .addOption(new Option('--owner-dead', 'bulk: only those whose writer has no live heartbeat')),
  )
    .addHelpText(
      'after',
      [
        '\nExamples:',
        '  botmesh-coord --prefix shop checkpoint rm chat:42 --if-revision 1767225600000456 --reason "flow changed" --yes',
        '  botmesh-coord --prefix shop checkpoints rm --flow order --ephemeral --fingerprint-not f1a2b3 --dry-run',
        '  botmesh-coord --prefix shop checkpoints rm --flow order --older-than 1h --owner-dead --reason "deploy 42 cleanup"',
      ].join('\n'),
    )
    .action(
      writeAction(
        'checkpoint rm',
        (ctx, flags, key: string | undefined) => {
          const f = flags as CheckpointRmFlags
          const filter = bulkFilter(f)
          return key === undefined ? planCheckpointsRm(ctx, f, filter!) : planCheckpointRm(ctx, key, f)
        },
        (flags, key: string | undefined) => {
          const f = flags as CheckpointRmFlags
          const filter = bulkFilter(f)
          if (key !== undefined && filter) throw usage('checkpoint rm: give a chat key or bulk filters (--flow …), not both')
          if (key === undefined && !filter) throw usage('checkpoint rm: give a chat key, or --flow <name> (and filters) for a bulk removal')
          if (key === undefined && f.flow === undefined) throw usage('checkpoints rm: a bulk removal needs --flow <name>')
          if (key === undefined && (f.revision ?? f.ifRevision) !== undefined)
            throw usage('checkpoints rm: --if-revision goes with a chat key')
        },
      ),
    )
}
