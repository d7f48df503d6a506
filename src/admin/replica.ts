/**
 * `replica evict`: a replica treated as dead now. Its heartbeat goes and a tombstone refuses its later
 * beats (one script); then each chat and lead it held or waited for is cleaned, one script each.
 */
import { LEAD_FIELDS } from '../wire/hashes.js'
import { validateId } from '../keys.js'
import { DEFAULTS } from '../defaults.js'
import { ADMIN_REPLICA_EVICT } from '../scripts/registry.js'
import { chatInvolves } from '../wire/chat.js'
import { decodeHeldSummary } from '../wire/heartbeat.js'
import { parseBoundedJson } from '../wire/json.js'
import type { ReplicaEvictReply } from '../wire/interventions.js'
import type { HeldSummary } from '../wire/types.js'
import { CorruptStateError } from '../errors/corrupt-state-error.js'
import { CoordinationError } from '../errors/coordination-error.js'
import type { AuditFields } from './audit.js'
import { evictFromChat } from './chat.js'
import { evictFromLead } from './lead.js'
import type { AuditOutcome, EvictedChat, EvictedLead, ReplicaEvictResult } from './interventions.js'
import type { EvictOptions } from './options.js'
import type { AdminContext } from './runner.js'

type Tombstoned = Extract<ReplicaEvictReply, { status: 'tombstoned' | 'already' }>
type Evicted = Extract<ReplicaEvictResult, { status: 'evicted' }>

export async function evictReplica(
  ctx: AdminContext,
  replicaId: string,
  opts: EvictOptions,
): Promise<ReplicaEvictResult & { audit: AuditOutcome }> {
  validateId(replicaId, 'replicaId')
  if (!opts.ifIncarnation) throw new RangeError('evictReplica needs the incarnation the operator saw (ifIncarnation)')
  return ctx.runner.run(opts, {
    command: `replica evict ${replicaId}`,
    check: `it was applied when replica ${replicaId} shows as evicted (no heartbeat, a tombstone of incarnation ${opts.ifIncarnation})`,
    pinned: { kind: 'replica', key: replicaId, holder: { replicaId, incarnation: opts.ifIncarnation } },
    send: () =>
      ctx.scripts.call(
        ADMIN_REPLICA_EVICT,
        { replica: ctx.keys.replica(replicaId), index: ctx.keys.replicaIndex },
        { replicaId, ifIncarnation: opts.ifIncarnation, tombstoneTtlMs: opts.tombstoneTtlMs ?? DEFAULTS.tombstoneTtlMs },
      ),
    outcome: (r): ReplicaEvictResult | Promise<ReplicaEvictResult> => {
      if (r.status === 'not-alive') return { status: 'not-alive', replicaId }
      if (r.status === 'changed') return { status: 'changed', replicaId, incarnation: r.incarnation }
      return cleanUp(ctx, replicaId, r, opts)
    },
    record: (result) => ({
      kind: 'replica',
      key: replicaId,
      holder: { replicaId, incarnation: result.status === 'evicted' ? result.incarnation : opts.ifIncarnation },
      fenceBefore: null,
      fenceAfter: null,
      ...(result.status === 'evicted' ? cleanedRecord(result) : {}),
      result: result.status,
    }),
  })
}

