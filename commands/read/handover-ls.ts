import { Command } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import { handoverRows } from '../lib.js'
import { jsonOut } from '../output/json.js'
import { table } from '../output/table.js'
import { agoMs, dur } from '../output/time.js'
import { progress } from '../output/progress.js'
import { examples, limitOption, nowAndReplicas, printCorrupt, scanInfo } from './common.js'

export async function collectHandovers(ctx: Context, o: { limit?: number }) {
  const [{ nowMs, replicas }, markers] = await Promise.all([
    nowAndReplicas(ctx),
    ctx.reader.handovers({ limit: o.limit, onProgress: progress(ctx, 'handover markers') }),
  ])
  return { nowMs, handovers: handoverRows(markers.items, replicas.items, nowMs), ...scanInfo(replicas, markers) }
}

export function handoverLs(): Command {
  return new Command('ls')
    .alias('list')
    .description('handover markers of async conversations waiting for an answer: chat, conversation, owner, waiting since')
    .addOption(limitOption())
    .addHelpText('after', examples('botmesh-coord --prefix shop handover ls', 'botmesh-coord --prefix shop handover ls --json'))
    .action(
      run(async (ctx, o: { limit?: number }) => {
        const data = await collectHandovers(ctx, o)
        const { c } = ctx
        if (ctx.json) ctx.out(jsonOut('handovers', data))
        else if (data.handovers.length === 0) ctx.out(c.dim(`no handover markers under prefix ${ctx.keys.prefix}`))
        else
          ctx.out(
            table(
              ['CHAT', 'CONVERSATION', 'OWNER', 'INCARNATION', 'ALIVE', 'WAITING', 'UPDATED'].map((h) => c.dim(h)),
              data.handovers.map((r) => [
                c.bold(r.key),
                r.name,
                r.replicaId,
                r.incarnation.slice(0, 8),
                r.ownerAlive ? c.green('yes') : c.yellow('no: the next owner applies the fallback'),
                dur(r.waitingForMs),
                agoMs(r.updatedAgoMs),
              ]),
            ),
          )
        if (!ctx.json) printCorrupt(ctx, data.corrupt)
      }),
    )
}
