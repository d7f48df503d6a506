/**
 * What changed between two decoded states (two snapshots read through the same reader): replicas
 * started, stopped or restarted; chats' holders, fences and queued tickets; leads' leaders, fences
 * and standbys; locks; checkpoints' revisions and writers; handover markers. Pure: no I/O.
 */
import type { ChatSnapshot, FlowCheckpoint, HandoverMarker, LeadSnapshot, LockSnapshot, ReplicaSnapshot } from './decode.js'

export interface DecodedState {
  replicas: ReplicaSnapshot[]
  chats: ChatSnapshot[]
  leads: LeadSnapshot[]
  locks: LockSnapshot[]
  checkpoints: FlowCheckpoint[]
  handovers: HandoverMarker[]
}

export type DiffKind = 'replica' | 'chat' | 'lead' | 'lock' | 'checkpoint' | 'handover'

export interface Change {
  kind: DiffKind
  key: string
  /** What changed: added, removed, holder, fence, tickets, incarnation, leader, standbys, revision, owner, step. */
  change: string
  /** The value before and after, as text (null: none). */
  before: string | null
  after: string | null
}

const holderText = (h: { replicaId: string; incarnation: string } | null | undefined) =>
  h ? `${h.replicaId} (${h.incarnation.slice(0, 8)})` : null

function byKey<T>(items: T[], key: (t: T) => string): Map<string, T> {
  return new Map(items.map((t) => [key(t), t]))
}

/** Items present on one side only, and pairs present on both (keys sorted). */
function pair<T>(a: T[], b: T[], key: (t: T) => string) {
  const A = byKey(a, key)
  const B = byKey(b, key)
  const keys = [...new Set([...A.keys(), ...B.keys()])].sort()
  return keys.map((k) => ({ key: k, before: A.get(k) ?? null, after: B.get(k) ?? null }))
}

function diffOf<T>(
  kind: DiffKind,
  a: T[],
  b: T[],
  key: (t: T) => string,
  summary: (t: T) => string,
  fields: (x: T, y: T) => Array<[string, string | null, string | null]>,
): Change[] {
  const out: Change[] = []
  for (const p of pair(a, b, key)) {
    if (!p.before) out.push({ kind, key: p.key, change: 'added', before: null, after: summary(p.after!) })
    else if (!p.after) out.push({ kind, key: p.key, change: 'removed', before: summary(p.before), after: null })
    else
      for (const [change, before, after] of fields(p.before, p.after))
        if (before !== after) out.push({ kind, key: p.key, change, before, after })
  }
  return out
}

const num = (n: number | null | undefined) => (n === null || n === undefined ? null : String(n))
const tickets = (c: ChatSnapshot) => (c.tickets.length ? c.tickets.map((t) => `#${t.ticket} ${t.replicaId}`).join(', ') : null)

export function diffStates(a: DecodedState, b: DecodedState): Change[] {
  return [
    ...diffOf(
      'replica',
      a.replicas,
      b.replicas,
      (r) => r.replicaId,
      (r) => holderText(r)!,
      (x, y) => [['incarnation', x.incarnation.slice(0, 8), y.incarnation.slice(0, 8)]],
    ),
    ...diffOf(
      'chat',
      a.chats,
      b.chats,
      (c) => c.key,
      (c) => `${holderText(c.holder) ?? 'no holder'}, fence ${num(c.fence) ?? '-'}, ${c.tickets.length} queued`,
      (x, y) => [
        ['holder', holderText(x.holder), holderText(y.holder)],
        ['fence', num(x.fence), num(y.fence)],
        ['tickets', tickets(x), tickets(y)],
      ],
    ),
    ...diffOf(
      'lead',
      a.leads,
      b.leads,
      (l) => l.key,
      (l) => `${holderText(l.holder) ?? 'no leader'}, fence ${num(l.fence) ?? '-'}`,
      (x, y) => [
        ['leader', holderText(x.holder), holderText(y.holder)],
        ['fence', num(x.fence), num(y.fence)],
        ['standbys', x.candidates.map((c) => c.replicaId).join(', ') || null, y.candidates.map((c) => c.replicaId).join(', ') || null],
      ],
    ),
    ...diffOf(
      'lock',
      a.locks,
      b.locks,
      (l) => l.key,
      (l) => `${l.holder?.owner ?? 'free'}, fence ${num(l.fence) ?? '-'}`,
      (x, y) => [
        ['holder', x.holder?.owner ?? null, y.holder?.owner ?? null],
        ['fence', num(x.fence), num(y.fence)],
      ],
    ),
    ...diffOf(
      'checkpoint',
      a.checkpoints,
      b.checkpoints,
      (c) => c.key,
      (c) => `${c.flow}/${c.step} revision ${c.revision}`,
      (x, y) => [
        ['revision', num(x.revision), num(y.revision)],
        ['step', `${x.flow}/${x.step}`, `${y.flow}/${y.step}`],
        ['owner', holderText(x.owner), holderText(y.owner)],
      ],
    ),
    ...diffOf(
      'handover',
      a.handovers,
      b.handovers,
      (m) => m.key,
      (m) => `${m.name} by ${holderText(m)}`,
      (x, y) => [['owner', holderText(x), holderText(y)]],
    ),
  ]
}
