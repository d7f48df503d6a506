import { RedisBackend } from '../coordinator/redis-backend.js'
import type { YieldResult } from '../wire/types.js'
import type { KeyLayout } from '../keys.js'
import { ScriptRunner } from '../scripts/runner.js'
import { resolveRedis, type RedisClient, type RedisConnectionOptions } from '../connection.js'
import { StateReader } from '../state/reader.js'
import { AuditWriter } from './audit.js'
import { InterventionRunner, type AdminContext } from './runner.js'
import { releaseChat, skipTicket } from './chat.js'
import { cancelYield, requestYield, revokeLead } from './lead.js'
import { releaseLock } from './lock.js'
import { extendCheckpoint, removeCheckpoint, removeCheckpoints } from './checkpoint.js'
import { removeHandover, removeHandovers } from './handover.js'
import { evictReplica } from './replica.js'
import type {
  AuditOptions,
  AuditOutcome,
  BulkOptions,
  BulkResult,
  CheckpointExtendResult,
  ChatReleaseResult,
  ChatSkipResult,
  CheckpointRemoveResult,
  HandoverRemoveResult,
  LeadRevokeResult,
  LockReleaseResult,
  ReplicaEvictResult,
  YieldCancelResult,
} from './interventions.js'
import type {
  ConditionOptions,
  EvictOptions,
  GrantOptions,
  HandoverRemoveOptions,
  LeadRevokeOptions,
  YieldCancelOptions,
  YieldOptions,
} from './options.js'

export type * from './interventions.js'
export type { ConditionOptions, EvictOptions, GrantOptions, LeadRevokeOptions, YieldOptions } from './options.js'
export { operatorName } from './audit.js'

/**
 * Operator interventions on live coordination state: each one is one Lua script, conditioned on what
 * the operator saw, and each leaves an audit record in the event stream. The CLI and the dashboard
 * call these; so do tests that play the operator. Each resource's interventions live in their own
 * module (chat, lead, lock, checkpoint, handover, replica); all run through one InterventionRunner.
 */
export class CoordinationAdmin {
  readonly keys: KeyLayout
  readonly redis: RedisClient
  private readonly backend: RedisBackend
  private readonly ctx: AdminContext

  constructor(options: RedisConnectionOptions = {}) {
    const resolved = resolveRedis(options)
    const { redis, keys, commandTimeoutMs: timeout } = resolved
    this.redis = redis
    this.keys = keys
    this.backend = new RedisBackend(resolved)
    const audit = new AuditWriter(redis, keys, timeout, resolved.eventsMaxLen)
    this.ctx = {
      keys,
      scripts: new ScriptRunner(redis, timeout),
      reader: new StateReader(redis, keys, { timeoutMs: timeout }),
      backend: this.backend,
      idleKeyTtlMs: resolved.idleKeyTtlMs,
      audit,
      runner: new InterventionRunner(audit),
    }
  }

  /**
   * Ask the leader of `name` to step down; its campaigning standbys take over (the leader calls
   * onFollower('yield'), releases, and sits out). With `audit: true`, an audit record is written.
   */
  async requestYield(name: string, opts: YieldOptions = {}): Promise<YieldResult & { audit?: AuditOutcome }> {
    return requestYield(this.ctx, name, opts)
  }

  /**
   * Revoke the holder of a chat's turn (`chat release`): the fence is bumped, so the old holder's
   * renewals answer 'revoked' and its fenced checkpoint writes are refused; the next live ticket is
   * granted at once.
   */
  async releaseChat(key: string, opts: ConditionOptions & GrantOptions = {}): Promise<ChatReleaseResult & { audit: AuditOutcome }> {
    return releaseChat(this.ctx, key, opts)
  }

  /** Drop one queued ticket from a chat (`chat skip`); its waiting acquireTurn rejects with reason 'dropped'. */
  async skipTicket(
    key: string,
    ticket: number,
    opts: ConditionOptions & GrantOptions = {},
  ): Promise<ChatSkipResult & { audit: AuditOutcome }> {
    return skipTicket(this.ctx, key, ticket, opts)
  }

  /**
   * Revoke a lead whose holder does not answer (`provider yield --force`): the fence is bumped and the
   * standbys are woken. The old holder learns it at its next renewal; a hung process may still use
   * its transport until its own local deadline passes.
   */
  async revokeLead(name: string, opts: LeadRevokeOptions = {}): Promise<LeadRevokeResult & { audit: AuditOutcome }> {
    return revokeLead(this.ctx, name, opts)
  }

  /**
   * Withdraw a pending yield request of a lead, or the reservation a targeted request or revocation
   * left (`provider yield --cancel`), conditioned on the request the operator saw (`ifRequestedAt`,
   * its Redis ms) and optionally the lead's fence. The standbys are woken: any of them may take a
   * free lead at once.
   */
  async cancelYield(name: string, opts: YieldCancelOptions = {}): Promise<YieldCancelResult & { audit: AuditOutcome }> {
    return cancelYield(this.ctx, name, opts)
  }

  /** Force-release a fenced lock (`lock release`): the token is cleared and the fence bumped. */
  async releaseLock(key: string, opts: ConditionOptions = {}): Promise<LockReleaseResult & { audit: AuditOutcome }> {
    return releaseLock(this.ctx, key, opts)
  }

  /** Delete a checkpoint, compare-and-set on the revision the operator saw (`checkpoint rm`). */
  async removeCheckpoint(
    key: string,
    revision: number,
    opts: AuditOptions = {},
  ): Promise<CheckpointRemoveResult & { audit: AuditOutcome }> {
    return removeCheckpoint(this.ctx, key, revision, opts)
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
    return extendCheckpoint(this.ctx, key, revision, ttlMs, opts)
  }

  /**
   * Remove a handover marker (`handover rm`), only if the incarnation that left it (and, given, the
   * wait it marks: its `since`) is still the one the operator saw. The next replica to take the chat
   * applies no fallback.
   */
  async removeHandover(key: string, opts: HandoverRemoveOptions): Promise<HandoverRemoveResult & { audit: AuditOutcome }> {
    return removeHandover(this.ctx, key, opts)
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
    return removeCheckpoints(this.ctx, entries, opts)
  }

  /**
   * Bulk clean-up of handover markers (`handover rm --owner-dead`): each marker is removed by its own
   * script conditioned on the incarnation and wait listed; one audit record with the counts.
   */
  removeHandovers(
    entries: Array<{ key: string; incarnation: string; since: number | null }>,
    opts: BulkOptions = {},
  ): Promise<BulkResult & { audit: AuditOutcome }> {
    return removeHandovers(this.ctx, entries, opts)
  }

  /**
   * Treat a replica as dead now (`replica evict`): its heartbeat goes (a tombstone refuses its later
   * beats, so its coordinator drops everything and emits coordination:evicted), then each chat and
   * lead it held or waited for is cleaned: turns revoked with a fence bump, tickets dropped, leads
   * revoked, the next waiters granted.
   */
  async evictReplica(replicaId: string, opts: EvictOptions): Promise<ReplicaEvictResult & { audit: AuditOutcome }> {
    return evictReplica(this.ctx, replicaId, opts)
  }

  /**
   * Refuse before any write when the audit record could not be written (an ACL user without XADD or
   * the events key, a Redis at maxmemory): an intervention is done and recorded, or not done. The CLI
   * asks before its confirmation question; each intervention asks again (answered once per admin).
   */
  async checkAudit(): Promise<void> {
    return this.ctx.audit.check()
  }

  async close(): Promise<void> {
    await this.backend.close()
  }
}
