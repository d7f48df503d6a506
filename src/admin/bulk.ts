/** A bulk clean-up (`checkpoints rm --flow …`, `handover rm --owner-dead`): many conditioned scripts, one audit record. */
import { DEFAULTS } from '../defaults.js'
import type { AuditOutcome, BulkCounts, BulkEntryResult, BulkOptions, BulkResult } from './interventions.js'
import type { AdminContext } from './runner.js'

/** Keys of each outcome a bulk clean-up's audit record names (the counts are always whole). */
const BULK_KEYS_RECORDED = 100

/**
 * Run one conditioned script per entry in bounded batches, count the outcomes, write one audit record.
 * An entry whose script fails is counted as failed and the rest go on: each entry stands alone.
 */
export async function runBulk<E extends { key: string }>(
  ctx: AdminContext,
  kind: 'checkpoint' | 'handover',
  entries: E[],
  one: (e: E) => Promise<{ status: 'removed' | 'changed' | 'absent' }>,
  opts: BulkOptions,
  command: string,
): Promise<BulkResult & { audit: AuditOutcome }> {
  const size = Math.max(1, Math.floor(opts.batchSize ?? DEFAULTS.bulkBatchSize))
  await ctx.audit.check()
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
  const audit = await ctx.audit.write(opts, command, {
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
