import type { Command } from 'commander'
import type { Context } from '../context.js'
import { chatRowMaker, type ChatRow } from '../lib.js'
import { cell, type KindView } from '../output/format.js'
import { dur, leftMs, renewedText } from '../output/time.js'
import { progress } from '../output/progress.js'
import { byNumber, byNumberDesc, byText, limitOption, listingCommand, nowAndReplicas, type ListingFlags } from './common.js'
import { drain, rowStream, type RowStream } from './listing-stream.js'

interface ChatLsOptions {
  waiting?: boolean
  all?: boolean
}

/**
 * Chats with a holder or a queue (with --all, idle chats too: they only remember their last holder
 * and fence), as the scan reads them. The live replicas and the clock are read first, so that each
 * batch of the scan becomes rows as it arrives (while Redis reads the next ones).
 */
export async function streamChats(ctx: Context, o: ChatLsOptions & Partial<ListingFlags>): Promise<RowStream<ChatRow>> {
  const { nowMs, replicas } = await nowAndReplicas(ctx)
  const row = chatRowMaker(replicas.items, nowMs, { all: o.all })
  const d = ctx.io.LISTING_DECODERS
  const listed = ctx.reader.listStream(
    { chat: (...a: Parameters<typeof d.chat>) => row(d.chat(...a)) },
    { limit: o.limit, onProgress: progress(ctx, 'chats') },
  )
  const rows = (items: Array<{ value: ChatRow }>) => items.map((i) => i.value).filter((r) => !o.waiting || r.queueLength > 0)
  return rowStream(nowMs, listed, rows, [replicas])
}

function chatsView(ctx: Context): KindView<ChatRow> {
  const { c } = ctx
  return {
    list: 'chats',
    name: (r) => `chat/${r.key}`,
    empty: `no chat holds a turn or has a queue under prefix ${ctx.keys.prefix}`,
    columns: [
      { header: 'CHAT', value: (r) => c.bold(cell(r.key)) },
      {
        header: 'HOLDER',
        value: (r) =>
          r.replicaId === null
            ? c.yellow('(none)')
            : r.holderState === 'late'
              ? c.yellow(`${cell(r.replicaId)} (late)`)
              : r.holderAlive
                ? cell(r.replicaId)
                : c.red(`${cell(r.replicaId)} (dead)`),
      },
      { header: 'INCARNATION', value: (r) => cell(r.incarnation?.slice(0, 8)) },
      { header: 'FENCE', value: (r) => r.fence ?? '-' },
      {
        header: 'EXPIRES IN',
        value: (r) => (r.expiresInMs !== null && r.expiresInMs <= 0 ? c.red(leftMs(r.expiresInMs)) : leftMs(r.expiresInMs)),
      },
      { header: 'RENEWED', value: (r) => renewedText(c, r.holderState, r.lastRenewalAgoMs, null) },
      { header: 'HELD FOR', value: (r) => dur(r.heldForMs) },
      { header: 'QUEUE', value: (r) => r.queueLength },
      {
        header: 'OLDEST WAIT',
        value: (r) => (r.oldestWaitMs !== null && r.oldestWaitMs > 10_000 ? c.yellow(dur(r.oldestWaitMs)) : dur(r.oldestWaitMs)),
      },
      {
        header: 'STALE',
        // Counted on the head of a long queue only: the cell says how far it looked.
        value: (r) => {
          const n = String(r.staleTickets) + (r.ticketsRead < r.queueLength ? ` in first ${r.ticketsRead}` : '')
          return r.staleTickets ? c.red(n) : n
        },
      },
      {
        header: 'STATE',
        value: (r) =>
          r.state === 'stuck'
            ? c.red(r.state)
            : r.state === 'late' || r.state === 'expired' || r.state === 'attention'
              ? c.yellow(r.state)
              : r.state,
      },
    ],
  }
}

export function chatLs(): Command {
  return listingCommand<ChatRow, ChatLsOptions>({
    name: 'ls',
    description: 'chats with a holder or a queue: holder, fence, time left, queue length, oldest wait (--all: idle chats too)',
    examples: [
      'botmesh-coord --prefix shop chat ls',
      'botmesh-coord --prefix shop chat ls --waiting -o json',
      'botmesh-coord --prefix shop chat ls --all --sort key -o name',
    ],
    view: chatsView,
    sorts: {
      wait: (a, b) => byNumberDesc<ChatRow>((r) => r.oldestWaitMs)(a, b) || byText<ChatRow>((r) => r.key)(a, b),
      key: byText((r) => r.key),
      holder: byText((r) => r.replicaId),
      fence: byNumber((r) => r.fence),
      expires: byNumber((r) => r.expiresInMs),
      held: byNumberDesc((r) => r.heldForMs),
      queue: byNumberDesc((r) => r.queueLength),
      stale: byNumberDesc((r) => r.staleTickets),
    },
    replicasOf: (r) => [r.replicaId],
    options: (cmd) =>
      cmd
        .option('--waiting', 'only chats with queued tickets')
        .option('--all', 'also idle chats (no holder, no queue: they remember their last holder and fence)')
        .addOption(limitOption()),
    collect: async (ctx, o) => drain(await streamChats(ctx, o)),
    stream: streamChats,
  })
}
