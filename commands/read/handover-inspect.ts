import { Command } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import { handoverView, shellWord, type HandoverView } from '../lib.js'
import { cell, printOne } from '../output/format.js'
import { jsonText } from '../output/safe-text.js'
import { agoMs, dur } from '../output/time.js'
import { notFound } from '../output/errors.js'
import { leftOut } from '../snapshot/from.js'
import { examples, printCorrupt } from './common.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

/** Collect: the marker (with its TTL, one round trip in the chat's slot) and the live replicas. */
export async function collectHandover(ctx: Context, key: string) {
  const [detail, replicas] = await Promise.all([ctx.reader.chat(key), ctx.reader.liveReplicas()])
  if (!detail.handover) throw notFound(`no handover marker for "${key}" under prefix ${ctx.keys.prefix}`)
  const handover = handoverView(detail.handover, detail.nowMs, replicas.items, detail.handoverTtlMs)
  // From a snapshot taken without --include-state: the marker's data is not in the file.
  const omitted = leftOut(ctx.reader.source, ctx.keys.chat(key).handover)
  return {
    nowMs: detail.nowMs,
    handover,
    chatFence: detail.chat?.fence ?? null,
    ...(omitted ? { leftOutOfSnapshot: ['data'] } : {}),
    corrupt: replicas.corrupt,
  }
}

const STATUS_TEXT = { alive: 'alive', dead: 'no heartbeat', stale: 'restarted (stale incarnation)' } as const

/** `m` is the marker shown escaped (printOne's safe body); `data` its data as JSON text (jsonText of the raw data). */
export function printHandover(ctx: Context, m: HandoverView, data: string, leftOutOfSnapshot = false): void {
  const { c } = ctx
  const kv = (k: string, val: string | number) => ctx.out(`${c.dim(k.padEnd(16))}${val}`)
  kv('chat', c.bold(cell(m.key)))
  kv('conversation', c.bold(cell(m.name)))
  kv('owner', `${cell(m.replicaId)} ${c.dim(cell(m.incarnation))} ${m.ownerAlive ? c.green('alive') : c.red(STATUS_TEXT[m.ownerStatus])}`)
  kv('waiting since', agoMs(m.waitingForMs))
  kv('updated', agoMs(m.updatedAgoMs))
  kv('expires in', m.expiresInMs === null ? c.dim('no TTL: stays until taken or removed') : dur(m.expiresInMs))
  kv(
    'data',
    leftOutOfSnapshot
      ? c.dim('(not in the snapshot: it was taken without --include-state)')
      : m.dataBytes
        ? `${m.dataBytes} bytes ${data}`
        : c.dim('(none)'),
  )
  kv('next owner', m.next)
  kv('remove', c.dim(ctx.cmdline(`botmesh-coord handover rm ${shellWord(m.key)} --if-incarnation ${m.incarnation}`)))
}

export function handoverInspect(): Command {
  return new Command('inspect')
    .alias('show')
    .description(
      'one handover marker whole: conversation, owner and whether it is alive, waiting since, TTL, data size, what the next owner will do',
    )
    .argument('<key>', 'the chat key the marker belongs to (as the runtime passed it)', nameArg(NAME_KINDS.handover, 'a handover marker'))
    .addHelpText(
      'after',
      examples('botmesh-coord --prefix shop handover inspect chat:7', 'botmesh-coord --prefix shop handover inspect chat:7 -o json'),
    )
    .action(
      run(async (ctx, key: string) => {
        const data = await collectHandover(ctx, key)
        printOne(ctx, 'handover', data, `handover/${key}`, (safe) =>
          printHandover(ctx, safe.handover, jsonText(data.handover.data), data.leftOutOfSnapshot !== undefined),
        )
        printCorrupt(ctx, data.corrupt)
      }),
    )
}
