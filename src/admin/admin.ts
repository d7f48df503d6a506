import { userInfo, hostname } from 'node:os'
import { RedisBackend } from '../coordinator/redis-backend.js'
import type { YieldResult } from '../wire/types.js'
import { validateId, type KeyLayout, type RedisKey } from '../keys.js'
import { ScriptRunner } from '../scripts/runner.js'
import { resolveRedis, withTimeout, type RedisClient, type RedisConnectionOptions } from '../connection.js'
import { DEFAULTS } from '../defaults.js'
import {
  ADMIN_CHAT_EVICT,
  ADMIN_CHAT_RELEASE,
  ADMIN_CHAT_SKIP,
  ADMIN_CHECKPOINT_EXTEND,
  ADMIN_CHECKPOINT_RM,
  ADMIN_HANDOVER_RM,
  ADMIN_LEAD_EVICT,
  ADMIN_LEAD_REVOKE,
  ADMIN_YIELD_CANCEL,
  ADMIN_LOCK_RELEASE,
  ADMIN_REPLICA_EVICT,
} from '../scripts/registry.js'
import { StateReader } from '../state/reader.js'
import type { ChatSnapshot } from '../state/decode.js'
import { chatInvolves } from '../wire/chat.js'
import { decodeHeldSummary } from '../wire/heartbeat.js'
import type { HeldSummary } from '../wire/types.js'
import { CorruptStateError } from '../errors/corrupt-state-error.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { CoordinationError } from '../errors/coordination-error.js'
import { OutcomeUnknownError } from '../errors/outcome-unknown-error.js'
import { errorFromRedis } from '../errors/from-redis.js'
import type { ScriptDef, ArgSchema, ScriptArgs } from '../scripts/define.js'
import { parseBoundedJson } from '../wire/json.js'
import type {
  AuditOptions,
  AuditOutcome,
  BulkCounts,
  BulkEntryResult,
  BulkOptions,
  BulkResult,
  CheckpointExtendResult,
  ChatReleaseResult,
  ChatSkipResult,
  CheckpointRemoveResult,
  EvictedChat,
  EvictedLead,
  HandoverRemoveResult,
  LeadRevokeResult,
  LockReleaseResult,
  ReplicaEvictResult,
  YieldCancelResult,
} from './interventions.js'
import type { ConditionOptions, EvictOptions, GrantOptions, LeadRevokeOptions, YieldOptions } from './options.js'

export type * from './interventions.js'
export type { ConditionOptions, EvictOptions, GrantOptions, LeadRevokeOptions, YieldOptions } from './options.js'

export function operatorName(): string {
  let user = 'unknown'
  try {
    user = userInfo().username
  } catch {
    // no passwd entry (containers)
  }
  return `${user}@${hostname()}`
}

/** A script's reply with the names the operator used, right after its status (the order --json prints). */
/** The results of interventions that changed the state (every other result did nothing). */
const CHANGED_STATE = new Set([
  'requested',
  'released',
  'skipped',
  'revoked',
  'removed',
  'evicted',
  'tombstoned',
  'cleaning again',
  'cancelled',
  'extended',
])

function named<R extends { status: string }, N extends object>(reply: R, names: N): R & N {
  const { status, ...rest } = reply
  return { status, ...names, ...rest } as R & N
}

/**
 * Operator interventions on live coordination state: each one is one Lua script, conditioned on what
 * the operator saw, and each leaves an audit record in the event stream. The CLI and the dashboard
 * call these; so do tests that play the operator.
 */
export class CoordinationAdmin {
  readonly keys: KeyLayout
  readonly redis: RedisClient
  private readonly backend: RedisBackend
  private readonly scripts: ScriptRunner
  private readonly reader: StateReader
  private readonly timeoutMs: number
  private readonly eventsMaxLen: number
  private readonly idleKeyTtlMs: number
  private auditChecked: Promise<void> | undefined

