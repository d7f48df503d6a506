import { Command, Option } from 'commander'
import type { Context } from '../context.js'
import { formatDuration, INSPECT_TICKETS, leaseHealth, nextGrant, shellWord, TURN_WORDS, ticketState } from '../lib.js'
import { conflict, notFound } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { ago, left } from '../output/time.js'
import { changed, holderWords, liveAt, parseFence, parsePositive, withWriteOptions, writeAction, type Plan } from './common.js'
import { NAME_KINDS, nameArg } from '../output/names.js'

export async function planChatRelease(ctx: Context, key: string, flags: { ifFence?: string; reason?: string }): Promise<Plan> {
  const ifFence = parseFence(flags.ifFence)
  const { chat, checkpoint, nowMs } = await ctx.reader.chat(key)
  // A pin that no longer matches is a change since the operator looked, held or not now.
  if (chat && ifFence !== null && chat.fence !== ifFence) {
    throw conflict(
      `the state changed since you looked: chat ${key} is at fence ${chat.fence}, not ${ifFence} (${heldNow(chat.holder)}); nothing done`,
    )
  }
  if (!chat || !chat.holder) throw notFound(`chat ${key} has no holder (fence ${chat?.fence ?? '-'}): nothing to release`)
  const h = chat.holder
  const health = leaseHealth(h, await liveAt(ctx, nowMs), nowMs, TURN_WORDS)
  const next = nextGrant(chat, nowMs, { revokeHolder: true })
  const { c } = ctx
  const lines = [
    `holder   ${c.bold(h.replicaId)} (incarnation ${h.incarnation.slice(0, 8)}, ${holderWords(c, health)}), ticket ${h.ticket}, granted ${ago(h.grantedAtMs, nowMs)}, lease ${h.expiresAtMs > nowMs ? `left ${left(h.expiresAtMs, nowMs)}` : c.red(left(h.expiresAtMs, nowMs))}`,
    ...(health.state === 'ok' ? [] : [`state    ${health.reason}`]),
    `fence    ${chat.fence} → bumped: the holder's next renewal (within its leaseMs / 3) answers 'revoked' and its assertHeld() throws; its fenced checkpoint writes are refused`,
    next
      ? `next     ticket ${next.ticket} of ${c.bold(next.replicaId)} (waiting ${formatDuration(nowMs - next.enqueuedAtMs)}) is granted at once, with a higher fence`
      : `next     no live ticket is queued: the chat becomes free`,
    `queue    ${chat.queued} ticket(s)`,
  ]
  if (checkpoint) {
    lines.push(`checkpoint revision ${checkpoint.revision} (${checkpoint.flow}/${checkpoint.step}) stays for the next holder`)
  }
  const expected = { fence: chat.fence, holder: { replicaId: h.replicaId, incarnation: h.incarnation } }
  return {
    title: `release the turn of ${key}`,
    command: `chat release ${key} --if-fence ${chat.fence}`,
    inspect: `chat inspect ${shellWord(key)}`,
    lines,
    warnings:
      health.state === 'ok' || health.state === 'late'
        ? [`${h.replicaId} is alive and its lease is current: it may be in the middle of a reply that will now be cut off`]
        : [],
    json: { action: 'chat-release', key, expected, next: next ? { ticket: next.ticket, replicaId: next.replicaId } : null },
    execute: async () => {
      const r = await ctx.admin.releaseChat(key, {
        ifFence: chat.fence,
        ifIncarnation: h.incarnation,
        reason: flags.reason,
        command: `chat release ${key} --if-fence ${chat.fence}`,
      })
      const json = { action: 'chat-release', ...stripAudit(r) }
      if (r.status === 'released') {
        return {
          code: EXIT.ok,
          audit: r.audit,
          json,
          lines: [
            `released ${key}: ${r.holder.replicaId} revoked, fence ${r.fenceBefore} → ${r.fenceAfter}`,
            r.granted
              ? `ticket ${r.granted.ticket} of ${r.granted.replicaId} holds the turn now (fence ${r.granted.fence})`
              : 'no live ticket was waiting: the chat is free',
          ],
        }
      }
      if (r.status === 'not-held') return changed(`${key} has no holder any more (fence ${r.fence})`, json, r.audit)
      return changed(
        `${key} is held by ${r.holder ? `${r.holder.replicaId} (incarnation ${r.holder.incarnation.slice(0, 8)})` : 'nobody'} at fence ${r.fence}, not ${h.replicaId} at fence ${chat.fence} (what this release was pinned to)`,
        json,
        r.audit,
      )
    },
  }
}

