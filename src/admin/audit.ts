import { userInfo, hostname } from 'node:os'
import type { KeyLayout } from '../keys.js'
import { withTimeout, type RedisClient } from '../connection.js'
import { errorFromRedis } from '../errors/from-redis.js'
import type { AuditOptions, AuditOutcome } from './interventions.js'

/** Fields of an audit record, in the order they are written (the order `events` prints them). */
export type AuditFields = Record<string, unknown>

/** An audit record's fields and what the intervention did: a status of its result, or 'unknown'. */
export type AuditRecord = AuditFields & { result: string }

export function operatorName(): string {
  let user = 'unknown'
  try {
    user = userInfo().username
  } catch {
    // no passwd entry (containers)
  }
  return `${user}@${hostname()}`
}

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

/**
 * The audit trail of interventions: records in the event stream, in the format replicas use (JSON in
 * field `e`), and the check that such a record can be written at all, made before any write.
 */
export class AuditWriter {
  private checked: Promise<void> | undefined

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyLayout,
    private readonly timeoutMs: number,
    private readonly eventsMaxLen: number,
  ) {}

  /**
   * Refuse before any write when the audit record could not be written (an ACL user without XADD or
   * the events key, a Redis at maxmemory): an intervention is done and recorded, or not done. Redis
   * checks the ACL of an XADD before its arguments, and refuses a MAXLEN that is not a number
   * before it writes anything: that refusal is the answer "you may". Once per admin; a failed check
   * is asked again next time.
   */
  async check(): Promise<void> {
    this.checked ??= this.probe()
    try {
      await this.checked
    } catch (err) {
      this.checked = undefined
      throw err
    }
  }

  private async probe(): Promise<void> {
    try {
      await withTimeout(this.redis.call('XADD', this.keys.events, 'MAXLEN', '~', 'not-a-number', '*', 'e', '{}'), this.timeoutMs, 'XADD')
    } catch (err) {
      if (err instanceof Error && /^ERR value is not an integer/.test(err.message)) return
      throw errorFromRedis(err, this.keys.events)
    }
    throw new Error('internal: Redis accepted an XADD with MAXLEN not-a-number')
  }

  /**
   * Append the audit record of an intervention; `command` is the command line recorded unless the
   * operator gave its own. Best effort: a refused or failed write is reported in the result, never
   * thrown, so it cannot hide what the intervention did. The XADD is sent before this first awaits,
   * so a caller that does not wait for it still has it queued on the connection behind its script.
   */
  async write(opts: AuditOptions, command: string, record: AuditRecord): Promise<AuditOutcome> {
    const event = {
      type: 'intervention',
      at: Date.now(),
      by: opts.by ?? operatorName(),
      reason: opts.reason ?? null,
      command: opts.command ?? command,
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
}
