/**
 * Answers of the CLI made comparable across a moment: the numbers of time fields (`…Ms`, `…At`) and
 * durations and dates inside text become placeholders; everything else (keys, replicas, fences,
 * tickets, revisions, verdicts, findings) stays, so two answers equal under it say the same thing.
 */
export function timeless(v: unknown, field = ''): unknown {
  if (Array.isArray(v)) return v.map((x) => timeless(x))
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, timeless(x, k)]))
  if (typeof v === 'number' && /(Ms|At|AtMs)$/.test(field)) return '<time>'
  if (typeof v === 'string')
    return v.replace(/(?:expired )?(?:\d+(?:\.\d+)?(?:ms|s|m|h|d)\s?)+(?: ago)?/g, '<dur>').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<date>')
  return v
}
