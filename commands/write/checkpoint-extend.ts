import { Command, Option } from 'commander'
import type { Context } from '../context.js'
import { checkpointRow, shellWord } from '../lib.js'
import { conflict, notFound, refused } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { cell } from '../output/format.js'
import { dur, leftMs } from '../output/time.js'
import { durationOption } from '../duration.js'
import { examples } from '../read/common.js'
import { changed, parseFence, withWriteOptions, writeAction, type Plan, type WriteFlags } from './common.js'
import { stripAudit } from './chat.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

interface ExtendFlags extends WriteFlags {
  /** ms */
  ttl: number
  ifRevision?: string
}

export async function planCheckpointExtend(ctx: Context, key: string, flags: ExtendFlags): Promise<Plan> {
  const wanted = parseFence(flags.ifRevision, '--if-revision')
  const [detail, replicas] = await Promise.all([ctx.reader.chat(key), ctx.reader.liveReplicas()])
  const cp = detail.checkpoint
  if (!cp) throw notFound(`${key} has no checkpoint: nothing to extend`)
  if (wanted !== null && cp.revision !== wanted) {
    throw conflict(
      `the state changed since you looked: the checkpoint of ${key} is at revision ${cp.revision}, not ${wanted}; nothing done`,
    )
  }
  if (!cp.ephemeral) throw refused(`the checkpoint of ${key} is persistent: it has no TTL to extend (it stays until removed); nothing done`)
  const row = checkpointRow(cp, detail.nowMs, replicas.items, detail.checkpointTtlMs)
  const ttl = flags.ttl
  const { c } = ctx
  const command = `checkpoint extend ${shellWord(key)} --ttl ${dur(ttl)} --if-revision ${cp.revision}`
  const lines = [
    `checkpoint ${c.bold(`${cell(cp.flow)}/${cell(cp.step)}`)} revision ${cp.revision}, written ${dur(row.updatedAgoMs)} ago${row.replicaId ? ` by ${cell(row.replicaId)} (${row.ownerAlive ? c.green('alive') : c.red('gone')})` : ''}`,
    `expires  in ${leftMs(row.expiresInMs)} now → in ${dur(ttl)} (from Redis's now; never shortened)`,
    `then     the revision stays: the conversation goes on as before, and its next write sets the flow's own TTL (${dur(row.ttlMs)}) again`,
  ]
  return {
    title: `extend the checkpoint of ${key}`,
    command,
    inspect: `checkpoint inspect ${shellWord(key)}`,
    lines,
    json: { action: 'checkpoint-extend', key, expected: { revision: cp.revision }, ttlMs: ttl, expiresInMs: row.expiresInMs },
    execute: async () => {
      const r = await ctx.admin.extendCheckpoint(key, cp.revision, ttl, { reason: flags.reason, command })
      const json = { action: 'checkpoint-extend', ...stripAudit(r), expiresInMs: r.status === 'extended' ? ttl : undefined }
      switch (r.status) {
        case 'extended':
          return {
            code: EXIT.ok,
            audit: r.audit,
            json,
            lines: [
              `the checkpoint of ${key} (${r.flow}/${r.step}, revision ${r.revision}) expires in ${dur(ttl)} now (was ${dur(r.expiresInMsBefore)})`,
            ],
          }
        case 'unchanged':
          return {
            code: EXIT.ok,
            audit: r.audit,
            json,
            lines: [
              `the checkpoint of ${key} expires in ${dur(r.expiresInMsBefore)} already, later than the ${dur(ttl)} asked: left as it is`,
            ],
          }
        case 'absent':
          return changed(`${key} has no checkpoint any more (expired, or the conversation ended)`, json, r.audit)
        case 'persistent':
          return changed(`the checkpoint of ${key} is persistent now (revision ${r.revision})`, json, r.audit)
        default:
          return changed(
            `the checkpoint of ${key} is at revision ${r.revision} now (${r.flow}/${r.step} by ${r.owner ?? '?'}), not ${cp.revision}`,
            json,
            r.audit,
          )
      }
    },
  }
}

export function checkpointExtend(): Command {
  return withWriteOptions(
    new Command('extend')
      .description('keep an ephemeral (forward) checkpoint alive longer: it expires --ttl from now (never shortened); the revision stays')
      .argument('<key>', 'the chat key of the checkpoint', nameArg(NAME_KINDS.checkpoint, 'a checkpoint'))
      .addOption(durationOption('--ttl <duration>', 'expire this long from now (e.g. 2h)', { min: 1000 }).makeOptionMandatory())
      .addOption(new Option('--if-revision <rev>', 'only if the checkpoint is still at this revision (default: the one shown)')),
  )
    .addHelpText(
      'after',
      examples(
        'botmesh-coord --prefix shop checkpoint extend chat:42 --ttl 2h --if-revision 1767225600000456 --reason "rollout stuck; keep the conversation"',
      ),
    )
    .action(writeAction('checkpoint extend', (ctx, flags, key: string) => planCheckpointExtend(ctx, key, flags as unknown as ExtendFlags)))
}
