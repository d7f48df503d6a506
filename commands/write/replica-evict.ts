import { Command, Option } from 'commander'
import { formatDuration, shellWord, type ReplicaEvictResult } from '../lib.js'
import type { Context } from '../context.js'
import { conflict, notFound } from '../output/errors.js'
import { EXIT, type ExitCode } from '../output/exit-codes.js'
import { ago } from '../output/time.js'
import { changed, withWriteOptions, writeAction, type Plan } from './common.js'
import { stripAudit } from './chat.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

interface EvictFlags {
  ifIncarnation?: string
  scan?: boolean
  reason?: string
}

export async function planReplicaEvict(ctx: Context, replicaId: string, flags: EvictFlags): Promise<Plan> {
  const nowMs = await ctx.reader.now()
  const r = await ctx.reader.replica(replicaId)
  if ((!r || r.expiresAtMs <= nowMs) && flags.ifIncarnation) return planFinishEviction(ctx, replicaId, flags.ifIncarnation, flags)
  if (!r || r.expiresAtMs <= nowMs)
    throw notFound(
      `no live replica ${replicaId}${r ? ` (gone: no heartbeat for ${formatDuration(nowMs - r.beatAtMs)})` : ''}: nothing to evict (the leases of a replica without heartbeat expire by themselves)`,
    )
  if (flags.ifIncarnation && flags.ifIncarnation !== r.incarnation && !r.incarnation.startsWith(flags.ifIncarnation)) {
    throw conflict(
      `the state changed since you looked: ${replicaId} runs incarnation ${r.incarnation} now, not ${flags.ifIncarnation}; nothing done`,
    )
  }
  const { c } = ctx
  const held = r.leases.held
  const lines = [
    `replica  ${c.bold(replicaId)} incarnation ${r.incarnation}, ${r.info.host}:${r.info.pid} v${r.info.version}, heartbeat ${ago(r.beatAtMs, nowMs)}`,
    `holds    ${held.length ? held.map((h) => `${h.kind} ${h.key} (fence ${h.fence})`).join(', ') : 'nothing'}${r.leases.more ? ` and ${r.leases.more} more` : ''}`,
    `waits    ${r.leases.waiting.length ? r.leases.waiting.map((w) => `${w.key} #${w.ticket}`).join(', ') : 'for nothing'}`,
    `then     its heartbeat goes and its later beats are refused (it emits coordination:evicted and drops everything);`,
    `         its turns and leads are revoked (fences bumped), its tickets dropped, the next waiters granted`,
  ]
  const warnings = [`a process that is only slow, not dead, loses every turn it holds; restarting it (a new incarnation) lets it back in`]
  return {
    title: `evict replica ${replicaId}`,
    command: `replica evict ${replicaId} --if-incarnation ${r.incarnation}`,
    inspect: `replicas ls --all --replica ${shellWord(replicaId)}`,
    lines,
    warnings,
    json: { action: 'replica-evict', replicaId, expected: { incarnation: r.incarnation }, leases: r.leases },
    execute: async () => {
      const res = await ctx.admin.evictReplica(replicaId, {
        ifIncarnation: r.incarnation,
        scan: flags.scan ? true : undefined,
        reason: flags.reason,
        command: `replica evict ${replicaId} --if-incarnation ${r.incarnation}`,
      })
      const json = { action: 'replica-evict', ...stripAudit(res), wakeRefused: evictWakeRefused(res) }
      if (res.status === 'evicted') {
        const lines = [`evicted ${replicaId} (incarnation ${res.incarnation})`]
        for (const ch of res.chats) {
          const parts = [
            ch.revoked ? `turn revoked, fence ${ch.fenceBefore} → ${ch.fenceAfter}` : null,
            ch.ticketsDropped ? `${ch.ticketsDropped} ticket(s) dropped` : null,
          ]
          lines.push(
            `chat ${ch.key}: ${parts.filter(Boolean).join(', ') || 'nothing of it left'}${ch.granted ? `; ${ch.granted.replicaId} holds it now (fence ${ch.granted.fence})` : ''}`,
          )
        }
        for (const l of res.leads) {
          if (l.revoked) lines.push(`lead ${l.name}: revoked, fence ${l.fenceBefore} → ${l.fenceAfter}; standbys woken`)
          else if (l.candidacyWithdrawn) lines.push(`lead ${l.name}: candidacy withdrawn`)
        }
        for (const f of res.failed)
          lines.push(c.yellow(`${f.kind} ${f.key}: not cleaned (${f.error}); it expires unrefreshed within leaseMs`))
        if (res.failed.length) {
          // The tombstone stands (the replica is out); finish the clean-up with the same command.
          lines.push(
            c.yellow(
              `finish with: ${ctx.cmdline(`botmesh-coord replica evict ${replicaId} --if-incarnation ${res.incarnation} --scan --yes`)}`,
            ),
          )
          return { code: evictFailedCode(res.failed), audit: res.audit, json, lines }
        }
        return { code: EXIT.ok, audit: res.audit, json, lines }
      }
      if (res.status === 'not-alive') return changed(`${replicaId} has no live heartbeat any more`, json, res.audit)
      return changed(`${replicaId} runs incarnation ${res.incarnation} now, not ${r.incarnation}`, json, res.audit)
    },
  }
}

