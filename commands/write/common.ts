/**
 * The one flow every intervention follows: refuse in read-only mode before connecting; read the state
 * and show what will be done (holder, fence, what happens next); --dry-run stops there; ask y/N on a
 * terminal (--yes skips it; without a terminal and without --yes: refused); run the one conditioned
 * script; print what happened, or what changed instead (EXIT.conflict); warn when the audit record
 * could not be written.
 */
import { Option, type Command } from 'commander'
import { fromFile, fromRefusal } from '../snapshot/from.js'
import { openContext, type Context } from '../context.js'
import { globalOptions, urlContext } from '../target.js'
import type { ChalkInstance } from 'chalk'
import {
  CoordinationUnavailableError,
  formatDuration,
  liveness,
  OutcomeUnknownError,
  type AuditOutcome,
  type LeaseHealth,
  type Liveness,
} from '../lib.js'
import { canPrompt, confirm } from '../output/confirm.js'
import { aclDenial, refused, unreachable, usage } from '../output/errors.js'
import { EXIT, type ExitCode } from '../output/exit-codes.js'
import { jsonOut } from '../output/format.js'
import { reportError } from '../output/report.js'
import { showNames } from '../output/safe-text.js'

export interface WriteFlags {
  yes?: boolean
  dryRun?: boolean
  reason?: string
}

/** What an intervention will do, shown before it is done. */
export interface Plan {
  /** One line: "release the turn of chat:42". */
  title: string
  /** Facts the decision rests on, and what happens next. */
  lines: string[]
  /** Shown instead of `lines` with --dry-run (a bulk clean-up lists every entry there). */
  dryRunLines?: string[]
  /** Said in yellow before the question. */
  warnings?: string[]
  /** The same for --json (with --dry-run). */
  json: Record<string, unknown>
  /** The command line recorded in the audit trail (no global options: no URL, no password). */
  command: string
  /** The read command that shows whether it was applied, when Redis does not answer (e.g. `chat inspect chat:42`). */
  inspect: string
  /** Run the one script. */
  execute(): Promise<Outcome>
}

export interface Outcome {
  code: ExitCode
  /** What happened, for people (stdout; on a conflict the first line goes to stderr). */
  lines: string[]
  json: Record<string, unknown>
  audit?: AuditOutcome
}

/** The options every write command has. */
export function withWriteOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('-y, --yes', 'do it without asking (needed without a terminal)'))
    .addOption(new Option('--dry-run', 'only show what would be done; change nothing'))
    .addOption(new Option('--reason <text>', 'why: recorded in the audit trail'))
}

export function parseFence(v: string | undefined, flag = '--if-fence'): number | null {
  if (v === undefined) return null
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw usage(`${flag} must be a fence number, not ${JSON.stringify(v)}`)
  return Number(v)
}

export function parsePositive(v: string, what: string): number {
  if (!/^\d+$/.test(v) || Number(v) <= 0 || !Number.isSafeInteger(Number(v)))
    throw usage(`${what} must be a positive integer, not ${JSON.stringify(v)}`)
  return Number(v)
}

/** An outcome where the state changed since the operator looked: nothing done. */
export function changed(what: string, json: Record<string, unknown>, audit?: AuditOutcome): Outcome {
  return {
    code: EXIT.conflict,
    lines: [`the state changed since you looked: ${what}; nothing done`],
    json: { ...json, changed: true },
    audit,
  }
}

/**
 * Wrap an intervention's action. `plan` reads the state and returns what it will do (or throws a
 * CliError: not found, usage, a conflict seen already while reading).
 */
export function writeAction<Args extends unknown[]>(
  name: string,
  plan: (ctx: Context, flags: WriteFlags & Record<string, unknown>, ...args: Args) => Promise<Plan>,
  /** Checks of the command line that need no Redis (a usage error before connecting). */
  check?: (flags: WriteFlags & Record<string, unknown>, ...args: Args) => void,
): (...raw: unknown[]) => Promise<void> {
  return async (...raw: unknown[]) => {
    const cmd = raw[raw.length - 1] as Command
    const args = raw.slice(0, -2) as Args
    const flags = cmd.opts() as WriteFlags & Record<string, unknown>
    let ctx: Context | null = null
    try {
      if (globalOptions(cmd).readOnly) {
        throw refused(`read-only mode (--read-only / BOTMESH_READ_ONLY): ${name} changes state; nothing done`)
      }
      if (fromFile(cmd) !== undefined) throw fromRefusal(`${name} changes state: it`)
      check?.(flags, ...args)
      ctx = await openContext(cmd, { admin: true })
      const p = await plan(ctx, flags, ...args)
      process.exitCode = await carryOut(ctx, p, flags, name, args)
    } catch (err) {
      const hint = aclDenial(err instanceof Error ? err.message : String(err)) ? `; ${name} needs ${ACL_NEEDS}` : ''
      process.exitCode = reportError(cmd, ctx ? ctx.explain(err) : err, { ...urlContext(cmd), names: args }, hint)
    } finally {
      await ctx?.close()
    }
  }
}

/** What the ACL user of an operator needs for interventions (README: "ACL"). */
export const ACL_NEEDS =
  '+evalsha +eval +time +@read +hset +hdel +hincrby +zrem +zpopmin +del +pexpire +publish +xadd on ~<prefix>:* and &<prefix>:wake:*'

