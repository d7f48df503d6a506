import { Command } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import { leadRow, leadRows, providerLeadName, type LeadRow } from '../lib.js'
import { jsonOut } from '../output/json.js'
import { table } from '../output/table.js'
import { agoMs, dur, leftMs } from '../output/time.js'
import { progress } from '../output/progress.js'
import { notFound } from '../output/errors.js'
import { examples, nowAndReplicas, printCorrupt, scanInfo } from './common.js'

export async function collectProviders(ctx: Context) {
  const [{ nowMs, replicas }, leads] = await Promise.all([nowAndReplicas(ctx), ctx.reader.leads({ onProgress: progress(ctx, 'leads') })])
  return { nowMs, providers: leadRows(leads.items, replicas.items, nowMs, ['provider']), ...scanInfo(replicas, leads) }
}

const leaderCell = (ctx: Context, r: LeadRow) =>
  r.replicaId === null ? ctx.c.yellow('(none)') : r.holderAlive ? r.replicaId : ctx.c.red(`${r.replicaId} (dead)`)

const yieldText = (r: LeadRow) =>
  r.pendingYield
    ? `by ${r.pendingYield.by}${r.pendingYield.target ? ` → ${r.pendingYield.target}` : ''} (${leftMs(r.pendingYield.expiresInMs)} left)`
    : '-'

export function printProviders(ctx: Context, data: Awaited<ReturnType<typeof collectProviders>>): void {
  const { c } = ctx
  if (data.providers.length === 0) ctx.out(c.dim(`no provider leads under prefix ${ctx.keys.prefix}`))
  else
    ctx.out(
      table(
        ['PROVIDER', 'LEADER', 'INCARNATION', 'SINCE', 'FENCE', 'EXPIRES IN', 'STANDBYS', 'YIELD', 'LAST HANDOVER'].map((h) => c.dim(h)),
        data.providers.map((r) => [
          c.bold(r.key),
          leaderCell(ctx, r),
          r.incarnation?.slice(0, 8) ?? '-',
          r.leadingForMs === null ? (r.vacantForMs === null ? '-' : c.yellow(`vacant ${dur(r.vacantForMs)}`)) : agoMs(r.leadingForMs),
          r.fence ?? '-',
          leftMs(r.expiresInMs),
          r.standbys.length ? r.standbys.map((s) => s.replicaId).join(', ') : c.dim('none'),
          r.pendingYield ? c.yellow(yieldText(r)) : '-',
          dur(r.lastHandoverMs),
        ]),
      ),
    )
  printCorrupt(ctx, data.corrupt)
}

export function providerLs(): Command {
  return new Command('ls')
    .alias('list')
    .description('who leads each provider lead, since when, fence, time left, standbys, pending yield request')
    .addHelpText('after', examples('botmesh-coord --prefix shop provider ls', 'botmesh-coord --prefix shop provider ls --json'))
    .action(
      run(async (ctx) => {
        const data = await collectProviders(ctx)
        if (ctx.json) ctx.out(jsonOut('providers', data))
        else printProviders(ctx, data)
      }),
    )
}

export async function collectProvider(ctx: Context, name: string) {
  const key = providerLeadName(name)
  const [{ nowMs, replicas }, lead] = await Promise.all([nowAndReplicas(ctx), ctx.reader.lead(key)])
  if (!lead) throw notFound(`no lead ${JSON.stringify(key)} under prefix ${ctx.keys.prefix} (no replica has campaigned for it recently)`)
  return { nowMs, provider: leadRow(lead, replicas.items, nowMs), corrupt: replicas.corrupt }
}

export function printProvider(ctx: Context, r: LeadRow): void {
  const { c } = ctx
  const kv = (k: string, v: string | number) => ctx.out(`${c.dim(k.padEnd(16))}${v}`)
  kv('provider', c.bold(r.key))
  kv(
    'leader',
    r.replicaId === null
      ? c.yellow(`(none)${r.vacantForMs === null ? '' : `, vacant for ${dur(r.vacantForMs)}`}`)
      : `${leaderCell(ctx, r)} ${c.dim(r.incarnation ?? '')}`,
  )
  kv('fence', r.fence ?? '-')
  if (r.replicaId !== null) {
    kv('leading for', dur(r.leadingForMs))
    kv('lease left', leftMs(r.expiresInMs))
    kv('renewed', agoMs(r.lastRenewalAgoMs))
  }
  kv('previous', r.previousHolder ? `${r.previousHolder.replicaId} ${c.dim(r.previousHolder.incarnation)}` : '-')
  kv('last handover', r.lastHandoverMs === null ? '-' : `took ${dur(r.lastHandoverMs)}`)
  kv('yield request', r.pendingYield ? c.yellow(yieldText(r)) : '-')
  if (r.standbys.length) {
    ctx.out(c.dim(`standbys (${r.standbys.length})`))
    ctx.out(
      table(
        ['REPLICA', 'INCARNATION', 'ALIVE', 'CANDIDACY LEFT'].map((h) => c.dim(h)),
        r.standbys.map((s) => [s.replicaId, s.incarnation.slice(0, 8), s.alive ? c.green('yes') : c.red('NO'), leftMs(s.deadlineInMs)]),
      ),
    )
  } else kv('standbys', c.dim('none: if the leader dies, nobody takes over until a replica campaigns'))
}

export function providerStatus(): Command {
  return new Command('status')
    .alias('inspect')
    .description('one provider lead whole: leader, since, fence, lease left, previous leader, yield request, standbys')
    .argument('<name>', 'the lead name (provider:whatsapp), or the bare provider id (whatsapp)')
    .addHelpText(
      'after',
      examples(
        'botmesh-coord --prefix shop provider status whatsapp',
        'botmesh-coord --prefix shop provider status provider:whatsapp --json',
      ),
    )
    .action(
      run(async (ctx, name: string) => {
        const data = await collectProvider(ctx, name)
        if (ctx.json) ctx.out(jsonOut('provider', data))
        else printProvider(ctx, data.provider)
        printCorrupt(ctx, data.corrupt)
      }),
    )
}
