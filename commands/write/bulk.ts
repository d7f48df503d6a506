/**
 * Bulk clean-ups (`checkpoints rm --flow …`, `handover rm --owner-dead`) as one plan of the common
 * write flow: the preview lists what was selected (all of it with --dry-run, and in --json), the one
 * question carries the count, and the library removes each entry with its own conditioned script in
 * bounded batches (an entry that changed since it was listed is skipped and counted, never removed),
 * then writes one audit record with the counts.
 */
import type { Context } from '../context.js'
import type { AuditOutcome } from '../lib.js'
import { notFound } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { countProgress } from '../output/progress.js'
import type { Outcome, Plan } from './common.js'

/** Entries listed before the question (--dry-run and --json list them all). */
export const PREVIEW_ENTRIES = 20

/** What the library's bulk removals answer (CoordinationAdmin.removeCheckpoints / removeHandovers). */
interface BulkRun {
  counts: { listed: number; removed: number; changed: number; absent: number; failed: number }
  entries: Array<{ key: string; status: 'removed' | 'changed' | 'absent' | 'failed'; error?: string }>
  audit: AuditOutcome
}

export interface BulkPlanInput<E extends { key: string }> {
  /** 'checkpoints-rm' */
  action: string
  /** Plural noun: "checkpoints", "handover markers". */
  noun: string
  /** What selected them, for people ("flow order, ephemeral, fingerprint not f1a2b3"). */
  selection: string
  /** What selected them, as recorded (and in --json). */
  filter: Record<string, unknown>
  entries: E[]
  /** One line per entry in the preview. */
  line(e: E): string
  /** What the plan says happens to each (after the list). */
  then: string
  warnings?: string[]
  /** The command line as recorded. */
  command: string
  run(o: { onProgress(done: number, total: number): void; filter: Record<string, unknown>; command: string }): Promise<BulkRun>
}

export function bulkPlan<E extends { key: string }>(ctx: Context, p: BulkPlanInput<E>): Plan {
  const n = p.entries.length
  if (n === 0) throw notFound(`no ${p.noun} match (${p.selection}) under prefix ${ctx.keys.prefix}: nothing to remove`)
  const { c } = ctx
  const head = [`selected ${n} ${p.noun}: ${p.selection}`]
  const all = p.entries.map((e) => `  ${p.line(e)}`)
  const tail = [`then     ${p.then}`]
  const more = n - PREVIEW_ENTRIES
  return {
    title: `remove ${n} ${p.noun} (${p.selection})`,
    command: p.command,
    inspect: 'events',
    lines: [
      ...head,
      ...all.slice(0, PREVIEW_ENTRIES),
      ...(more > 0 ? [c.dim(`  … and ${more} more (--dry-run lists them all)`)] : []),
      ...tail,
    ],
    dryRunLines: [...head, ...all, ...tail],
    warnings: p.warnings,
    json: { action: p.action, filter: p.filter, count: n, entries: p.entries },
    execute: async (): Promise<Outcome> => {
      const progress = countProgress(ctx, `removing ${p.noun}`)
      let r: BulkRun
      try {
        r = await p.run({ onProgress: (d, t) => progress.update(d, t), filter: p.filter, command: p.command })
      } finally {
        progress.done()
      }
      const k = r.counts
      const json = { action: p.action, status: 'done', filter: p.filter, counts: k, entries: r.entries }
      const summary = `removed ${k.removed} of ${k.listed} ${p.noun}`
      const lines = [
        k.changed ? `${summary}; ${k.changed} skipped: changed since listed (not removed)` : summary,
        ...(k.absent ? [`${k.absent} were gone already (expired or taken)`] : []),
        ...r.entries.filter((e) => e.status === 'changed').map((e) => `skipped ${e.key}: changed since listed`),
        ...r.entries.filter((e) => e.status === 'failed').map((e) => `failed  ${e.key}: ${e.error ?? '?'}`),
      ]
      // Some were skipped: the state changed since you looked (6); some could not be run: 1.
      const code = k.failed ? EXIT.unsafe : k.changed ? EXIT.conflict : EXIT.ok
      return { code, lines, json, audit: r.audit }
    },
  }
}
