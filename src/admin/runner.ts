import type { KeyLayout } from '../keys.js'
import type { RedisBackend } from '../coordinator/redis-backend.js'
import type { ScriptRunner } from '../scripts/runner.js'
import type { StateReader } from '../state/reader.js'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { OutcomeUnknownError } from '../errors/outcome-unknown-error.js'
import type { AuditFields, AuditRecord, AuditWriter } from './audit.js'
import type { AuditOptions, AuditOutcome } from './interventions.js'

/** What every intervention module works with: one per CoordinationAdmin, built by it. */
export interface AdminContext {
  readonly keys: KeyLayout
  readonly scripts: ScriptRunner
  readonly reader: StateReader
  /** The runtime's own yield request (an operator's `provider yield` asks what a replica would). */
  readonly backend: RedisBackend
  /** The TTL the scripts give a chat's keys once nothing holds or waits for it. */
  readonly idleKeyTtlMs: number
  readonly audit: AuditWriter
  readonly runner: InterventionRunner
}

/** One conditioned script of an intervention, and what an operator needs when it goes unanswered. */
export interface ScriptCall<R> {
  /** The command as the operator would type it: what an OutcomeUnknownError names, and the audit record's default. */
  command: string
  /** How to learn whether a call sent and not answered was applied. */
  check: string
  /** Send the script (and validate what must be validated after the audit check). */
  send: () => Promise<R>
}

/** A whole intervention: its script, the result its caller gets, and the audit record of either. */
export interface Intervention<R, T> extends ScriptCall<R> {
  /** What the audit record of a call not answered is pinned to (what the operator saw). */
  pinned: AuditFields
  /** The caller's result from the script's reply (an eviction's clean-up runs here). */
  outcome: (reply: R) => T | Promise<T>
  /** The audit record of the result: what was done, or what was found instead. */
  record: (result: T) => AuditRecord
}

/** The audit record of a call not answered: who asked, and what it was pinned to. */
interface UnknownRecord {
  opts: AuditOptions
  pinned: AuditFields
}

/**
 * The one sequence every intervention follows — audit check, script, audit record — and the one
 * place a call sent and not answered becomes OutcomeUnknownError.
 */
export class InterventionRunner {
  constructor(private readonly audit: AuditWriter) {}

  /** An intervention from start to end; its result carries whether its audit record was written. */
  async run<R, T extends object>(opts: AuditOptions, i: Intervention<R, T>): Promise<T & { audit: AuditOutcome }> {
    await this.audit.check()
    const reply = await this.send(i, { opts, pinned: i.pinned })
    const result = await i.outcome(reply)
    const audit = await this.audit.write(opts, i.command, i.record(result))
    return { ...result, audit }
  }

  /** One script after the audit check, with no record of its own (an entry of a bulk clean-up). */
  async attempt<R>(call: ScriptCall<R>): Promise<R> {
    await this.audit.check()
    return this.send(call)
  }

  /**
   * A call sent and not answered (Redis did not answer within the timeout, the connection dropped)
   * may have been applied: OutcomeUnknownError, with how to learn it. Its audit record (result
   * 'unknown', with what it was pinned to) is sent behind it on the same connection, not waited for:
   * Redis runs both, or drops both with the connection (a paused Redis drops a closed client's
   * waiting commands).
   */
  async send<R>(call: ScriptCall<R>, unknown?: UnknownRecord): Promise<R> {
    try {
      return await call.send()
    } catch (err) {
      if (!(err instanceof CoordinationUnavailableError && err.reason === 'unreachable')) throw err
      if (unknown) void this.audit.write(unknown.opts, call.command, { ...unknown.pinned, result: 'unknown' })
      throw new OutcomeUnknownError(call.command, call.check, { cause: err })
    }
  }
}

/** A script's reply with the names the operator used, right after its status (the order --json prints). */
export function named<R extends { status: string }, N extends object>(reply: R, names: N): R & N {
  const { status, ...rest } = reply
  return { status, ...names, ...rest } as R & N
}

/** How to learn whether a fence-bumping intervention was applied. */
export function fencePast(name: string, fence: number | null | undefined): string {
  return fence === null || fence === undefined
    ? `look at the holder and fence of ${name}`
    : `it was applied when ${name} is past fence ${fence} (the one it was pinned to)`
}
