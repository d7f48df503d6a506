import { InvalidArgumentError, Option } from 'commander'
import type { Context } from '../context.js'
import { ConfigurationError, parseDuration, type Corrupt, type Listing } from '../lib.js'
import { usage } from '../output/errors.js'

/** `--expiring 5s` and friends: a duration or a usage error (exit 2) naming the option. */
export function durationOption(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  try {
    return parseDuration(value, flag)
  } catch (err) {
    if (err instanceof ConfigurationError) throw usage(err.message)
    throw err
  }
}

/** Corrupt keys found by listings: reported on stderr, the listing goes on. */
export function printCorrupt(ctx: Context, corrupt: Corrupt[]): void {
  for (const k of corrupt) ctx.err(ctx.c.red(`corrupt: ${k.rawKey}: ${k.error}`))
}

/** After a listing's table: a --limit that cut the scan short, and the corrupt keys. */
export function printScanNotes(ctx: Context, data: { truncated: boolean; corrupt: Corrupt[] }): void {
  if (data.truncated) ctx.err(ctx.c.yellow(`stopped after --limit keys: the listing is partial`))
  printCorrupt(ctx, data.corrupt)
}

/** Scan bookkeeping for --json: how many keys were seen, corrupt ones, truncation. */
export function scanInfo(...listings: Array<Listing<unknown>>): { scanned: number; truncated: boolean; corrupt: Corrupt[] } {
  return {
    scanned: listings.reduce((n, l) => n + l.scanned, 0),
    truncated: listings.some((l) => l.truncated),
    corrupt: listings.flatMap((l) => l.corrupt),
  }
}

/** Redis's now and the live replicas (liveness of every holder, from the replica index), read together. */
export async function nowAndReplicas(ctx: Context) {
  const [nowMs, replicas] = await Promise.all([ctx.reader.now(), ctx.reader.liveReplicas()])
  return { nowMs, replicas }
}

export const limitOption = () =>
  new Option('--limit <keys>', 'stop scanning after this many keys per kind (a bounded look at a huge keyspace)').argParser((v) => {
    const n = Number(v)
    if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('a positive integer is expected')
    return n
  })

export function examples(...lines: string[]): string {
  return `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  ${l}`).join('\n')}`
}
