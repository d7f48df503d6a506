import { Command } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import { leadNameCandidates, leadRow, leadRows, type LeadRow, type LeadSnapshot } from '../lib.js'
import { cell, printOne, renderTable, tableOf, type KindView } from '../output/format.js'
import { agoMs, dur, leftMs, renewedText } from '../output/time.js'
import { progress } from '../output/progress.js'
import { notFound } from '../output/errors.js'
import { transportDownText, type LetGo } from '../lib.js'
import { byNumber, byNumberDesc, byText, examples, limitOption, listingCommand, nowAndReplicas, printCorrupt, scanInfo } from './common.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

export async function collectProviders(ctx: Context, o: { limit?: number } = {}) {
  const [{ nowMs, replicas }, leads] = await Promise.all([
    nowAndReplicas(ctx),
    ctx.reader.leads({ limit: o.limit, onProgress: progress(ctx, 'leads') }),
  ])
  return { nowMs, providers: leadRows(leads.items, replicas.items, nowMs, ['provider']), ...scanInfo(replicas, leads) }
}

/** A lead's leader: `(none)`, `pod-a (late)` in yellow, `pod-a (dead)` in red (the health model's state). */
export const leaderCell = (ctx: Context, r: LeadRow) =>
  r.replicaId === null
    ? ctx.c.yellow('(none)')
    : r.state === 'late'
      ? ctx.c.yellow(`${cell(r.replicaId)} (late)`)
      : r.holderAlive
        ? cell(r.replicaId)
        : ctx.c.red(`${cell(r.replicaId)} (${r.state})`)

/** The leader's transport: `up`, or `transport down 35s (yields at 1m)` (what the leader recorded). */
export const transportCell = (ctx: Context, r: LeadRow): string =>
  r.replicaId === null ? '-' : r.transportDown ? ctx.c.red(transportDownText(r.transportDown)) : ctx.c.green('up')

/** How a leader let go, in words: what Redis recorded (released, yielded, expired, revoked, evicted). */
export function letGoWords(how: LetGo | null, by: string | null): string {
  switch (how) {
    case 'released':
      return 'released by the leader'
    case 'yielded':
      return `yielded by the leader${by ? ` to ${cell(by)}'s request` : ' to a yield request'}`
    case 'expired':
      return 'expired: the leader stopped renewing and never let go; counted from the expiry'
    case 'revoked':
      return `revoked by an operator${by ? ` (${cell(by)})` : ''}: the leader never let go`
    case 'evicted':
      return "revoked by an operator's replica evict: the leader never let go"
    default:
      return 'let go → next grant'
  }
}

/** LAST TAKEOVER: `1.2s released`, `15s expired`, `0ms revoked`. */
const takeoverCell = (r: LeadRow) =>
  r.lastHandoverMs === null ? '-' : `${dur(r.lastHandoverMs)}${r.lastHandoverHow ? ` ${r.lastHandoverHow}` : ''}`

const yieldText = (r: LeadRow) =>
  r.pendingYield
    ? `by ${cell(r.pendingYield.by)}${r.pendingYield.target ? ` → ${cell(r.pendingYield.target)}` : ''} (${leftMs(r.pendingYield.expiresInMs)} left)`
    : '-'

function providersView(ctx: Context): KindView<LeadRow> {
  const { c } = ctx
  return {
    list: 'providers',
    name: (r) => `lead/${r.key}`,
    empty: `no provider leads under prefix ${ctx.keys.prefix}`,
    columns: [
      { header: 'PROVIDER', value: (r) => c.bold(cell(r.key)) },
      { header: 'LEADER', value: (r) => leaderCell(ctx, r) },
      { header: 'INCARNATION', value: (r) => cell(r.incarnation?.slice(0, 8)) },
      {
        header: 'SINCE',
        value: (r) =>
          r.leadingForMs === null ? (r.vacantForMs === null ? '-' : c.yellow(`vacant ${dur(r.vacantForMs)}`)) : agoMs(r.leadingForMs),
      },
      { header: 'FENCE', value: (r) => r.fence ?? '-' },
      { header: 'EXPIRES IN', value: (r) => leftMs(r.expiresInMs) },
      { header: 'RENEWED', value: (r) => renewedText(c, r.state, r.lastRenewalAgoMs, r.renewMs) },
      { header: 'TRANSPORT', value: (r) => transportCell(ctx, r) },
      {
        header: 'STANDBYS',
        value: (r) =>
          (r.standbys.length ? r.standbys.map((s) => cell(s.replicaId)).join(', ') : c.dim('none')) +
          (r.candidatesRead < r.candidates ? ` (of the first ${r.candidatesRead} of ${r.candidates} candidacies read)` : ''),
      },
      { header: 'YIELD', value: (r) => (r.pendingYield ? c.yellow(yieldText(r)) : '-') },
      // How long the lead was vacant at the last change of leader, and how the leader before let go.
      { header: 'LAST TAKEOVER', value: (r) => takeoverCell(r) },
      { header: 'BEFORE THIS LEADER', value: (r) => cell(r.previousHolder?.replicaId), wide: true },
    ],
  }
}