  constructor(options: RedisConnectionOptions = {}) {
    const resolved = resolveRedis(options)
    const { redis, keys, commandTimeoutMs: timeout } = resolved
    this.redis = redis
    this.keys = keys
    this.timeoutMs = timeout
    this.eventsMaxLen = resolved.eventsMaxLen
    this.idleKeyTtlMs = resolved.idleKeyTtlMs
    this.backend = new RedisBackend(resolved)
    this.scripts = new ScriptRunner(redis, timeout)
    this.reader = new StateReader(redis, keys, { timeoutMs: timeout })
  }

  /**
   * Ask the leader of `name` to step down; its campaigning standbys take over (the leader calls
   * onFollower('yield'), releases, and sits out). With `audit: true`, an audit record is written.
   */
  async requestYield(name: string, opts: YieldOptions = {}): Promise<YieldResult & { audit?: AuditOutcome }> {
    validateId(name, 'lead name')
    const by = opts.by ?? operatorName()
    const before = opts.audit ? await this.reader.lead(name).catch(() => null) : null
    if (opts.audit) await this.checkAudit()
    const result = await this.unanswered(
      this.backend.requestYield(name, {
        by,
        target: opts.target ?? null,
        ttlMs: opts.ttlMs ?? DEFAULTS.yieldTtlMs,
        ifFence: opts.ifFence ?? null,
      }),
      `provider yield ${name}`,
      `it was applied when ${name} shows a pending yield request by ${by}`,
      opts.audit
        ? { opts: { ...opts, by }, record: { kind: 'lead', key: name, fenceBefore: opts.ifFence ?? null, target: opts.target ?? null } }
        : undefined,
    )
    if (!opts.audit) return result
    const audit = await this.audit(opts, {
      command: opts.command ?? `provider yield ${name}`,
      kind: 'lead',
      key: name,
      fenceBefore: result.status === 'requested' ? result.fence : (before?.fence ?? null),
      // A yield takes nothing away itself: the next grant (to a standby) carries the higher fence.
      fenceAfter: result.status === 'requested' ? result.fence : (before?.fence ?? null),
      holder: result.status === 'requested' ? result.leader : null,
      target: opts.target ?? null,
      wakeRefused: result.status === 'requested' ? (result.wakeRefused ?? null) : null,
      result: result.status,
    })
    return { ...result, audit }
  }

  /**
   * Revoke the holder of a chat's turn (`chat release`): the fence is bumped, so the old holder's
   * renewals answer 'revoked' and its fenced checkpoint writes are refused; the next live ticket is
   * granted at once.
   */
  async releaseChat(key: string, opts: ConditionOptions & GrantOptions = {}): Promise<ChatReleaseResult & { audit: AuditOutcome }> {
    validateId(key, 'chat key')
    const k = this.keys.chat(key)
    const leaseMs = opts.grantLeaseMs ?? (await this.grantLeaseFor(key))
    const reply = await this.intervene(
      ADMIN_CHAT_RELEASE,
      { state: k.state, queue: k.queue },
      {
        ifFence: opts.ifFence ?? null,
        ifIncarnation: opts.ifIncarnation ?? null,
        leaseMs,
        idleTtlMs: this.idleKeyTtlMs,
        wakeChannelPrefix: this.keys.wakeChannelPrefix,
      },
      `chat release ${key}`,
      fencePast(key, opts.ifFence),
      {
        opts,
        record: {
          kind: 'chat',
          key,
          fenceBefore: opts.ifFence ?? null,
          holder: opts.ifIncarnation ? { incarnation: opts.ifIncarnation } : null,
        },
      },
    )
    const result: ChatReleaseResult = named(reply, { key })
    const audit = await this.audit(opts, {
      command: opts.command ?? `chat release ${key}`,
      kind: 'chat',
      key,
      fenceBefore: result.status === 'released' ? result.fenceBefore : result.fence,
      fenceAfter: result.status === 'released' ? (result.granted?.fence ?? result.fenceAfter) : result.fence,
      holder: result.status === 'released' ? result.holder : null,
      granted: result.status === 'released' ? result.granted : null,
      wakeRefused: result.status === 'released' ? result.wakeRefused : null,
      result: result.status,
    })
    return { ...result, audit }
  }