/** Redis's refusal of a wake-up in any chat or lead cleaned (the clean-up stands). */
function evictWakeRefused(res: ReplicaEvictResult): string | null {
  if (res.status !== 'evicted') return null
  return [...res.chats, ...res.leads].find((x) => x.wakeRefused)?.wakeRefused ?? null
}

/** Keys left uncleaned: a corrupt fence (refused before anything was written there) is exit 8, any other failure exit 1. */
function evictFailedCode(failed: Array<{ code?: string }>): ExitCode {
  return failed.some((f) => f.code === 'ERR_CORRUPT_STATE') ? EXIT.corrupt : EXIT.unsafe
}

/** The replica is already evicted (tombstone of that incarnation): clean its chats and leads again. */
function planFinishEviction(ctx: Context, replicaId: string, incarnation: string, flags: EvictFlags): Plan {
  const command = `replica evict ${replicaId} --if-incarnation ${incarnation}${flags.scan ? ' --scan' : ''}`
  return {
    title: `finish evicting replica ${replicaId}`,
    command,
    inspect: `replicas ls --all --replica ${shellWord(replicaId)}`,
    lines: [
      `replica  ${ctx.c.bold(replicaId)} has no live heartbeat; if incarnation ${incarnation} was evicted, its chats and leads are cleaned again`,
      `then     its turns and leads are revoked (fences bumped), its tickets dropped, the next waiters granted`,
    ],
    warnings: [],
    json: { action: 'replica-evict', replicaId, expected: { incarnation }, again: true },
    execute: async () => {
      const res = await ctx.admin.evictReplica(replicaId, {
        ifIncarnation: incarnation,
        scan: flags.scan ? true : undefined,
        reason: flags.reason,
        command,
      })
      const json = { action: 'replica-evict', ...stripAudit(res), wakeRefused: evictWakeRefused(res) }
      if (res.status !== 'evicted') throw notFound(`no live replica ${replicaId} and no eviction of incarnation ${incarnation} to finish`)
      const lines = [`cleaned ${res.chats.length} chat(s) and ${res.leads.length} lead(s) of ${replicaId} (incarnation ${res.incarnation})`]
      for (const f of res.failed) lines.push(ctx.c.yellow(`${f.kind} ${f.key}: not cleaned (${f.error})`))
      return { code: res.failed.length ? evictFailedCode(res.failed) : EXIT.ok, audit: res.audit, json, lines }
    },
  }
}

export function replicaEvict(): Command {
  return withWriteOptions(
    new Command('evict')
      .description(
        'treat a replica as dead now: its heartbeat, tickets and leases go, fences bumped (a zombie that renews but does no work)',
      )
      .argument('<replicaId>', 'the replica id (replicas ls; replica/<id> as -o name prints it)', nameArg(NAME_KINDS.replica, 'a replica'))
      .addOption(new Option('--if-incarnation <inc>', 'only if the replica still runs this incarnation (what you saw)'))
      .addOption(new Option('--scan', 'also SCAN every chat and lead for its tickets and leases (beyond what its heartbeat lists)')),
  )
    .addHelpText(
      'after',
      '\nExample:\n  botmesh-coord --prefix shop replica evict pod-a --if-incarnation 3f2a9c1b0d4e5f60 --reason "event loop stuck" --yes',
    )
    .action(writeAction('replica evict', (ctx, flags, id: string) => planReplicaEvict(ctx, id, flags as EvictFlags)))
}
