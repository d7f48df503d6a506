import type { Command } from 'commander'
import type { Context } from '../context.js'
import { handoverRows, type HandoverMarker, type HandoverRow } from '../lib.js'
import { cell, type KindView } from '../output/format.js'
import { agoMs, dur } from '../output/time.js'
import { progress } from '../output/progress.js'
import { byNumberDesc, byText, limitOption, listingCommand, nowAndReplicas } from './common.js'
import { drain, rowStream, type RowStream } from './listing-stream.js'

/** Handover markers, as the scan reads them (the live replicas and the clock first). */
export async function streamHandovers(ctx: Context, o: { limit?: number }): Promise<RowStream<HandoverRow>> {
  const { nowMs, replicas } = await nowAndReplicas(ctx)
  const listed = ctx.reader.listStream(
    { handover: ctx.io.LISTING_DECODERS.handover },
    { limit: o.limit, onProgress: progress(ctx, 'handover markers') },
  )
  const rows = (items: Array<{ value: HandoverMarker }>) =>
    handoverRows(
      items.map((i) => i.value),
      replicas.items,
      nowMs,
    )
  return rowStream(nowMs, listed, rows, [replicas])
}

function handoversView(ctx: Context): KindView<HandoverRow> {
  const { c } = ctx
  return {
    list: 'handovers',
    name: (r) => `handover/${r.key}`,
    empty: `no handover markers under prefix ${ctx.keys.prefix}`,
    columns: [
      { header: 'CHAT', value: (r) => c.bold(cell(r.key)) },
      { header: 'CONVERSATION', value: (r) => cell(r.name) },
      { header: 'OWNER', value: (r) => cell(r.replicaId) },
      { header: 'INCARNATION', value: (r) => cell(r.incarnation.slice(0, 8)) },
      { header: 'ALIVE', value: (r) => (r.ownerAlive ? c.green('yes') : c.yellow('no: the next owner applies the fallback')) },
      { header: 'WAITING', value: (r) => dur(r.waitingForMs) },
      { header: 'UPDATED', value: (r) => agoMs(r.updatedAgoMs) },
    ],
  }
}

export function handoverLs(): Command {
  return listingCommand<HandoverRow, { limit?: number }>({
    name: 'ls',
    description: 'handover markers of async conversations waiting for an answer: chat, conversation, owner, waiting since',
    examples: ['botmesh-coord --prefix shop handover ls', 'botmesh-coord --prefix shop handover ls --sort waiting -o json'],
    view: handoversView,
    sorts: {
      chat: byText((r) => r.key),
      conversation: byText((r) => r.name),
      owner: byText((r) => r.replicaId),
      waiting: byNumberDesc((r) => r.waitingForMs),
    },
    replicasOf: (r) => [r.replicaId],
    options: (cmd) => cmd.addOption(limitOption()),
    collect: async (ctx, o) => drain(await streamHandovers(ctx, o)),
    stream: streamHandovers,
  })
}
