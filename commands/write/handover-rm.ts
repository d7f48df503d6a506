import { Command, Option } from 'commander'
import type { Context } from '../context.js'
import { handoverRows, shellWord } from '../lib.js'
import { conflict, usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { cell } from '../output/format.js'
import { progress } from '../output/progress.js'
import { dur } from '../output/time.js'
import { collectHandover } from '../read/handover-inspect.js'
import { examples, printCorrupt } from '../read/common.js'
import { bulkPlan } from './bulk.js'
import { changed, withWriteOptions, writeAction, type Plan, type WriteFlags } from './common.js'
import { stripAudit } from './chat.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

interface HandoverRmFlags extends WriteFlags {
  ifIncarnation?: string
  ownerDead?: boolean
}

const NO_FALLBACK = 'the next message of the chat starts a fresh conversation, with no fallback message'

export async function planHandoverRm(ctx: Context, key: string, flags: HandoverRmFlags): Promise<Plan> {
  const { handover: m, nowMs } = await collectHandover(ctx, key)
  if (flags.ifIncarnation !== undefined && m.incarnation !== flags.ifIncarnation) {
    throw conflict(
      `the state changed since you looked: the handover marker of ${key} was left by incarnation ${m.incarnation} now, not ${flags.ifIncarnation}; nothing done`,
    )
  }
  const { c } = ctx
  const command = `handover rm ${shellWord(key)} --if-incarnation ${m.incarnation}`
  const lines = [
    `marker   ${c.bold(cell(m.name))} by ${cell(m.replicaId)} (incarnation ${m.incarnation.slice(0, 8)}, ${m.ownerAlive ? c.green('alive') : c.red(m.ownerStatus === 'stale' ? 'restarted' : 'no heartbeat')}), waiting ${dur(m.waitingForMs)}, ${m.expiresInMs === null ? 'no TTL' : `expires in ${dur(m.expiresInMs)}`}`,
    `now      ${m.next}`,
    `then     removed if still left by incarnation ${m.incarnation.slice(0, 8)} for the wait that started ${dur(nowMs - m.since)} ago: ${NO_FALLBACK}`,
  ]
  const warnings = m.ownerAlive
    ? [
        `${m.replicaId} is alive and holds ${JSON.stringify(m.name)}: if it gets the next message it goes on with it; a replica that gets it instead now starts fresh without telling the customer`,
      ]
    : []
  const expected = { incarnation: m.incarnation, since: m.since }
  return {
    title: `remove the handover marker of ${key}`,
    command,
    inspect: `handover inspect ${shellWord(key)}`,
    lines,
    warnings,
    json: { action: 'handover-rm', key, expected, name: m.name, replicaId: m.replicaId, ownerAlive: m.ownerAlive },
    execute: async () => {
      const r = await ctx.admin.removeHandover(key, { ifIncarnation: m.incarnation, ifSince: m.since, reason: flags.reason, command })
      const json = { action: 'handover-rm', ...stripAudit(r) }
      if (r.status === 'removed')
        return {
          code: EXIT.ok,
          audit: r.audit,
          json,
          lines: [`removed the handover marker of ${key} (${r.name ?? '?'} by ${r.replicaId ?? '?'})`, NO_FALLBACK],
        }
      if (r.status === 'absent')
        return changed(`${key} has no handover marker any more (taken by the next owner, or expired)`, json, r.audit)
      return changed(
        `the handover marker of ${key} is ${r.incarnation === m.incarnation ? `another wait of ${m.incarnation.slice(0, 8)} now` : `left by ${r.replicaId ?? '?'} (incarnation ${(r.incarnation ?? '?').slice(0, 8)}) now`} (${r.name ?? '?'}), not the one shown`,
        json,
        r.audit,
      )
    },
  }
}

/** `handover rm --owner-dead`: every marker whose owner has no live heartbeat, each removed by its own conditioned script. */
export async function planHandoversRm(ctx: Context, flags: HandoverRmFlags): Promise<Plan> {
  const [nowMs, replicas, markers] = await Promise.all([
    ctx.reader.now(),
    ctx.reader.liveReplicas(),
    ctx.reader.handovers({ onProgress: progress(ctx, 'handover markers') }),
  ])
  printCorrupt(ctx, [...replicas.corrupt, ...markers.corrupt])
  const byKey = new Map(markers.items.map((m) => [m.key, m]))
  const dead = handoverRows(markers.items, replicas.items, nowMs).filter((r) => !r.ownerAlive)
  const entries = dead.map((r) => ({
    key: r.key,
    name: r.name,
    replicaId: r.replicaId,
    incarnation: r.incarnation,
    since: byKey.get(r.key)!.since,
    waitingForMs: r.waitingForMs,
  }))
  const command = 'handover rm --owner-dead'
  return bulkPlan(ctx, {
    action: 'handovers-rm',
    noun: 'handover markers',
    selection: 'owner has no live heartbeat',
    filter: { ownerDead: true },
    entries,
    line: (e) => `${cell(e.key)}  ${cell(e.name)} by ${cell(e.replicaId)} (${e.incarnation.slice(0, 8)}), waiting ${dur(e.waitingForMs)}`,
    then: `each is removed if still left by the same incarnation for the same wait (one script each; one that changed is skipped and counted): ${NO_FALLBACK}`,
    command,
    run: (o) => ctx.admin.removeHandovers(entries, { ...o, reason: flags.reason }),
  })
}

export function handoverRm(): Command {
  return withWriteOptions(
    new Command('rm')
      .alias('remove')
      .description(
        'remove a handover marker (the next owner applies no fallback), conditioned on the incarnation that left it; --owner-dead removes every marker whose owner is gone',
      )
      .argument('[key]', 'the chat key of the marker', nameArg(NAME_KINDS.handover, 'a handover marker'))
      .addOption(new Option('--if-incarnation <inc>', 'only if the marker was left by this incarnation (default: the one shown)'))
      .addOption(new Option('--owner-dead', 'every marker whose owner has no live heartbeat (with a preview and one question)')),
  )
    .addHelpText(
      'after',
      examples(
        'botmesh-coord --prefix shop handover rm chat:7 --if-incarnation e34fe49a3eaeeab9 --reason "replica died; do not send the interrupted message"',
        'botmesh-coord --prefix shop handover rm --owner-dead --dry-run',
      ),
    )
    .action(
      writeAction(
        'handover rm',
        (ctx, flags, key: string | undefined) =>
          key === undefined ? planHandoversRm(ctx, flags as HandoverRmFlags) : planHandoverRm(ctx, key, flags as HandoverRmFlags),
        (flags, key: string | undefined) => {
          const f = flags as HandoverRmFlags
          if (key !== undefined && f.ownerDead) throw usage('handover rm: give a chat key or --owner-dead, not both')
          if (key === undefined && !f.ownerDead)
            throw usage('handover rm: give a chat key, or --owner-dead for every marker whose owner is gone')
          if (key === undefined && f.ifIncarnation !== undefined) throw usage('handover rm: --if-incarnation goes with a chat key')
        },
      ),
    )
}
