import { Command, Option } from 'commander'
import type { Context } from '../context.js'
import { formatDuration, leaseHealth, LEAD_WORDS, shellWord, type LeadSnapshot } from '../lib.js'
import { durationOption } from '../duration.js'
import { findLead } from '../read/providers.js'
import { conflict, notFound, refused, usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { ago, left } from '../output/time.js'
import { changed, holderWords, liveAt, parseFence, withWriteOptions, writeAction, type Outcome, type Plan } from './common.js'
import { heldNow, stripAudit } from './chat.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

interface YieldFlags {
  to?: string
  wait?: boolean
  /** ms */
  waitTimeout?: number
  force?: boolean
  cancel?: boolean
  ifFence?: string
  reason?: string
}

/** `provider yield --cancel`: withdraw the pending request (or reservation) shown, conditioned on it. */
async function planYieldCancel(ctx: Context, rawName: string, flags: YieldFlags): Promise<Plan> {
  for (const other of ['to', 'wait', 'waitTimeout', 'force'] as const) {
    if (flags[other] !== undefined)
      throw usage(`--cancel withdraws a request: it does not go with --${other.replace(/[A-Z]/g, (ch) => `-${ch.toLowerCase()}`)}`)
  }
  const ifFence = parseFence(flags.ifFence)
  const [nowMs, lead] = await Promise.all([ctx.reader.now(), findLead(ctx, rawName)])
  const name = lead.key
  const y = lead.yieldRequest
  if (!y || y.expiresAtMs <= nowMs) throw notFound(`no yield request is pending for ${name}: nothing to cancel`)
  if (ifFence !== null && lead.fence !== ifFence) {
    throw conflict(`the state changed since you looked: ${name} is at fence ${lead.fence}, not ${ifFence}; nothing done`)
  }
  const { c } = ctx
  const command = `provider yield ${name} --cancel`
  return {
    title: `cancel the yield request for ${name}`,
    command,
    inspect: `provider status ${shellWord(name)}`,
    lines: [
      `request  by ${c.bold(y.by)} ${ago(y.requestedAtMs, nowMs)}${y.target ? `, reserving the lead for ${c.bold(y.target)}` : ''}, ${left(y.expiresAtMs, nowMs)} left`,
      `leader   ${lead.holder ? `${lead.holder.replicaId} (fence ${lead.fence})` : c.yellow(`nobody (fence ${lead.fence ?? '-'})`)}`,
      `then     the request is withdrawn${y.target ? ' and the reservation lifted' : ''}; the standbys are woken: ${lead.holder ? 'the leader keeps leading unless it stepped down already' : 'any of them may take the lead now'}`,
    ],
    warnings: [],
    json: { action: 'yield-cancel', name, expected: { requestedAtMs: y.requestedAtMs, fence: lead.fence }, by: y.by, target: y.target },
    execute: async () => {
      const r = await ctx.admin.cancelYield(name, { ifRequestedAt: y.requestedAtMs, ifFence, reason: flags.reason, command })
      const json = { action: 'yield-cancel', ...stripAudit(r) }
      if (r.status === 'cancelled') {
        return {
          code: EXIT.ok,
          audit: r.audit,
          json,
          lines: [`cancelled the yield request of ${r.by} for ${name}${r.target ? ` (the reservation for ${r.target} is lifted)` : ''}`],
        }
      }
      if (r.status === 'none') return changed(`no yield request is pending for ${name} any more`, json, r.audit)
      return changed(`${name} has another yield request now (by ${r.by}) or another fence (${r.fence ?? '-'})`, json, r.audit)
    },
  }
}

export async function planProviderYield(ctx: Context, rawName: string, flags: YieldFlags): Promise<Plan> {
  if (flags.cancel) return planYieldCancel(ctx, rawName, flags)
  const ifFence = parseFence(flags.ifFence)
  if (flags.waitTimeout !== undefined && !flags.wait) throw usage('--wait-timeout goes with --wait')
  const [nowMs, lead] = await Promise.all([ctx.reader.now(), findLead(ctx, rawName)])
  const name = lead.key
  const leads = lead.holder && lead.holder.expiresAtMs > nowMs ? lead.holder : null
  // A pin that no longer matches is a change since the operator looked, led or not now.
  if (ifFence !== null && lead.fence !== ifFence) {
    throw conflict(
      `the state changed since you looked: ${name} is at fence ${lead.fence}, not ${ifFence} (${heldNow(leads)}); nothing done`,
    )
  }
  if (!lead.holder || !leads) {
    throw notFound(`nobody leads ${name}${lead?.fence ? ` (last fence ${lead.fence})` : ''}: nothing to yield`)
  }
  // By default --wait waits as long as the leader's lease runs (plus a takeover's slack): a leader that
  // answers yields well inside it; one that does not is taken over by the expiry, reported as such.
  const waitMs = flags.waitTimeout ?? defaultWaitMs(lead.holder.expiresAtMs - nowMs)
  const h = lead.holder
  const standbys = lead.candidates.filter((cand) => cand.deadlineMs > nowMs && cand.incarnation !== h.incarnation)
  if (flags.to !== undefined) {
    if (flags.to === h.replicaId) throw refused(`${flags.to} already leads ${name}: nothing to hand over`)
    const alive = await ctx.reader.replica(flags.to)
    if (!alive || alive.expiresAtMs <= nowMs)
      throw refused(`replica ${flags.to} is not alive (no heartbeat): it cannot take ${name}; nothing done`)
    if (!standbys.some((s) => s.replicaId === flags.to)) {
      throw refused(
        `replica ${flags.to} is not standing for ${name} (standbys: ${standbys.map((s) => s.replicaId).join(', ') || 'none'}); nothing done`,
      )
    }
  }
  const { c } = ctx
  const health = leaseHealth(h, await liveAt(ctx, nowMs), nowMs, LEAD_WORDS)
  const lines = [
    `leader   ${c.bold(h.replicaId)} (incarnation ${h.incarnation.slice(0, 8)}, ${holderWords(c, health)}), since ${ago(h.sinceMs, nowMs)}, renewed ${ago(h.lastRenewalMs, nowMs)}, lease left ${left(h.expiresAtMs, nowMs)}`,
    `fence    ${lead.fence}${flags.force ? " → bumped now: the leader's next renewal answers 'revoked'" : ' (the next leader gets a higher one)'}`,
    `standbys ${standbys.length ? standbys.map((s) => s.replicaId).join(', ') : c.yellow('none')}`,
    flags.force
      ? `then     the lead is revoked in Redis at once and ${flags.to ? `reserved for ${flags.to}` : 'the standbys are woken to take it'}`
      : `then     ${h.replicaId} is asked to step down (onFollower 'yield', release, sit out); ${flags.to ? `only ${flags.to} may take it` : 'a standby takes over'}`,
  ]
  if (lead.yieldRequest && lead.yieldRequest.expiresAtMs > nowMs) {
    lines.push(
      `pending  a yield request by ${lead.yieldRequest.by} ${ago(lead.yieldRequest.requestedAtMs, nowMs)}${lead.yieldRequest.target ? ` for ${lead.yieldRequest.target}` : ''}`,
    )
  }
  const warnings: string[] = []
  if (!standbys.length)
    warnings.push(
      `no standby is campaigning for ${name}: ${flags.force ? 'nobody may take it over' : `${h.replicaId} will sit out and then take it back`}`,
    )
  if (flags.force) {
    warnings.push(
      `--force: a hung leader process may still hold its transport (e.g. the WhatsApp session) until its own local deadline passes (up to its leaseMs after its last renewal, ${ago(h.lastRenewalMs, nowMs)})`,
    )
  }
  // Recorded with the fence it was pinned to (what the operator saw), given or not.
  const command = [
    'provider yield',
    name,
    flags.to ? `--to ${flags.to}` : '',
    flags.force ? '--force' : '',
    lead.fence !== null ? `--if-fence ${lead.fence}` : '',
  ]
    .filter(Boolean)
    .join(' ')
  return {
    title: flags.force ? `revoke the lead of ${name}` : `ask ${h.replicaId} to yield ${name}`,
    command,
    inspect: `provider status ${shellWord(name)}`,
    lines,
    warnings,
    json: {
      action: flags.force ? 'lead-revoke' : 'lead-yield',
      name,
      expected: { fence: lead.fence, holder: { replicaId: h.replicaId, incarnation: h.incarnation } },
      target: flags.to ?? null,
      standbys: standbys.map((s) => s.replicaId),
    },
    execute: async () => {
      const startedAt = performance.now()
      const outcome = flags.force ? await revoke(ctx, name, lead, flags, command) : await ask(ctx, name, lead, flags, command)
      if (outcome.code !== EXIT.ok || !flags.wait) return outcome
      const waited = await waitForTakeover(ctx, name, lead, flags.to ?? null, startedAt, waitMs)
      return {
        ...outcome,
        code: waited.code,
        lines: waited.code === EXIT.ok ? [...outcome.lines, ...waited.lines] : [...waited.lines, ...outcome.lines],
        json: { ...outcome.json, takeover: waited.json },
      }
    },
  }
}

async function ask(ctx: Context, name: string, lead: LeadSnapshot, flags: YieldFlags, command: string): Promise<Outcome> {
  const r = await ctx.admin.requestYield(name, {
    target: flags.to ?? null,
    ifFence: lead.fence,
    reason: flags.reason,
    command,
    audit: true,
  })
  const json = { action: 'lead-yield', name, ...stripAudit(r) }
  switch (r.status) {
    case 'requested':
      return {
        code: EXIT.ok,
        audit: r.audit,
        json,
        lines: [`asked ${r.leader.replicaId} to yield ${name} (fence ${r.fence})${flags.to ? `, reserved for ${flags.to}` : ''}`],
      }
    case 'no-leader':
      return changed(`nobody leads ${name} any more`, json, r.audit)
    case 'fence-changed':
      return changed(`${name} is at fence ${r.fence} now, not ${lead.fence}`, json, r.audit)
    default:
      return changed(`${flags.to} stopped standing for ${name}`, json, r.audit)
  }
}

async function revoke(ctx: Context, name: string, lead: LeadSnapshot, flags: YieldFlags, command: string): Promise<Outcome> {
  const r = await ctx.admin.revokeLead(name, {
    ifFence: lead.fence,
    ifIncarnation: lead.holder!.incarnation,
    target: flags.to ?? null,
    reason: flags.reason,
    command,
  })
  const json = { action: 'lead-revoke', ...stripAudit(r) }
  switch (r.status) {
    case 'revoked':
      return {
        code: EXIT.ok,
        audit: r.audit,
        json,
        lines: [
          `revoked ${name} from ${r.holder.replicaId}: fence ${r.fenceBefore} → ${r.fenceAfter}; standbys woken`,
          `${r.holder.replicaId} learns it at its next renewal; until its local deadline a hung process may still use its transport`,
        ],
      }
    case 'no-leader':
      return changed(`nobody leads ${name} any more (fence ${r.fence})`, json, r.audit)
    case 'target-not-standing':
      return changed(`${flags.to} stopped standing for ${name}`, json, r.audit)
    default:
      return changed(
        `${name} is led by ${r.holder?.replicaId ?? 'nobody'} at fence ${r.fence} now, not ${lead.holder!.replicaId} at ${lead.fence}`,
        json,
        r.audit,
      )
  }
}

/** The slack past the leader's lease that --wait waits by default, for a standby to take an expired lead. */
export const WAIT_SLACK_MS = 5_000

/** --wait's default: the leader's lease left when asked, plus WAIT_SLACK_MS. */
export function defaultWaitMs(leaseLeftMs: number): number {
  return Math.max(0, leaseLeftMs) + WAIT_SLACK_MS
}

/** How a takeover happened, in the words of --wait: what the lead hash recorded (hw/hb). */
function takeoverHow(l: LeadSnapshot, old: string): string {
  switch (l.lastHandoverHow) {
    case 'yielded':
      return `${old} yielded (released it on the request)`
    case 'released':
      return `${old} released it`
    case 'expired':
      return `${old} never let go: its lease expired (frozen, dead or cut off from Redis), and the time counts from the expiry`
    case 'revoked':
      return `revoked by an operator${l.lastHandoverBy ? ` (${l.lastHandoverBy})` : ''}: ${old} never let go`
    case 'evicted':
      return `revoked by replica evict: ${old} never let go`
    default:
      return `${old} let go`
  }
}

/**
 * Poll (Redis clock, 100 ms) until a different replica leads with a higher fence; measure the takeover
 * and say how it happened. A takeover by expiry is not the yield that was asked for: exit 1.
 */
async function waitForTakeover(
  ctx: Context,
  name: string,
  before: LeadSnapshot,
  target: string | null,
  startedAt: number,
  waitMs: number,
): Promise<{ code: (typeof EXIT)[keyof typeof EXIT]; lines: string[]; json: Record<string, unknown> }> {
  const old = before.holder!
  const deadline = startedAt + waitMs
  let last: LeadSnapshot | null = null
  for (;;) {
    last = await ctx.reader.lead(name)
    const h = last?.holder
    if (
      h &&
      (h.replicaId !== old.replicaId || h.incarnation !== old.incarnation) &&
      (last!.fence ?? 0) > (before.fence ?? 0) &&
      (!target || h.replicaId === target)
    ) {
      const ms = Math.round(performance.now() - startedAt)
      const how = last!.lastHandoverHow
      const expired = how === 'expired'
      const lines = [
        `${h.replicaId} leads ${name} now (fence ${last!.fence}); takeover took ${formatDuration(ms)}: ${takeoverHow(last!, old.replicaId)}`,
      ]
      if (expired) {
        lines.push(
          `${old.replicaId} did not yield: the lead changed hands only because its lease ran out; look at that replica (frozen? cut off?) — next time, against a leader that does not answer: provider yield ${name} --force --if-fence <its fence>`,
        )
      }
      return {
        code: expired ? EXIT.unsafe : EXIT.ok,
        lines,
        json: {
          ok: !expired,
          how: how ?? null,
          by: last!.lastHandoverBy,
          leader: { replicaId: h.replicaId, incarnation: h.incarnation },
          fence: last!.fence,
          takeoverMs: ms,
          vacantMs: last!.lastHandoverMs,
        },
      }
    }
    if (performance.now() >= deadline) break
    await new Promise((r) => setTimeout(r, 100))
  }
  const h = last?.holder
  let what: string
  if (!h)
    what = `nobody leads ${name} (fence ${last?.fence ?? '-'}; standbys: ${last?.candidates.map((c) => c.replicaId).join(', ') || 'none'})`
  else if (h.incarnation === old.incarnation && last!.fence === before.fence)
    what = `${old.replicaId} still leads ${name} at fence ${before.fence}: it did not step down (hung?); revoke it, pinned to that fence: ${ctx.cmdline(`botmesh-coord provider yield ${shellWord(name)} --force --if-fence ${before.fence}`)}`
  else if (h.replicaId === old.replicaId) what = `${old.replicaId} took ${name} back (fence ${last!.fence}): no standby took it`
  else what = `${h.replicaId} leads ${name} (fence ${last!.fence}), not ${target}`
  return {
    code: EXIT.unsafe,
    lines: [`no takeover within ${formatDuration(waitMs)}: ${what}`],
    json: {
      ok: false,
      waitedMs: waitMs,
      leader: h ? { replicaId: h.replicaId, incarnation: h.incarnation } : null,
      fence: last?.fence ?? null,
    },
  }
}

export function providerYield(): Command {
  return withWriteOptions(
    new Command('yield')
      .description('ask the leader of a provider to step down; a campaigning standby takes over')
      .argument('<name>', 'the lead name, e.g. provider:whatsapp (bare whatsapp = provider:whatsapp)', nameArg(NAME_KINDS.lead, 'a lead'))
      .addOption(
        new Option('--to <replicaId>', 'hand it to this standby only (refused unless alive and standing)').argParser(
          nameArg(NAME_KINDS.replica, 'a replica'),
        ),
      )
      .addOption(
        new Option(
          '--wait',
          'wait until another replica leads with a higher fence; print the takeover time and how (yielded, expired, revoked)',
        ),
      )
      .addOption(
        durationOption(
          '--wait-timeout <duration>',
          "how long --wait waits (default: the leader's lease left, plus 5s; a takeover by expiry exits 1)",
          { min: 1, timer: true },
        ),
      )
      .addOption(new Option('--force', 'revoke the lead in Redis now (a leader that does not answer); fence bumped'))
      .addOption(new Option('--cancel', 'withdraw the pending yield request (or the reservation for a standby) instead'))
      .addOption(new Option('--if-fence <fence>', 'only if the lead is still at this fence (what you saw)')),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  botmesh-coord --prefix shop provider yield whatsapp --if-fence 1795982440391117 --wait\n  botmesh-coord --prefix shop provider yield whatsapp --to pod-b --if-fence 1795982440391117 --yes\n  botmesh-coord --prefix shop provider yield whatsapp --force --if-fence 1795982440391117 --reason "leader frozen" --yes\n  botmesh-coord --prefix shop provider yield whatsapp --cancel --yes',
    )
    .action(writeAction('provider yield', (ctx, flags, name: string) => planProviderYield(ctx, name, flags as YieldFlags)))
}
