import { Command, Option } from 'commander'
import type { Context } from '../context.js'
import { conflict, notFound } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { ago } from '../output/time.js'
import { changed, parseFence, withWriteOptions, writeAction, type Plan } from './common.js'
import { stripAudit } from './chat.js'

export async function planCheckpointRm(ctx: Context, key: string, flags: { revision?: string; reason?: string }): Promise<Plan> {
  const wanted = parseFence(flags.revision, '--revision')
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
    command: `checkpoint rm ${key} --revision ${cp.revision}`,
    lines,
    warnings,
    json: { action: 'checkpoint-rm', key, expected: { revision: cp.revision }, flow: cp.flow, step: cp.step },
    execute: async () => {
      const r = await ctx.admin.removeCheckpoint(key, cp.revision, {
        reason: flags.reason,
        command: `checkpoint rm ${key} --revision ${cp.revision}`,
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
      .description('delete a checkpoint, compare-and-set on its revision (default: the revision shown)')
      .argument('<key>', 'the chat key of the checkpoint')
      .addOption(new Option('--revision <rev>', 'only if the checkpoint is still at this revision')),
  )
    .addHelpText(
      'after',
      '\nExample:\n  botmesh-coord --prefix shop checkpoint rm chat:42 --revision 1767225600000456 --reason "flow changed" --yes',
    )
    .action(
      writeAction('checkpoint rm', (ctx, flags, key: string) =>
        planCheckpointRm(ctx, key, flags as { revision?: string; reason?: string }),
      ),
    )
}
