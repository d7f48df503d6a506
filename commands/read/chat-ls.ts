import { Command } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import { chatRows, type ChatRow } from '../lib.js'
import { jsonOut } from '../output/json.js'
import { table } from '../output/table.js'
import { dur, leftMs } from '../output/time.js'
import { progress } from '../output/progress.js'
import { examples, limitOption, nowAndReplicas, printScanNotes, scanInfo } from './common.js'

interface ChatLsOptions {
  waiting?: boolean
  replica?: string
  limit?: number
}

/** Collect: chats with a holder or a queue (idle chats only remember their last holder and fence). */
export async function collectChats(ctx: Context, o: ChatLsOptions) {
  const [{ nowMs, replicas }, chats] = await Promise.all([
    nowAndReplicas(ctx),
    ctx.reader.chats({ limit: o.limit, onProgress: progress(ctx, 'chats') }),
  ])
  const rows = chatRows(chats.items, replicas.items, nowMs).filter(
    (r) => (!o.waiting || r.queueLength > 0) && (o.replica === undefined || r.replicaId === o.replica),
  )
  return { nowMs, chats: rows, ...scanInfo(replicas, chats) }
}

export function printChats(ctx: Context, data: Awaited<ReturnType<typeof collectChats>>): void {
  const { c } = ctx
  if (data.chats.length === 0) ctx.out(c.dim(`no chat holds a turn or has a queue under prefix ${ctx.keys.prefix}`))
  else
    ctx.out(
      table(
        ['CHAT', 'HOLDER', 'INCARNATION', 'FENCE', 'EXPIRES IN', 'HELD FOR', 'QUEUE', 'OLDEST WAIT', 'STALE'].map((h) => c.dim(h)),
        data.chats.map((r: ChatRow) => [
          c.bold(r.key),
          r.replicaId === null ? c.yellow('(none)') : r.holderAlive ? r.replicaId : c.red(`${r.replicaId} (dead)`),
          r.incarnation?.slice(0, 8) ?? '-',
          r.fence ?? '-',
          r.expiresInMs !== null && r.expiresInMs <= 0 ? c.red(leftMs(r.expiresInMs)) : leftMs(r.expiresInMs),
          dur(r.heldForMs),
          r.queueLength,
          r.oldestWaitMs !== null && r.oldestWaitMs > 10_000 ? c.yellow(dur(r.oldestWaitMs)) : dur(r.oldestWaitMs),
          r.staleTickets ? c.red(String(r.staleTickets)) : '0',
        ]),
      ),
    )
  printScanNotes(ctx, data)
}

export function chatLs(): Command {
  return new Command('ls')
    .alias('list')
    .description('chats with a holder or a queue: holder, fence, time left, queue length, oldest wait')
    .option('--waiting', 'only chats with queued tickets')
    .option('--replica <replicaId>', 'only chats whose turn this replica holds')
    .addOption(limitOption())
    .addHelpText('after', examples('botmesh-coord --prefix shop chat ls', 'botmesh-coord --prefix shop chat ls --waiting --json'))
    .action(
      run(async (ctx, o: ChatLsOptions) => {
        const data = await collectChats(ctx, o)
        if (ctx.json) ctx.out(jsonOut('chats', data))
        else printChats(ctx, data)
      }),
    )
}
