/**
 * Events of the stream `P:events` for people: one line per event in the seed's words, shared by
 * `botmesh-coord events` and the dashboard's EVENTS panel. Interventions read as what was run, by
 * whom, with what result and why — never raw JSON.
 */
import { EVENT_TYPES, formatDuration } from '../lib.js'

export type Tone = 'info' | 'good' | 'warn' | 'bad' | 'operator'

/** An event as the CLI's JSON and the dashboard carry it. */
export interface EventRow {
  /** Stream entry id; its first part is Redis's clock (ms) when the entry was added. */
  id: string
  /** Redis ms of the entry (from its id). */
  atMs: number
  type: string
  replicaId: string | null
  incarnation: string | null
  /** The event as the replica (or the CLI's audit trail) wrote it. */
  event: Record<string, unknown>
}

export interface EventLine {
  id: string
  atMs: number
  type: string
  text: string
  tone: Tone
}

/** The Redis ms of a stream entry id (`<ms>-<seq>`). */
export function streamIdMs(id: string): number {
  const n = Number(id.split('-')[0])
  return Number.isFinite(n) ? n : 0
}

export function eventRowOf(e: { id: string; event: Record<string, unknown> }): EventRow {
  return {
    id: e.id,
    atMs: streamIdMs(e.id),
    type: typeof e.event.type === 'string' ? e.event.type : 'unknown',
    replicaId: typeof e.event.replicaId === 'string' ? e.event.replicaId : null,
    incarnation: typeof e.event.incarnation === 'string' ? e.event.incarnation : null,
    event: e.event,
  }
}

const s = (v: unknown): string => (v === undefined || v === null || v === '' ? '' : String(v))
// Quoted, not JSON-encoded: the event reaches this module with its strings already shown escaped
// (printList's and the dashboard's safe copies), so a backslash is part of the shown form.
const q = (v: string) => `"${v.replace(/"/g, '\\"')}"`

/** Fields no line repeats (shown in their own columns, or implied by the type). */
const SHOWN = new Set(['type', 'replicaId', 'incarnation', 'at'])

/** Any other field, as `name=value` words: nested objects flattened (`holder.replicaId=pod-a`), never JSON. */
export function fieldWords(e: Record<string, unknown>, skip: Set<string> = SHOWN, prefix = ''): string[] {
  const out: string[] = []
  for (const [k, v] of Object.entries(e)) {
    if (skip.has(k) || v === null || v === undefined || v === '') continue
    if (typeof v === 'object' && !Array.isArray(v)) out.push(...fieldWords(v as Record<string, unknown>, new Set(), `${prefix}${k}.`))
    else if (Array.isArray(v)) out.push(`${prefix}${k}=${v.map((x) => (typeof x === 'object' ? '…' : String(x))).join(',')}`)
    else {
      const text = String(v)
      out.push(`${prefix}${k}=${/[\s"=]/.test(text) || text === '' ? q(text) : text}`)
    }
  }
  return out
}

/** How an intervention reads: `"chat release chat:42" by ops@host: released, fence 17 → 18, reason "stuck"`. */
function interventionText(e: Record<string, unknown>): string {
  const command = s(e.command) || [s(e.action), s(e.key)].filter(Boolean).join(' ')
  const parts = [`${q(command)}${e.by ? ` by ${s(e.by)}` : ''}`]
  const result = s(e.result) || s(e.status)
  const noop = e.changed === false
  const fences =
    e.fenceBefore !== undefined && e.fenceBefore !== null && e.fenceAfter !== undefined && e.fenceAfter !== e.fenceBefore
      ? `fence ${s(e.fenceBefore)} → ${s(e.fenceAfter)}`
      : ''
  const granted = e.granted && typeof e.granted === 'object' ? s((e.granted as Record<string, unknown>).replicaId) : ''
  const k = e.counts && typeof e.counts === 'object' ? (e.counts as Record<string, unknown>) : null
  // A bulk clean-up's record carries its counts: what was removed of what was listed, what was skipped.
  const counts = k
    ? [
        `${s(k.removed) || 0} of ${s(k.listed) || 0} removed`,
        Number(k.changed) ? `${s(k.changed)} skipped (changed meanwhile)` : '',
        Number(k.absent) ? `${s(k.absent)} gone already` : '',
        Number(k.failed) ? `${s(k.failed)} failed` : '',
      ]
        .filter(Boolean)
        .join(', ')
    : ''
  // Sent without an answer (exit 9): it may have been applied or not; the record says what it was pinned to.
  const said = result === 'unknown' ? `outcome unknown (no answer in time; pinned to fence ${s(e.fenceBefore) || '-'})` : result
  const outcome = [
    noop ? `nothing done (${result || 'no change'})` : k ? '' : said,
    counts,
    result === 'unknown' ? '' : fences,
    granted && `granted to ${granted}`,
    e.wakeRefused ? 'wake-up refused by Redis (ACL): replicas learn it at their next renewal or poll' : '',
  ]
    .filter(Boolean)
    .join(', ')
  return `${parts[0]}: ${outcome || 'done'}${e.reason ? `; reason ${q(s(e.reason))}` : ''}`
}

/** One line per event, in the seed's words. Unknown types still show their fields. */
export function eventLine(id: string, e: Record<string, unknown>): EventLine {
  const type = s(e.type) || 'event'
  const who = s(e.replicaId)
  const atMs = streamIdMs(id) || Number(e.at) || 0
  const reason = s(e.reason)
  const name = s(e.name) || s(e.key)
  let text: string
  let tone: Tone = 'info'
  switch (type) {
    case 'leader':
      text = `${who} leads ${name} (fence ${s(e.fence)}${e.previous ? `, after ${s(e.previous)}` : ''})`
      tone = 'good'
      break
    case 'follower':
      text = `${who} left ${name}: ${reason || 'standby'}`
      tone = reason === 'lost' || reason === 'provider-down' || reason === 'leader-failed' ? 'warn' : 'info'
      break
    case 'lease-lost':
      text = `${who} lost ${s(e.kind) || 'lease'} ${name}: ${reason}`
      tone = 'bad'
      break
    case 'lead-released':
      text = `${who} released ${name}`
      break
    case 'handover':
      text = `handover of ${name}${e.from ? ` from ${s(e.from)}` : ''} to ${who}: ${s(e.outcome)}`
      tone = 'warn'
      break
    case 'replica-start':
      text = `${who} started (${s(e.incarnation).slice(0, 8)})`
      break
    case 'replica-stop':
      text = `${who} stopped`
      break
    case 'server-changed':
      text = `${who} saw Redis restart or fail over: it dropped every lease`
      tone = 'bad'
      break
    case 'intervention':
      text = interventionText(e)
      tone = e.changed === false ? 'info' : 'operator'
      break
    case 'corrupt':
      text = `corrupt entry: ${s(e.raw)}`
      tone = 'bad'
      break
    default:
      text = [type, ...fieldWords(e)].join(' ')
  }
  return { id, atMs, type, text: text.replace(/\s+/g, ' ').trim(), tone }
}

/** How long ago, for the WHEN column. */
export function whenText(atMs: number, nowMs: number): string {
  const d = nowMs - atMs
  return d < 0 ? `in ${formatDuration(-d)}` : `${formatDuration(d)} ago`
}

export { EVENT_TYPES }