  /** Drop one queued ticket from a chat (`chat skip`); its waiting acquireTurn rejects with reason 'dropped'. */
  async skipTicket(
    key: string,
    ticket: number,
    opts: ConditionOptions & GrantOptions = {},
  ): Promise<ChatSkipResult & { audit: AuditOutcome }> {
    validateId(key, 'chat key')
    if (!Number.isSafeInteger(ticket) || ticket <= 0) throw new RangeError('ticket must be a positive integer')
    const k = this.keys.chat(key)
    const leaseMs = opts.grantLeaseMs ?? (await this.grantLeaseFor(key))
    const reply = await this.intervene(
      ADMIN_CHAT_SKIP,
      { state: k.state, queue: k.queue },
      {
        ticket,
        ifIncarnation: opts.ifIncarnation ?? null,
        ifFence: opts.ifFence ?? null,
        leaseMs,
        idleTtlMs: this.idleKeyTtlMs,
        wakeChannelPrefix: this.keys.wakeChannelPrefix,
      },
      `chat skip ${key} ${ticket}`,
      `it was applied when ticket ${ticket} is no longer queued in ${key}`,
      { opts, record: { kind: 'chat', key, ticket, fenceBefore: opts.ifFence ?? null } },
    )
    const result: ChatSkipResult = named(reply, { key, ticket })
    const fence = 'fence' in result ? result.fence : null
    const audit = await this.audit(opts, {
      command: opts.command ?? `chat skip ${key} ${ticket}`,
      kind: 'chat',
      key,
      ticket,
      fenceBefore: fence,
      fenceAfter: result.status === 'skipped' ? (result.granted?.fence ?? fence) : fence,
      holder: result.status === 'skipped' ? { replicaId: result.replicaId, incarnation: result.incarnation } : null,
      granted: result.status === 'skipped' ? result.granted : null,
      wakeRefused: result.status === 'skipped' ? result.wakeRefused : null,
      result: result.status,
    })
    return { ...result, audit }
  }

  /**
   * Revoke a lead whose holder does not answer (`provider yield --force`): the fence is bumped and the
   * standbys are woken. The old holder learns it at its next renewal; a hung process may still use
   * its transport until its own local deadline passes.
   */
  async revokeLead(name: string, opts: LeadRevokeOptions = {}): Promise<LeadRevokeResult & { audit: AuditOutcome }> {
    validateId(name, 'lead name')
    const key = this.keys.lead(name)
    const by = opts.by ?? operatorName()
    const reply = await this.intervene(
      ADMIN_LEAD_REVOKE,
      { lead: key },
      {
        ifFence: opts.ifFence ?? null,
        ifIncarnation: opts.ifIncarnation ?? null,
        target: opts.target ?? null,
        ttlMs: opts.ttlMs ?? DEFAULTS.yieldTtlMs,
        by,
        wakeChannelPrefix: this.keys.wakeChannelPrefix,
      },
      `provider yield ${name} --force`,
      fencePast(name, opts.ifFence),
      { opts: { ...opts, by }, record: { kind: 'lead', key: name, fenceBefore: opts.ifFence ?? null, target: opts.target ?? null } },
    )
    const result: LeadRevokeResult = named(reply, { name })
    const fence = 'fence' in result ? result.fence : null
    const audit = await this.audit(
      { ...opts, by },
      {
        command: opts.command ?? `provider yield ${name} --force`,
        kind: 'lead',
        key: name,
        fenceBefore: result.status === 'revoked' ? result.fenceBefore : fence,
        fenceAfter: result.status === 'revoked' ? result.fenceAfter : fence,
        holder: result.status === 'revoked' ? result.holder : null,
        target: opts.target ?? null,
        wakeRefused: result.status === 'revoked' ? result.wakeRefused : null,
        result: result.status,
      },
    )
    return { ...result, audit }
  }