export function providerLs(): Command {
  return listingCommand<LeadRow, { limit?: number }>({
    name: 'ls',
    description:
      "who leads each provider lead, since when, fence, time left, the leader's transport (up, or down and when it yields), standbys, pending yield request, last takeover (how long, and released, yielded, expired or revoked)",
    examples: [
      'botmesh-coord --prefix shop provider ls',
      'botmesh-coord --prefix shop provider ls -o wide',
      'botmesh-coord --prefix shop provider ls -w',
    ],
    view: providersView,
    sorts: {
      provider: byText((r) => r.key),
      leader: byText((r) => r.replicaId),
      since: byNumberDesc((r) => r.leadingForMs),
      fence: byNumber((r) => r.fence),
      expires: byNumber((r) => r.expiresInMs),
      takeover: byNumberDesc((r) => r.lastHandoverMs),
    },
    replicasOf: (r) => [r.replicaId, ...r.standbys.map((s) => s.replicaId)],
    options: (cmd) => cmd.addOption(limitOption()),
    collect: async (ctx, o) => {
      const d = await collectProviders(ctx, o)
      return { nowMs: d.nowMs, rows: d.providers, truncated: d.truncated, corrupt: d.corrupt, extra: { scanned: d.scanned } }
    },
  })
}

/** The lead an operator names (`whatsapp`, `provider:whatsapp`, `scheduler:report`), or not found (exit 3). */
export async function findLead(ctx: Context, name: string): Promise<LeadSnapshot> {
  const names = leadNameCandidates(name)
  const found = await Promise.all(names.map((n) => ctx.reader.lead(n)))
  const lead = found.find((l) => l !== null)
  if (!lead) {
    throw notFound(
      `no lead ${names.map((n) => JSON.stringify(n)).join(' or ')} under prefix ${ctx.keys.prefix} (no replica has campaigned for it recently)`,
    )
  }
  return lead
}

export async function collectProvider(ctx: Context, name: string) {
  const [{ nowMs, replicas }, lead] = await Promise.all([nowAndReplicas(ctx), findLead(ctx, name)])
  return { nowMs, provider: leadRow(lead, replicas.items, nowMs), corrupt: replicas.corrupt }
}

export function printProvider(ctx: Context, r: LeadRow): void {
  const { c } = ctx
  const kv = (k: string, v: string | number) => ctx.out(`${c.dim(k.padEnd(19))}${v}`)
  kv(r.kind === 'provider' ? 'provider' : 'lead', c.bold(cell(r.key)))
  kv(
    'leader',
    r.replicaId === null
      ? c.yellow(`(none)${r.vacantForMs === null ? '' : `, vacant for ${dur(r.vacantForMs)}`}`)
      : `${leaderCell(ctx, r)} ${c.dim(cell(r.incarnation))}`,
  )
  kv('fence', r.fence ?? '-')
  kv('state', r.state === 'ok' ? c.green('ok') : r.state === 'vacant' || r.state === 'late' ? c.yellow(r.state) : c.red(r.state))
  if (r.state !== 'ok') kv('why', r.reason)
  if (r.replicaId !== null) {
    kv('transport', transportCell(ctx, r))
    kv('leading for', dur(r.leadingForMs))
    kv('lease left', leftMs(r.expiresInMs))
    kv('renewed', renewedText(c, r.state, r.lastRenewalAgoMs, r.renewMs))
    kv('before this leader', r.previousHolder ? `${cell(r.previousHolder.replicaId)} ${c.dim(cell(r.previousHolder.incarnation))}` : '-')
  } else {
    kv('last leader', r.lastHolder ? `${cell(r.lastHolder.replicaId)} ${c.dim(cell(r.lastHolder.incarnation))}` : '-')
    if (r.letGoHow) kv('let go', letGoWords(r.letGoHow, r.letGoBy))
  }
  kv(
    'last takeover',
    r.lastHandoverMs === null ? '-' : `${dur(r.lastHandoverMs)} with nobody leading (${letGoWords(r.lastHandoverHow, r.lastHandoverBy)})`,
  )
  kv('yield request', r.pendingYield ? c.yellow(yieldText(r)) : '-')
  const capped = r.candidatesRead < r.candidates
  const cap = capped ? `; showing those among the first ${r.candidatesRead} of ${r.candidates} candidacies, the rest not read` : ''
  if (r.standbys.length) {
    ctx.out(c.dim(`standbys (${r.standbys.length}${cap})`))
    ctx.out(
      renderTable(
        tableOf(ctx),
        {
          list: 'standbys',
          name: (s) => s.replicaId,
          empty: '',
          columns: [
            { header: 'REPLICA', value: (s) => cell(s.replicaId) },
            { header: 'INCARNATION', value: (s) => cell(s.incarnation.slice(0, 8)) },
            { header: 'ALIVE', value: (s) => (s.alive ? c.green('yes') : c.red('NO')) },
            { header: 'CANDIDACY LEFT', value: (s) => leftMs(s.deadlineInMs) },
          ],
        },
        r.standbys,
      ),
    )
  } else if (capped) kv('standbys', c.yellow(`none live among the first ${r.candidatesRead} of ${r.candidates} candidacies read`))
  else kv('standbys', c.dim('none: if the leader dies, nobody takes over until a replica campaigns'))
}

export function providerStatus(): Command {
  return new Command('status')
    .alias('inspect')
    .description(
      'one lead whole (a provider, or any lead name): leader, since, fence, lease left, the leader before, yield request, standbys',
    )
    .argument(
      '<name>',
      'the lead name (provider:whatsapp, scheduler:report), or the bare provider id (whatsapp)',
      nameArg(NAME_KINDS.lead, 'a lead'),
    )
    .addHelpText(
      'after',
      examples(
        'botmesh-coord --prefix shop provider status whatsapp',
        'botmesh-coord --prefix shop provider status scheduler:report',
        'botmesh-coord --prefix shop provider status provider:whatsapp -o json',
      ),
    )
    .action(
      run(async (ctx, name: string) => {
        const data = await collectProvider(ctx, name)
        printOne(ctx, 'provider', data, `lead/${data.provider.key}`, (safe) => printProvider(ctx, safe.provider))
        printCorrupt(ctx, data.corrupt)
      }),
    )
}
