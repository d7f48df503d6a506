import { Command, InvalidArgumentError } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import {
  DEFAULTS,
  INSPECT_TICKETS,
  MAX_INSPECT_TICKETS,
  chatView,
  explainChat,
  formatDuration,
  type ChatView,
  type Explanation,
  type Finding,
} from '../lib.js'
import { cell, printOne } from '../output/format.js'
import { table } from '../output/table.js'
import { dur, leftMs, renewedText } from '../output/time.js'
import { notFound } from '../output/errors.js'
import { emptyPrefixLine, examples, printCorrupt } from './common.js'
import { durationOption } from '../duration.js'
import { formatCheckpoint } from './checkpoints.js'
import { BARE, deployedFingerprints, fingerprintOptions, type FingerprintFlags } from './fingerprints.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

interface InspectOptions extends FingerprintFlags {
  explain?: boolean
  /** Tickets read and shown from the head of the queue. */
  tickets?: number
  /** ms */
  turnWait: number
}

/** Collect: the chat whole (one round trip, one slot) and the live replicas; the verdict when asked. */
export async function collectChat(ctx: Context, key: string, o: InspectOptions) {
  const [detail, replicas] = await Promise.all([ctx.reader.chat(key, { tickets: o.tickets }), ctx.reader.liveReplicas()])
  const chat = chatView(detail, replicas.items, key, { turnWaitMs: o.turnWait })
  if (!chat.exists) {
    const note = await emptyPrefixLine(ctx)
    throw notFound(
      `no chat "${key}" under prefix ${ctx.keys.prefix} (no turn, queue, checkpoint or handover marker)${note ? `; ${note.replace(/^note: /, '')}` : ''}`,
    )
  }
  const deployed = deployedFingerprints(o)
  const explain =
    o.explain || deployed ? explainChat(chat, { fingerprint: deployed?.[BARE], fingerprints: deployed ?? undefined }) : undefined
  // The fixes name the command with the connection this one used (context, or --url and --prefix).
  for (const f of explain?.findings ?? []) if (f.fix) f.fix = ctx.cmdline(f.fix)
  if (chat.staleWrite) chat.staleWrite = { ...chat.staleWrite, fix: ctx.cmdline(chat.staleWrite.fix) }
  return { nowMs: detail.nowMs, chat, ...(explain ? { explain } : {}), corrupt: replicas.corrupt }
}

const sev = (ctx: Context, f: Finding) =>
  f.severity === 'problem' ? ctx.c.red('problem') : f.severity === 'warning' ? ctx.c.yellow('warning') : ctx.c.dim('info')

export function printExplanation(ctx: Context, e: Explanation): void {
  const { c } = ctx
  const head =
    e.verdict === 'stuck'
      ? c.red.bold('STUCK')
      : e.verdict === 'attention' || e.verdict === 'late' || e.verdict === 'expired'
        ? c.yellow.bold(e.verdict.toUpperCase())
        : c.green.bold(e.verdict.toUpperCase())
  ctx.out(`\n${c.dim('verdict')}  ${head}  ${e.summary}`)
  for (const f of e.findings) {
    ctx.out(`  ${sev(ctx, f)} ${c.dim(`[${f.code}]`)} ${f.message}`)
    if (f.fix) ctx.out(`    ${c.dim('→')} ${f.fix}`)
  }
}