  /**
   * Withdraw a pending yield request of a lead, or the reservation a targeted request or revocation
   * left (`provider yield --cancel`), conditioned on the request the operator saw (`ifRequestedAt`,
   * its Redis ms) and optionally the lead's fence. The standbys are woken: any of them may take a
   * free lead at once.
   */
  async cancelYield(
    name: string,
    opts: ConditionOptions & { ifRequestedAt?: number | null } = {},
  ): Promise<YieldCancelResult & { audit: AuditOutcome }> {
    validateId(name, 'lead name')
    const reply = await this.intervene(
      ADMIN_YIELD_CANCEL,
      { lead: this.keys.lead(name) },
      { ifRequestedAt: opts.ifRequestedAt ?? null, ifFence: opts.ifFence ?? null, wakeChannelPrefix: this.keys.wakeChannelPrefix },
      `provider yield ${name} --cancel`,
      `it was applied when ${name} shows no pending yield request`,
      { opts, record: { kind: 'lead', key: name, fenceBefore: opts.ifFence ?? null } },
    )
    const result: YieldCancelResult = named(reply, { name })
    const audit = await this.audit(opts, {
      command: opts.command ?? `provider yield ${name} --cancel`,
      kind: 'lead',
      key: name,
      fenceBefore: result.fence,
      fenceAfter: result.fence,
      requestedBy: result.status === 'none' ? null : result.by,
      target: result.status === 'cancelled' ? result.target : null,
      wakeRefused: result.status === 'cancelled' ? result.wakeRefused : null,
      result: result.status,
    })
    return { ...result, audit }
  }

  /** Force-release a fenced lock (`lock release`): the token is cleared and the fence bumped. */
  async releaseLock(key: string, opts: ConditionOptions = {}): Promise<LockReleaseResult & { audit: AuditOutcome }> {
    validateId(key, 'lock key')
    const raw = this.keys.lock(key)
    const reply = await this.intervene(
      ADMIN_LOCK_RELEASE,
      { lock: raw },
      { ifFence: opts.ifFence ?? null },
      `lock release ${key}`,
      fencePast(key, opts.ifFence),
      { opts, record: { kind: 'lock', key, fenceBefore: opts.ifFence ?? null } },
    )
    const result: LockReleaseResult = named(reply, { key })
    const fence = 'fence' in result ? result.fence : null
    const audit = await this.audit(opts, {
      command: opts.command ?? `lock release ${key}`,
      kind: 'lock',
      key,
      fenceBefore: result.status === 'released' ? result.fenceBefore : fence,
      fenceAfter: result.status === 'released' ? result.fenceAfter : fence,
      owner: result.status === 'released' || result.status === 'changed' ? result.owner : null,
      result: result.status,
    })
    return { ...result, audit }
  }

  /** Delete a checkpoint, compare-and-set on the revision the operator saw (`checkpoint rm`). */
  async removeCheckpoint(
    key: string,
    revision: number,
    opts: AuditOptions = {},
  ): Promise<CheckpointRemoveResult & { audit: AuditOutcome }> {
    await this.checkAudit()
    const result = await this.checkpointRm(key, revision, { opts, record: { kind: 'checkpoint', key, revisionExpected: revision } })
    const audit = await this.audit(opts, {
      command: opts.command ?? `checkpoint rm ${key}`,
      kind: 'checkpoint',
      key,
      revisionExpected: revision,
      revision: result.status === 'absent' ? null : result.revision,
      flow: result.status === 'absent' ? null : result.flow,
      step: result.status === 'absent' ? null : result.step,
      result: result.status,
    })
    return { ...result, audit }
  }

  private async checkpointRm(key: string, revision: number, unknown?: UnknownRecord): Promise<CheckpointRemoveResult> {
    validateId(key, 'checkpoint key')
    const reply = await this.intervene(
      ADMIN_CHECKPOINT_RM,
      { checkpoint: this.keys.chat(key).checkpoint },
      { revision },
      `checkpoint rm ${key}`,
      `it was applied when ${key} has no checkpoint at revision ${revision}`,
      unknown,
    )
    return named(reply, { key })
  }