async function carryOut(ctx: Context, raw: Plan, flags: WriteFlags, name: string, args: unknown[]): Promise<ExitCode> {
  const { c } = ctx
  // The plan and the outcome are text composed around outside strings: those the command was given
  // and the plan's data names (keys, replica ids, incarnations, flows) are shown escaped.
  const shown = (t: string) => showNames(t, args, raw.json)
  const p: Plan = {
    ...raw,
    title: shown(raw.title),
    lines: raw.lines.map(shown),
    dryRunLines: raw.dryRunLines?.map(shown),
    warnings: raw.warnings?.map(shown),
  }
  // The plan is for people: on stdout normally, on stderr when stdout carries JSON.
  const show = ctx.json ? ctx.err : ctx.out
  const lines = flags.dryRun && p.dryRunLines ? p.dryRunLines : p.lines
  show(`${c.bold(p.title)}\n${lines.map((l) => `  ${l}`).join('\n')}`)
  for (const w of p.warnings ?? []) show(c.yellow(`  ! ${w}`))
  if (flags.dryRun) {
    if (ctx.json) ctx.out(jsonOut('intervention', { command: p.command, dryRun: true, plan: p.json }))
    else ctx.out(c.dim('dry run: nothing changed'))
    return EXIT.ok
  }
  // Before the question: a user who could not leave the audit record is refused with nothing done.
  await ctx.admin.checkAudit().catch((err: unknown) => {
    if (!(err instanceof CoordinationUnavailableError && err.reason === 'unreachable')) throw err
    throw unreachable(`Redis unreachable: it did not answer the audit check before ${name} (${err.message}); nothing done`)
  })
  if (!flags.yes) {
    if (!canPrompt()) throw refused(`not a terminal: ${name} needs --yes to confirm (or --dry-run to only look); nothing done`)
    if (!(await confirm(`${p.title}?`))) throw refused('not confirmed; nothing done')
  }
  const done = await p.execute().catch((err: unknown) => {
    if (!(err instanceof OutcomeUnknownError)) throw err
    // The script may still be waiting in Redis (a paused or busy server): the command ends now, its
    // connection dropped, and says how to learn what happened.
    ctx.redis.disconnect()
    return unknownOutcome(ctx, err, p.inspect)
  })
  const outcome = { ...done, lines: done.lines.map((l) => showNames(l, args, raw.json, done.json)) }
  if (ctx.json) {
    ctx.out(jsonOut('intervention', { command: p.command, reason: flags.reason ?? null, ...outcome.json, audit: outcome.audit ?? null }))
  }
  if (outcome.code === EXIT.ok) {
    if (!ctx.json) ctx.out(outcome.lines.map((l, i) => (i === 0 ? c.green(l) : `  ${l}`)).join('\n'))
  } else {
    ctx.err(`botmesh-coord: ${outcome.lines[0]}`)
    if (!ctx.json) for (const l of outcome.lines.slice(1)) ctx.err(`  ${l}`)
  }
  const wake = outcome.json.wakeRefused
  if (typeof wake === 'string' && wake) {
    // Always a PUBLISH on a wake channel: the channel refused (no &<prefix>:wake:*), or the command (-publish).
    const grant = /channel/i.test(wake) ? '&<prefix>:wake:*' : '+publish'
    ctx.err(
      c.yellow(
        `warning: applied, but Redis refused the wake-up PUBLISH (the ACL user lacks ${grant}: ${wake.replace(/\s*script: [\s\S]*$/, '')}); the replicas concerned learn it at their next renewal or poll, within a third of their lease`,
      ),
    )
  }
  if (outcome.audit && !outcome.audit.written) {
    const denied = aclDenial(outcome.audit.error)
    ctx.err(c.yellow(`warning: the audit record was not written (${denied ?? outcome.audit.error}); the intervention above stands`))
  }
  return outcome.code
}

/** An intervention sent without an answer: neither done nor failed, with the command that tells which. */
function unknownOutcome(ctx: Context, err: OutcomeUnknownError, inspect: string): Outcome {
  const why = err.cause instanceof Error ? err.cause.message.replace(/^Redis unreachable:\s*/, '') : 'no answer'
  return {
    code: EXIT.unknown,
    lines: [
      `outcome unknown: ${why}; ${err.intervention} and its audit record, sent behind it, may both have been applied or neither; ${err.check}: ${ctx.cmdline(`botmesh-coord ${inspect}`)}`,
    ],
    json: { outcome: 'unknown', error: why, check: err.check, inspect },
  }
}

/** Who beats now, for a plan (the health model, src/state/health.ts, decides what each state means). */
export async function liveAt(ctx: Context, nowMs: number): Promise<Liveness> {
  return liveness((await ctx.reader.liveReplicas()).items, nowMs)
}

/** A holder's or leader's state in a plan: alive, late (frozen or cut off), or why not. */
export function holderWords(c: ChalkInstance, health: LeaseHealth): string {
  if (health.state === 'ok') return c.green('alive')
  if (health.state === 'late') return c.yellow(`late: not renewed for ${formatDuration(health.lastRenewalAgoMs ?? 0)}`)
  return c.red(health.holderAlive === false ? (health.state === 'stale' ? 'restarted' : 'no heartbeat') : health.state)
}