export async function planChatSkip(
  ctx: Context,
  key: string,
  ticketArg: string,
  flags: { ifFence?: string; reason?: string },
): Promise<Plan> {
  const ticket = parsePositive(ticketArg, 'ticket')
  const ifFence = parseFence(flags.ifFence)
  const { chat, nowMs } = await ctx.reader.chat(key, { ticket })
  if (!chat) throw notFound(`chat ${key} does not exist: nothing to skip`)
  if (ifFence !== null && chat.fence !== ifFence) {
    throw conflict(
      `the state changed since you looked: chat ${key} is at fence ${chat.fence}, not ${ifFence} (${heldNow(chat.holder)}); nothing done`,
    )
  }
  if (chat.holder?.ticket === ticket) {
    throw conflict(
      `ticket ${ticket} of ${key} holds the turn now (${chat.holder.replicaId}, fence ${chat.fence}): use chat release ${key}; nothing done`,
    )
  }
  const t = chat.tickets.find((x) => x.ticket === ticket)
  if (!t)
    throw notFound(
      `ticket ${ticket} is not queued in ${key} (queued: ${chat.tickets.map((x) => x.ticket).join(', ') || 'none'}${chat.queued > chat.tickets.length ? `, … ${chat.queued} in all` : ''})`,
    )
  const state = ticketState(t, await liveAt(ctx, nowMs), nowMs)
  const isAlive = state === 'alive' || state === 'expired'
  const head = chat.tickets[0]?.ticket === ticket
  const after = nextGrant(chat, nowMs, { except: ticket })
  const { c } = ctx
  const lines = [
    `ticket   ${ticket} of ${c.bold(t.replicaId)} (incarnation ${t.incarnation.slice(0, 8)}, ${isAlive ? c.green('alive') : c.red('no heartbeat')}), queued ${ago(t.enqueuedAtMs, nowMs)}, ${t.deadlineMs > nowMs ? `refreshed, deadline in ${left(t.deadlineMs, nowMs)}` : c.red('not refreshed: dead')}`,
    `position ${chat.tickets.indexOf(t) + 1 <= INSPECT_TICKETS ? `${chat.tickets.indexOf(t) + 1} of ${chat.queued}` : `past the first ${INSPECT_TICKETS} of ${chat.queued}`}${head ? ' (head)' : ''}`,
    `holder   ${chat.holder ? `${chat.holder.replicaId}, fence ${chat.fence} (stays)` : `none (fence ${chat.fence ?? '-'})`}`,
    isAlive
      ? `then     its replica's waiting acquireTurn rejects with CoordinationUnavailableError (reason 'dropped')`
      : `then     the ticket is gone`,
    after ? `next     ticket ${after.ticket} of ${after.replicaId} is granted at once` : `next     the queue goes on in order`,
  ]
  return {
    title: `drop ticket ${ticket} from ${key}`,
    command: `chat skip ${key} ${ticket}`,
    inspect: `chat inspect ${shellWord(key)}`,
    lines,
    warnings:
      isAlive && t.deadlineMs > nowMs ? [`${t.replicaId} is alive and still waiting: the message it waits for will not be processed`] : [],
    json: { action: 'chat-skip', key, ticket, expected: { incarnation: t.incarnation, replicaId: t.replicaId, fence: chat.fence } },
    execute: async () => {
      const r = await ctx.admin.skipTicket(key, ticket, {
        ifIncarnation: t.incarnation,
        ifFence: ifFence,
        reason: flags.reason,
        command: `chat skip ${key} ${ticket}`,
      })
      const json = { action: 'chat-skip', ...stripAudit(r) }
      switch (r.status) {
        case 'skipped':
          return {
            code: EXIT.ok,
            audit: r.audit,
            json,
            lines: [
              `dropped ticket ${ticket} of ${r.replicaId} from ${key}`,
              ...(r.granted ? [`ticket ${r.granted.ticket} of ${r.granted.replicaId} holds the turn now (fence ${r.granted.fence})`] : []),
            ],
          }
        case 'not-queued':
          return changed(`ticket ${ticket} is no longer queued in ${key}`, json, r.audit)
        case 'holds-turn':
          return changed(
            `ticket ${ticket} holds the turn of ${key} now (${r.replicaId}, fence ${r.fence}): use chat release`,
            json,
            r.audit,
          )
        case 'fence-changed':
          return changed(`${key} is at fence ${r.fence}, not ${ifFence}`, json, r.audit)
        default:
          return changed(
            `ticket ${ticket} of ${key} belongs to ${r.replicaId} (incarnation ${r.incarnation.slice(0, 8)}) now`,
            json,
            r.audit,
          )
      }
    },
  }
}

/** Who holds a key now, for a conflict line. */
export function heldNow(h: { replicaId: string; incarnation: string } | null | undefined): string {
  return h ? `held now by ${h.replicaId}, incarnation ${h.incarnation.slice(0, 8)}` : 'nobody holds it now'
}

export function stripAudit<T extends { audit?: unknown }>(r: T): Omit<T, 'audit'> {
  const { audit: _audit, ...rest } = r
  return rest
}

export function chatRelease(): Command {
  return withWriteOptions(
    new Command('release')
      .description('revoke the holder of a stuck chat: fence bumped (the old holder is fenced out), the next ticket granted')
      .argument('<key>', 'the chat key as given to acquireTurn, e.g. chat:42', nameArg(NAME_KINDS.chat, 'a chat'))
      .addOption(new Option('--if-fence <fence>', 'only if the chat is still at this fence (what you saw)')),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  botmesh-coord --prefix shop chat release chat:42 --dry-run\n  botmesh-coord --prefix shop chat release chat:42 --if-fence 1767225600000123 --reason "stuck after deploy" --yes',
    )
    .action(
      writeAction('chat release', (ctx, flags, key: string) => planChatRelease(ctx, key, flags as { ifFence?: string; reason?: string })),
    )
}

export function chatSkip(): Command {
  return withWriteOptions(
    new Command('skip')
      .description("drop one ticket from a chat's queue (a dead replica's ticket blocking the head, say)")
      .argument('<key>', 'the chat key', nameArg(NAME_KINDS.chat, 'a chat'))
      .argument('<ticket>', 'the ticket number (chat inspect shows them)')
      .addOption(new Option('--if-fence <fence>', 'only if the chat is still at this fence')),
  )
    .addHelpText(
      'after',
      '\nExample:\n  botmesh-coord --prefix shop chat skip chat:42 17 --if-fence 1767225600000123 --reason "ticket of a dead pod" --yes',
    )
    .action(
      writeAction('chat skip', (ctx, flags, key: string, ticket: string) =>
        planChatSkip(ctx, key, ticket, flags as { ifFence?: string; reason?: string }),
      ),
    )
}