  /**
   * Keep an ephemeral checkpoint alive longer (`checkpoint extend`): it expires `ttlMs` from Redis's
   * now, if still at the revision the operator saw. A persistent one is left alone, one that expires
   * later already is not shortened, and the revision does not change.
   */
  async extendCheckpoint(
    key: string,
    revision: number,
    ttlMs: number,
    opts: AuditOptions = {},
  ): Promise<CheckpointExtendResult & { audit: AuditOutcome }> {
    validateId(key, 'checkpoint key')
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) throw new RangeError('ttlMs must be a positive whole number of ms')
    const reply = await this.intervene(
      ADMIN_CHECKPOINT_EXTEND,
      { checkpoint: this.keys.chat(key).checkpoint },
      { revision, ttlMs },
      `checkpoint extend ${key}`,
      `it was applied when the checkpoint of ${key} expires about ${ttlMs} ms after the call`,
      { opts, record: { kind: 'checkpoint', key, revisionExpected: revision, ttlMs } },
    )
    const result: CheckpointExtendResult = named(reply, { key, ttlMs })
    const audit = await this.audit(opts, {
      command: opts.command ?? `checkpoint extend ${key}`,
      kind: 'checkpoint',
      key,
      revisionExpected: revision,
      revision: result.status === 'absent' ? null : result.revision,
      ttlMs,
      expiresInMsBefore: result.status === 'extended' || result.status === 'unchanged' ? result.expiresInMsBefore : null,
      result: result.status,
    })
    return { ...result, audit }
  }

  /**
   * Remove a handover marker (`handover rm`), only if the incarnation that left it (and, given, the
   * wait it marks: its `since`) is still the one the operator saw. The next replica to take the chat
   * applies no fallback.
   */
  async removeHandover(
    key: string,
    opts: AuditOptions & { ifIncarnation: string; ifSince?: number | null },
  ): Promise<HandoverRemoveResult & { audit: AuditOutcome }> {
    await this.checkAudit()
    const result = await this.handoverRm(key, opts.ifIncarnation, opts.ifSince ?? null, {
      opts,
      record: { kind: 'handover', key, holder: { incarnation: opts.ifIncarnation } },
    })
    const audit = await this.audit(opts, {
      command: opts.command ?? `handover rm ${key}`,
      kind: 'handover',
      key,
      holder: { replicaId: result.status === 'absent' ? null : result.replicaId, incarnation: opts.ifIncarnation },
      name: result.status === 'absent' ? null : result.name,
      result: result.status,
    })
    return { ...result, audit }
  }

  private async handoverRm(
    key: string,
    ifIncarnation: string,
    ifSince: number | null,
    unknown?: UnknownRecord,
  ): Promise<HandoverRemoveResult> {
    validateId(key, 'chat key')
    if (!ifIncarnation) throw new RangeError('removeHandover needs the incarnation the operator saw (ifIncarnation)')
    // A marker read without `since` decodes it as 0: then only the incarnation is compared.
    const reply = await this.intervene(
      ADMIN_HANDOVER_RM,
      { marker: this.keys.chat(key).handover },
      { ifIncarnation, ifSince: ifSince || null },
      `handover rm ${key}`,
      `it was applied when ${key} has no handover marker of incarnation ${ifIncarnation}`,
      unknown,
    )
    return named(reply, { key })
  }

  /**
   * Bulk clean-up of checkpoints (`checkpoints rm --flow …`): each entry is removed by its own
   * compare-and-set script on the revision listed, so an entry that changed since it was listed is
   * skipped and counted, never removed. One audit record with the counts.
   */
  removeCheckpoints(
    entries: Array<{ key: string; revision: number }>,
    opts: BulkOptions = {},
  ): Promise<BulkResult & { audit: AuditOutcome }> {
    return this.bulk('checkpoint', entries, (e) => this.checkpointRm(e.key, e.revision), opts, 'checkpoints rm')
  }

  /**
   * Bulk clean-up of handover markers (`handover rm --owner-dead`): each marker is removed by its own
   * script conditioned on the incarnation and wait listed; one audit record with the counts.
   */
  removeHandovers(
    entries: Array<{ key: string; incarnation: string; since: number | null }>,
    opts: BulkOptions = {},
  ): Promise<BulkResult & { audit: AuditOutcome }> {
    return this.bulk('handover', entries, (e) => this.handoverRm(e.key, e.incarnation, e.since), opts, 'handover rm')
  }

  /** Run one conditioned script per entry in bounded batches, count the outcomes, write one audit record. */
  private async bulk<E extends { key: string }>(
    kind: 'checkpoint' | 'handover',
    entries: E[],
    one: (e: E) => Promise<{ status: 'removed' | 'changed' | 'absent' }>,
    opts: BulkOptions,
    command: string,
  ): Promise<BulkResult & { audit: AuditOutcome }> {
    const size = Math.max(1, Math.floor(opts.batchSize ?? DEFAULTS.bulkBatchSize))
    await this.checkAudit()
    const results: BulkEntryResult[] = []
    for (let i = 0; i < entries.length; i += size) {
      const batch = entries.slice(i, i + size)
      const done = await Promise.all(
        batch.map((e) =>
          one(e).then(
            (r): BulkEntryResult => ({ key: e.key, status: r.status }),
            (err: unknown): BulkEntryResult => ({ key: e.key, status: 'failed', error: err instanceof Error ? err.message : String(err) }),
          ),
        ),
      )
      results.push(...done)
      opts.onProgress?.(results.length, entries.length)
    }
    const counts: BulkCounts = { listed: entries.length, removed: 0, changed: 0, absent: 0, failed: 0 }
    for (const r of results) counts[r.status]++
    const keysOf = (status: BulkEntryResult['status']) =>
      results
        .filter((r) => r.status === status)
        .slice(0, BULK_KEYS_RECORDED)
        .map((r) => r.key)
    const audit = await this.audit(opts, {
      command: opts.command ?? command,
      kind,
      key: null,
      filter: opts.filter ?? null,
      counts,
      removedKeys: keysOf('removed'),
      changedKeys: keysOf('changed'),
      // Nothing removed is a no-op (recorded as one): the result says what happened instead.
      result: counts.removed > 0 ? 'removed' : counts.changed > 0 ? 'changed' : counts.failed > 0 ? 'failed' : 'absent',
    })
    return { status: 'done', counts, entries: results, audit }
  }

  /**
   * Treat a replica as dead now (`replica evict`): its heartbeat goes (a tombstone refuses its later
   * beats, so its coordinator drops everything and emits coordination:evicted), then each chat and
   * lead it held or waited for is cleaned: turns revoked with a fence bump, tickets dropped, leads
   * revoked, the next waiters granted.
   */
  async evictReplica(replicaId: string, opts: EvictOptions): Promise<ReplicaEvictResult & { audit: AuditOutcome }> {
    validateId(replicaId, 'replicaId')
    if (!opts.ifIncarnation) throw new RangeError('evictReplica needs the incarnation the operator saw (ifIncarnation)')
    await this.checkAudit()
    const r = await this.intervene(
      ADMIN_REPLICA_EVICT,
      { replica: this.keys.replica(replicaId), index: this.keys.replicaIndex },
      { replicaId, ifIncarnation: opts.ifIncarnation, tombstoneTtlMs: opts.tombstoneTtlMs ?? DEFAULTS.tombstoneTtlMs },
      `replica evict ${replicaId}`,
      `it was applied when replica ${replicaId} shows as evicted (no heartbeat, a tombstone of incarnation ${opts.ifIncarnation})`,
      { opts, record: { kind: 'replica', key: replicaId, holder: { replicaId, incarnation: opts.ifIncarnation } } },
    )
    let result: ReplicaEvictResult
    if (r.status === 'not-alive') result = { status: 'not-alive', replicaId }
    else if (r.status === 'changed') result = { status: 'changed', replicaId, incarnation: r.incarnation }
    else {
      const inc = r.incarnation
      // The tombstone is down: record the intervention now, so an interrupted clean-up still leaves it.
      await this.audit(opts, {
        command: opts.command ?? `replica evict ${replicaId}`,
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
        leases = decodeHeldSummary(r.leases, (why) => new CorruptStateError(this.keys.replica(replicaId), why))
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
      if (scan) await this.findIncarnation(inc, chatKeys, leadNames)
      const chats: EvictedChat[] = []
      const leads: EvictedLead[] = []
      const failed: Array<{ key: string; kind: 'chat' | 'lead'; error: string; code?: string }> = []
      for (const key of chatKeys) {
        try {
          chats.push(await this.evictFromChat(key, inc, grantLeaseMs))
        } catch (err) {
          failed.push({ key, kind: 'chat', ...failure(err) })
        }
      }
      for (const name of leadNames) {
        try {
          leads.push(await this.evictFromLead(name, inc))
        } catch (err) {
          failed.push({ key: name, kind: 'lead', ...failure(err) })
        }
      }
      result = { status: 'evicted', replicaId, incarnation: inc, chats, leads, failed, scanned: scan }
    }
    const audit = await this.audit(opts, {
      command: opts.command ?? `replica evict ${replicaId}`,
      kind: 'replica',
      key: replicaId,
      holder: { replicaId, incarnation: result.status === 'evicted' ? result.incarnation : opts.ifIncarnation },
      fenceBefore: null,
      fenceAfter: null,
      ...(result.status === 'evicted'
        ? {
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
        : {}),
      result: result.status,
    })
    return { ...result, audit }
  }

  private async evictFromChat(key: string, incarnation: string, grantLeaseMs: number): Promise<EvictedChat> {
    const k = this.keys.chat(key)
    const reply = await this.scripts.call(
      ADMIN_CHAT_EVICT,
      { state: k.state, queue: k.queue },
      { incarnation, leaseMs: grantLeaseMs, idleTtlMs: this.idleKeyTtlMs, wakeChannelPrefix: this.keys.wakeChannelPrefix },
    )
    return { key, ...reply }
  }

  private async evictFromLead(name: string, incarnation: string): Promise<EvictedLead> {
    const reply = await this.scripts.call(
      ADMIN_LEAD_EVICT,
      { lead: this.keys.lead(name) },
      { incarnation, wakeChannelPrefix: this.keys.wakeChannelPrefix },
    )
    return { name, ...reply }
  }

  /** One bounded SCAN pass over every chat and lead for an incarnation's turns, tickets and candidacies. */
  private async findIncarnation(inc: string, chats: Set<string>, leads: Set<string>): Promise<void> {
    // Every ticket of the chat, not a listing's head of its queue; of a lead, its holder and that candidacy.
    const options = { whole: ['chat' as const], fields: { lead: ['hi', `c:${inc}`] } }
    for await (const batch of this.reader.scanKinds(['chat', 'lead'], options)) {
      for (const { id, kind, hash } of batch) {
        if (kind === 'lead') {
          if (hash.hi === inc || hash[`c:${inc}`] !== undefined) leads.add(id)
        } else if (chatInvolves(hash, inc)) {
          chats.add(id)
        }
      }
    }
  }

  /**
   * Refuse before any write when the audit record could not be written (an ACL user without XADD or
   * the events key, a Redis at maxmemory): an intervention is done and recorded, or not done. Redis
   * checks the ACL of an XADD before its arguments, and refuses a MAXLEN that is not a number
   * before it writes anything: that refusal is the answer "you may". Once per admin.
   */
  async checkAudit(): Promise<void> {
    this.auditChecked ??= this.probeAudit()
    try {
      await this.auditChecked
    } catch (err) {
      this.auditChecked = undefined
      throw err
    }
  }

  private async probeAudit(): Promise<void> {
    try {
      await withTimeout(this.redis.call('XADD', this.keys.events, 'MAXLEN', '~', 'not-a-number', '*', 'e', '{}'), this.timeoutMs, 'XADD')
    } catch (err) {
      if (err instanceof Error && /^ERR value is not an integer/.test(err.message)) return
      throw errorFromRedis(err, this.keys.events)
    }
    throw new Error('internal: Redis accepted an XADD with MAXLEN not-a-number')
  }

  /**
   * One intervention script, after the audit check. A call sent and not answered (Redis did not
   * answer within the timeout, the connection dropped) may have been applied: OutcomeUnknownError,
   * with how to learn it.
   */
  private async intervene<K extends string, S extends ArgSchema, R>(
    def: ScriptDef<K, S, R>,
    keys: NoInfer<Record<K, RedisKey>>,
    args: NoInfer<ScriptArgs<S>>,
    what: string,
    check: string,
    unknown?: UnknownRecord,
  ): Promise<R> {
    await this.checkAudit()
    return this.unanswered(this.scripts.call(def, keys, args), what, check, unknown)
  }

  /**
   * A call sent and not answered: OutcomeUnknownError. Its audit record (result 'unknown', with what
   * it was pinned to) is sent behind it on the same connection, not waited for: Redis runs both, or
   * drops both with the connection (a paused Redis drops a closed client's waiting commands).
   */
  private async unanswered<R>(call: Promise<R>, what: string, check: string, unknown?: UnknownRecord): Promise<R> {
    try {
      return await call
    } catch (err) {
      if (!(err instanceof CoordinationUnavailableError && err.reason === 'unreachable')) throw err
      if (unknown) void this.audit(unknown.opts, { command: unknown.opts.command ?? what, ...unknown.record, result: 'unknown' })
      throw new OutcomeUnknownError(what, check, { cause: err })
    }
  }

  /**
   * The lease a grant made by an intervention starts with: the longest lease among the chat's holder
   * and the replicas with tickets in it (they confirm on their first poll and extend it to their own).
   */
  private async grantLeaseFor(key: string): Promise<number> {
    let best = 0
    let chat: ChatSnapshot | null = null
    try {
      chat = (await this.reader.chat(key)).chat
    } catch {
      return DEFAULTS.leaseMs
    }
    if (!chat) return DEFAULTS.leaseMs
    if (chat.holder && chat.holder.lastRenewalMs > 0) best = Math.max(best, chat.holder.expiresAtMs - chat.holder.lastRenewalMs)
    const ids = [...new Set(chat.tickets.map((t) => t.replicaId))].slice(0, 20)
    const infos = await Promise.all(ids.map((id) => this.reader.replica(id).catch(() => null)))
    for (const r of infos) if (r?.info.leaseMs) best = Math.max(best, r.info.leaseMs)
    return best >= 300 ? best : DEFAULTS.leaseMs
  }

  /**
   * Append the audit record of an intervention to the event stream (the format replicas use: JSON in
   * field `e`). Best effort: a refused or failed write is reported in the result, never thrown, so it
   * cannot hide what the intervention did.
   */
  private async audit(opts: AuditOptions, record: Record<string, unknown> & { result: string }): Promise<AuditOutcome> {
    const event = {
      type: 'intervention',
      at: Date.now(),
      by: opts.by ?? operatorName(),
      reason: opts.reason ?? null,
      ...record,
      // An intervention that found the state changed (or nothing to act on) did nothing: recorded, as a
      // no-op; one sent without an answer may have changed it or not (null).
      changed: record.result === 'unknown' ? null : CHANGED_STATE.has(record.result),
    }
    try {
      const id = await withTimeout(
        this.redis.xadd(this.keys.events, 'MAXLEN', '~', String(this.eventsMaxLen), '*', 'e', JSON.stringify(event)),
        this.timeoutMs,
        'XADD',
      )
      return { written: true, id: String(id) }
    } catch (err) {
      return { written: false, error: err instanceof Error ? err.message : String(err) }
    }
  }

  async close(): Promise<void> {
    await this.backend.close()
  }
}

/** A clean-up that failed: the message, and the error's stable code when it is one of ours (a corrupt fence). */
function failure(err: unknown): { error: string; code?: string } {
  if (err instanceof CoordinationError) return { error: err.message, code: err.code }
  return { error: err instanceof Error ? err.message : String(err) }
}

/** The audit record of an intervention whose outcome is unknown: who asked, and what it was pinned to. */
interface UnknownRecord {
  opts: AuditOptions
  record: Record<string, unknown>
}

/** How to learn whether a fence-bumping intervention was applied. */
function fencePast(name: string, fence: number | null | undefined): string {
  return fence === null || fence === undefined
    ? `look at the holder and fence of ${name}`
    : `it was applied when ${name} is past fence ${fence} (the one it was pinned to)`
}

/** Keys of each outcome a bulk clean-up's audit record names (the counts are always whole). */
const BULK_KEYS_RECORDED = 100

function parseJson<T>(v: unknown): T | null {
  if (typeof v !== 'string' || v === '') return null
  try {
    return parseBoundedJson(v) as T
  } catch {
    return null
  }
}
