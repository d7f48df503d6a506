import { Command, Option } from 'commander'
import type { Context } from '../context.js'
import { shellWord } from '../lib.js'
import { conflict, notFound } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { ago, left } from '../output/time.js'
import { changed, parseFence, withWriteOptions, writeAction, type Plan } from './common.js'
import { stripAudit } from './chat.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

export async function planLockRelease(ctx: Context, key: string, flags: { ifFence?: string; reason?: string }): Promise<Plan> {
  const ifFence = parseFence(flags.ifFence)
  const nowMs = await ctx.reader.now()
  const lock = await ctx.reader.lock(key)
  // A pin that no longer matches is a change since the operator looked, held or not now.
  if (lock && ifFence !== null && lock.fence !== ifFence) {
    throw conflict(
      `the state changed since you looked: lock ${key} is at fence ${lock.fence}, not ${ifFence} (${lock.holder ? `held now by ${lock.holder.owner || '?'}` : 'nobody holds it now'}); nothing done`,
    )
  }
  if (!lock || !lock.holder) throw notFound(`lock ${key} is not held (fence ${lock?.fence ?? '-'}): nothing to release`)
  const h = lock.holder
  return {
    title: `force-release the lock ${key}`,
    command: `lock release ${key} --if-fence ${lock.fence}`,
    inspect: `lock release ${shellWord(key)} --dry-run`,
    lines: [
      `holder   ${ctx.c.bold(h.owner || '?')}, acquired ${ago(h.acquiredAtMs, nowMs)}, ${h.expiresAtMs > nowMs ? `expires in ${left(h.expiresAtMs, nowMs)}` : ctx.c.red(left(h.expiresAtMs, nowMs))}`,
      `fence    ${lock.fence} → bumped: the holder's renewLock() answers false; the next holder's fence is above anything it writes with`,
      `then     the lock is free: the next acquireLockFenced() takes it`,
    ],
    warnings:
      h.expiresAtMs > nowMs
        ? [`the lock is current: ${h.owner} may still be working under it (its fenced writes are refused from now on)`]
        : [],
    json: { action: 'lock-release', key, expected: { fence: lock.fence, owner: h.owner } },
    execute: async () => {
      const r = await ctx.admin.releaseLock(key, {
        ifFence: lock.fence,
        reason: flags.reason,
        command: `lock release ${key} --if-fence ${lock.fence}`,
      })
      const json = { action: 'lock-release', ...stripAudit(r) }
      if (r.status === 'released') {
        return {
          code: EXIT.ok,
          audit: r.audit,
          json,
          lines: [`released ${key} (held by ${r.owner ?? '?'}): fence ${r.fenceBefore} → ${r.fenceAfter}`],
        }
      }
      if (r.status === 'not-held') return changed(`${key} is not held any more (fence ${r.fence})`, json, r.audit)
      return changed(`${key} is at fence ${r.fence} now (held by ${r.owner ?? '?'}), not ${lock.fence}`, json, r.audit)
    },
  }
}

export function lockRelease(): Command {
  return withWriteOptions(
    new Command('release')
      .description('force-release a fenced lock (fence bumped, so the old holder is fenced out)')
      .argument('<key>', 'the lock key as given to acquireLockFenced', nameArg(NAME_KINDS.lock, 'a lock'))
      .addOption(new Option('--if-fence <fence>', 'only if the lock is still at this fence')),
  )
    .addHelpText(
      'after',
      '\nExample:\n  botmesh-coord --prefix shop lock release invoice:run --if-fence 1767225600000789 --reason "holder pod gone" --yes',
    )
    .action(
      writeAction('lock release', (ctx, flags, key: string) => planLockRelease(ctx, key, flags as { ifFence?: string; reason?: string })),
    )
}
