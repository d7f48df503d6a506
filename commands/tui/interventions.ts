/**
 * The dashboard's `y` / `r` / `s` / `h` / `e` keys call the same operator interventions as the CLI's
 * `provider yield`, `chat release`, `chat skip`, `handover rm` and `checkpoint extend`
 * (CoordinationAdmin), with the same conditions: `--if-fence` set to the fence the operator saw (and
 * the holder's / ticket's incarnation, as the CLI passes them), the marker's incarnation and wait, the
 * checkpoint's revision — so nothing is done when the state changed since. Each writes the same audit
 * record. This adapter only turns their typed results into one line for the status bar.
 */
import { formatDuration, type CoordinationAdmin } from '../lib.js'
import { fenceText } from './text.js'

export interface ActionOutcome {
  ok: boolean
  text: string
}

export interface Interventions {
  yieldProvider(name: string, o: { ifFence: number | null; command: string }): Promise<ActionOutcome>
  releaseChat(key: string, o: { ifFence: number | null; ifIncarnation: string | null; command: string }): Promise<ActionOutcome>
  skipTicket(key: string, ticket: number, o: { ifFence: number | null; ifIncarnation: string; command: string }): Promise<ActionOutcome>
  removeHandover(key: string, o: { ifIncarnation: string; ifSince: number; command: string }): Promise<ActionOutcome>
  extendCheckpoint(key: string, o: { ifRevision: number; ttlMs: number; command: string }): Promise<ActionOutcome>
}

/** How long `e` makes a checkpoint last (from Redis's now). */
export const EXTEND_TTL_MS = 3_600_000

/** What the CLI would run for the same action (shown in the confirmation line, recorded in the audit). */
export const cliEquivalent = {
  yield: (name: string, fence: number | null) => `provider yield ${name}${fence !== null ? ` --if-fence ${fence}` : ''}`,
  release: (key: string, fence: number | null) => `chat release ${key}${fence !== null ? ` --if-fence ${fence}` : ''}`,
  skip: (key: string, ticket: number, fence: number | null) => `chat skip ${key} ${ticket}${fence !== null ? ` --if-fence ${fence}` : ''}`,
  handoverRm: (key: string, incarnation: string) => `handover rm ${key} --if-incarnation ${incarnation}`,
  extend: (key: string, revision: number) => `checkpoint extend ${key} --ttl ${formatDuration(EXTEND_TTL_MS)} --if-revision ${revision}`,
}

/** Recorded as the audit record's reason. */
export const REASON = 'from botmesh-coord watch'

type Admin = Pick<CoordinationAdmin, 'requestYield' | 'releaseChat' | 'skipTicket' | 'removeHandover' | 'extendCheckpoint'>

const nothing = (why: string): ActionOutcome => ({ ok: false, text: `nothing done: ${why}` })

/** The interventions of a CoordinationAdmin (the same object the CLI's write commands use). */
export function adminInterventions(admin: Admin): Interventions {
  return {
    async yieldProvider(name, o) {
      const r = await admin.requestYield(name, { ifFence: o.ifFence, command: o.command, reason: REASON, audit: true })
      switch (r.status) {
        case 'requested':
          return { ok: true, text: `asked ${r.leader.replicaId} to yield ${name} (fence ${r.fence}); a standby takes over` }
        case 'no-leader':
          return nothing(`nobody leads ${name} any more`)
        case 'fence-changed':
          return nothing(`${name} is at fence ${r.fence} now, not ${fenceText(o.ifFence)}`)
        default:
          return nothing('the target stopped standing')
      }
    },
    async releaseChat(key, o) {
      const r = await admin.releaseChat(key, { ifFence: o.ifFence, ifIncarnation: o.ifIncarnation, command: o.command, reason: REASON })
      switch (r.status) {
        case 'released':
          return {
            ok: true,
            text: `released ${key} from ${r.holder.replicaId}: fence ${r.fenceBefore ?? '-'} → ${r.fenceAfter}${
              r.granted ? `; granted to ${r.granted.replicaId} (ticket ${r.granted.ticket}, fence ${r.granted.fence})` : ''
            }`,
          }
        case 'not-held':
          return nothing(`${key} is not held any more`)
        default:
          return nothing(
            `${key} is held by ${r.holder?.replicaId ?? 'nobody'} at fence ${r.fence ?? '-'} now, not at ${fenceText(o.ifFence)}`,
          )
      }
    },
    async skipTicket(key, ticket, o) {
      const r = await admin.skipTicket(key, ticket, {
        ifFence: o.ifFence,
        ifIncarnation: o.ifIncarnation,
        command: o.command,
        reason: REASON,
      })
      switch (r.status) {
        case 'skipped':
          return {
            ok: true,
            text: `skipped ticket ${ticket} of ${key} (${r.replicaId})${r.granted ? `; granted to ${r.granted.replicaId} (ticket ${r.granted.ticket}, fence ${r.granted.fence})` : ''}`,
          }
        case 'not-queued':
          return nothing(`ticket ${ticket} is not queued in ${key} any more`)
        case 'holds-turn':
          return nothing(`ticket ${ticket} holds the turn now: release the chat instead (r)`)
        case 'fence-changed':
          return nothing(`${key} is at fence ${r.fence ?? '-'} now, not ${fenceText(o.ifFence)}`)
        default:
          return nothing(`ticket ${ticket} belongs to another incarnation now`)
      }
    },
    async removeHandover(key, o) {
      const r = await admin.removeHandover(key, { ifIncarnation: o.ifIncarnation, ifSince: o.ifSince, command: o.command, reason: REASON })
      switch (r.status) {
        case 'removed':
          return { ok: true, text: `removed the handover marker of ${key} (${r.name ?? '?'} by ${r.replicaId ?? '?'}): no fallback` }
        case 'absent':
          return nothing(`${key} has no handover marker any more`)
        default:
          return nothing(`the marker of ${key} was left again by ${r.replicaId ?? '?'} (${(r.incarnation ?? '?').slice(0, 8)}) meanwhile`)
      }
    },
    async extendCheckpoint(key, o) {
      const r = await admin.extendCheckpoint(key, o.ifRevision, o.ttlMs, { command: o.command, reason: REASON })
      switch (r.status) {
        case 'extended':
          return {
            ok: true,
            text: `the checkpoint of ${key} expires in ${formatDuration(o.ttlMs)} now (was ${formatDuration(r.expiresInMsBefore)})`,
          }
        case 'unchanged':
          return { ok: true, text: `the checkpoint of ${key} expires in ${formatDuration(r.expiresInMsBefore)} already: left as it is` }
        case 'absent':
          return nothing(`${key} has no checkpoint any more`)
        case 'persistent':
          return nothing(`the checkpoint of ${key} is persistent: no TTL to extend`)
        default:
          return nothing(`the checkpoint of ${key} is at revision ${r.revision} now, not ${o.ifRevision}`)
      }
    },
  }
}