/** After the tombstone: every chat and lead the incarnation held or waited for, cleaned one by one. */
async function cleanUp(ctx: AdminContext, replicaId: string, r: Tombstoned, opts: EvictOptions): Promise<Evicted> {
  const inc = r.incarnation
  // The tombstone is down: record the intervention now, so an interrupted clean-up still leaves it.
  await ctx.audit.write(opts, `replica evict ${replicaId}`, {
    kind: 'replica',
    key: replicaId,
    holder: { replicaId, incarnation: inc },
    fenceBefore: null,
    fenceAfter: null,
    result: r.status === 'tombstoned' ? 'tombstoned' : 'cleaning again',
  })
  // What it held and waited for, as its last beat said; unreadable, it is found by a scan instead.
  let leases: HeldSummary | null = null
  try {
    leases = decodeHeldSummary(r.leases, (why) => new CorruptStateError(ctx.keys.replica(replicaId), why))
  } catch {
    leases = null
  }
  const info = parseJson<{ leaseMs?: number }>(r.info)
  const grantLeaseMs = Math.max(Number(info?.leaseMs) || 0, DEFAULTS.leaseMs)
  const held = leases?.held ?? []
  const chatKeys = new Set<string>([
    ...held.filter((h) => h.kind === 'chat').map((h) => h.key),
    ...(leases?.waiting ?? []).map((w) => w.key),
  ])
  const leadNames = new Set<string>([...held.filter((h) => h.kind === 'lead').map((h) => h.key), ...(leases?.campaigns ?? [])])
  const scan = opts.scan ?? (leases === null || leases.more > 0)
  if (scan) await findIncarnation(ctx, inc, chatKeys, leadNames)
  return {
    status: 'evicted',
    replicaId,
    incarnation: inc,
    ...(await evictEach(ctx, inc, chatKeys, leadNames, grantLeaseMs)),
    scanned: scan,
  }
}

/** One script per chat, then per lead; a clean-up that fails is listed and the rest go on. */
async function evictEach(
  ctx: AdminContext,
  inc: string,
  chatKeys: Set<string>,
  leadNames: Set<string>,
  grantLeaseMs: number,
): Promise<Pick<Evicted, 'chats' | 'leads' | 'failed'>> {
  const chats: EvictedChat[] = []
  const leads: EvictedLead[] = []
  const failed: Evicted['failed'] = []
  for (const key of chatKeys) {
    try {
      chats.push(await evictFromChat(ctx, key, inc, grantLeaseMs))
    } catch (err) {
      failed.push({ key, kind: 'chat', ...failure(err) })
    }
  }
  for (const name of leadNames) {
    try {
      leads.push(await evictFromLead(ctx, name, inc))
    } catch (err) {
      failed.push({ key: name, kind: 'lead', ...failure(err) })
    }
  }
  return { chats, leads, failed }
}

/** What an eviction's audit record says it cleaned: every chat, and the leads it revoked. */
function cleanedRecord(result: Evicted): AuditFields {
  return {
    chats: result.chats.map((c) => ({
      key: c.key,
      revoked: c.revoked,
      ticketsDropped: c.ticketsDropped,
      fenceBefore: c.fenceBefore,
      fenceAfter: c.fenceAfter,
      ...(c.wakeRefused ? { wakeRefused: c.wakeRefused } : {}),
    })),
    leads: result.leads
      .filter((l) => l.revoked)
      .map((l) => ({
        name: l.name,
        fenceBefore: l.fenceBefore,
        fenceAfter: l.fenceAfter,
        ...(l.wakeRefused ? { wakeRefused: l.wakeRefused } : {}),
      })),
  }
}

/** One bounded SCAN pass over every chat and lead for an incarnation's turns, tickets and candidacies. */
async function findIncarnation(ctx: AdminContext, inc: string, chats: Set<string>, leads: Set<string>): Promise<void> {
  // Every ticket of the chat, not a listing's head of its queue; of a lead, its holder and that candidacy.
  const options = { whole: ['chat' as const], fields: { lead: [LEAD_FIELDS.holderIncarnation, `${LEAD_FIELDS.candidatePrefix}${inc}`] } }
  for await (const batch of ctx.reader.scanKinds(['chat', 'lead'], options)) {
    for (const { id, kind, hash } of batch) {
      if (kind === 'lead') {
        if (hash[LEAD_FIELDS.holderIncarnation] === inc || hash[`${LEAD_FIELDS.candidatePrefix}${inc}`] !== undefined) leads.add(id)
      } else if (chatInvolves(hash, inc)) {
        chats.add(id)
      }
    }
  }
}

/** A clean-up that failed: the message, and the error's stable code when it is one of ours (a corrupt fence). */
function failure(err: unknown): { error: string; code?: string } {
  if (err instanceof CoordinationError) return { error: err.message, code: err.code }
  return { error: err instanceof Error ? err.message : String(err) }
}

function parseJson<T>(v: unknown): T | null {
  if (typeof v !== 'string' || v === '') return null
  try {
    return parseBoundedJson(v) as T
  } catch {
    return null
  }
}