export function printChat(ctx: Context, data: { chat: ChatView; explain?: Explanation }): void {
  const { c } = ctx
  const v = data.chat
  const kv = (k: string, val: string | number) => ctx.out(`${c.dim(k.padEnd(16))}${val}`)
  kv('chat', c.bold(cell(v.key)))
  const h = v.holder
  if (h) {
    kv(
      'holder',
      `${h.replicaId} ${c.dim(h.incarnation)} ${h.alive ? c.green('alive') : c.red(h.status === 'stale' ? 'restarted (stale incarnation)' : 'no heartbeat')}`,
    )
    kv(
      'ticket',
      h.ticket +
        (h.offered ? c.yellow(' offered, not taken up yet (its replica may be using it; lapses with the lease unless renewed)') : ''),
    )
    kv('fence', v.fence ?? '-')
    kv(
      'lease left',
      (v.expiresInMs ?? 0) <= 0
        ? c.red(`${leftMs(v.expiresInMs)}: not held, the next waiter's poll or the next message takes the turn`)
        : leftMs(v.expiresInMs),
    )
    kv('held for', `${dur(h.heldForMs)} (waited ${dur(h.waitedMs)} for it)`)
    kv('renewed', renewedText(c, v.holderState, h.lastRenewalAgoMs, h.renewMs))
  } else {
    kv('holder', c.dim('(none)'))
    kv('fence', v.fence ?? '-')
  }
  // Two different people: who held the turn before this grant, and (when nobody holds it) who held it last.
  if (h) {
    kv(
      'held before by',
      v.previousHolder
        ? `${cell(v.previousHolder.replicaId)} ${c.dim(cell(v.previousHolder.incarnation))} ${c.dim('(the holder before this grant)')}`
        : c.dim('(nobody: a new chat, or idle long enough to be forgotten)'),
    )
  } else {
    kv('last held by', v.lastHolder ? `${cell(v.lastHolder.replicaId)} ${c.dim(cell(v.lastHolder.incarnation))}` : c.dim('(nobody yet)'))
  }
  kv('tickets', `last issued ${v.lastTicket}, ${v.skippedTickets} dead skipped`)
  if (v.tickets.length) {
    const capped = v.tickets.length < v.queueLength
    ctx.out(
      `\n${c.dim(`queue (${v.queueLength}, in grant order${capped ? `; showing the first ${v.tickets.length} of ${v.queueLength}: --tickets <n> for more, up to ${MAX_INSPECT_TICKETS}` : ''})`)}`,
    )
    ctx.out(
      table(
        ['TICKET', 'REPLICA', 'INCARNATION', 'STATE', 'WAITED', 'DEADLINE'].map((x) => c.dim(x)),
        v.tickets.map((t) => [
          t.ticket,
          t.replicaId,
          t.incarnation.slice(0, 8),
          t.alive ? c.green('alive') : c.red(t.state),
          dur(t.waitedMs),
          leftMs(t.deadlineInMs),
        ]),
      ),
    )
  } else if (v.queueLength > 0) ctx.out(`${c.dim('queue'.padEnd(16))}${v.queueLength} queued, none of the first read`)
  else ctx.out(`${c.dim('queue'.padEnd(16))}${c.dim('(empty)')}`)
  ctx.out('')
  if (v.checkpoint) formatCheckpoint(ctx, v.checkpoint)
  else kv('checkpoint', c.dim('(none)'))
  if (v.handover) {
    const m = v.handover
    kv(
      'handover',
      `${c.bold(m.name)} by ${m.replicaId} ${c.dim(m.incarnation.slice(0, 8))} ${m.ownerAlive ? c.green('alive') : c.red('gone')}, waiting ${dur(m.waitingForMs)}`,
    )
  } else kv('handover', c.dim('(none)'))
  if (data.explain) printExplanation(ctx, data.explain)
}

export function chatInspect(): Command {
  const cmd = new Command('inspect')
    .alias('show')
    .description(
      'one chat whole: holder, fence, previous holder, queue tickets, checkpoint, handover marker; --explain says why it is stuck',
    )
    .argument(
      '<key>',
      'the chat key exactly as the runtime passed it to acquireTurn (e.g. chat:42)',
      nameArg(NAME_KINDS.chatRead, 'a chat'),
    )
    .option('--explain', 'a verdict: stuck or not, and why (dead holder, dead head ticket, checkpoint fences, …) with the fix')
  fingerprintOptions(cmd, true)
  return cmd
    .addOption(
      durationOption('--turn-wait <duration>', "the runtime's turnWaitMs, for the slow-holder check", {
        min: 1,
        default: formatDuration(DEFAULTS.turnWaitMs),
      }),
    )
    .option(
      '--tickets <n>',
      `tickets read and shown from the head of the queue (default ${INSPECT_TICKETS}, at most ${MAX_INSPECT_TICKETS}): a long queue is never read whole`,
      (v: string) => {
        const n = Number(v)
        if (!Number.isSafeInteger(n) || n < 1 || n > MAX_INSPECT_TICKETS)
          throw new InvalidArgumentError(`a whole number from 1 to ${MAX_INSPECT_TICKETS}`)
        return n
      },
    )
    .addHelpText(
      'after',
      examples(
        'botmesh-coord --prefix shop chat inspect chat:42',
        "botmesh-coord --prefix shop chat inspect 'group:7:user:9' --explain",
        'botmesh-coord --prefix shop chat inspect chat:42 --fingerprint order=3f9a1c --json',
      ),
    )
    .action(
      run(
        async (ctx, key: string, o: InspectOptions) => {
          const data = await collectChat(ctx, key, o)
          printOne(ctx, 'chat', data, `chat/${key}`, (safe) => printChat(ctx, safe))
          printCorrupt(ctx, data.corrupt)
        },
        { readsWithCheck: true },
      ),
    )
}
