import type { Command } from 'commander'
import type { ChalkInstance } from 'chalk'
import { Redis } from 'ioredis'
import {
  CoordinationAdmin,
  DEFAULT_URL,
  KeyLayout,
  StateReader,
  connect,
  maskUrl,
  validatePrefixForCli,
  withConnectionCause,
  type Layout,
} from './lib.js'
import { makeColour } from './output/colour.js'
import { usage } from './output/errors.js'
import type { RedisClient } from '../src/connection.js'

/** Global options, each with an environment variable (declared in cli.ts). */
export interface GlobalOptions {
  url: string
  prefix: string
  layout?: Layout | 'auto'
  json?: boolean
  color?: boolean
  tlsCa?: string
  readOnly?: boolean
  timeout?: string
}

export interface Context {
  opts: GlobalOptions
  url: string
  keys: KeyLayout
  redis: RedisClient
  reader: StateReader
  admin: CoordinationAdmin
  c: ChalkInstance
  json: boolean
  /** Passwords to scrub from any message. */
  secrets: string[]
  out(text: string): void
  err(text: string): void
}

export function globalOptions(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions
}

function secretsOf(url: string): string[] {
  try {
    const u = new URL(url)
    return [u.password, decodeURIComponent(u.password)].filter(Boolean)
  } catch {
    return []
  }
}

/** The URL and the secrets to scrub, for error messages even before a connection exists. */
export function urlContext(cmd: Command): { url: string; secrets: string[] } {
  const o = globalOptions(cmd)
  const url = o.url || DEFAULT_URL
  return { url, secrets: secretsOf(url) }
}

/** Is this server a Redis Cluster node? (INFO cluster; a failing INFO is left to the real command.) */
export async function detectLayout(url: string, tlsCa: string | undefined, timeoutMs = 5000): Promise<Layout> {
  const probe = connect({ url, layout: 'standalone', tlsCaFile: tlsCa, failFast: true, connectionName: 'botmesh-coord' }) as Redis
  // ioredis rejects a command on a refused connection with "Connection is closed."; the cause
  // (ECONNREFUSED, ENOTFOUND, a TLS failure) only reaches the 'error' event: keep it for the message.
  let cause: Error | null = null
  probe.on('error', (e: Error) => (cause ??= e))
  let timer: NodeJS.Timeout | undefined
  try {
    const info = await Promise.race([
      probe.info('cluster'),
      new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error('connect ETIMEDOUT')), timeoutMs))),
    ])
    return /cluster_enabled:1/.test(info) ? 'cluster' : 'standalone'
  } catch (err) {
    throw withConnectionCause(err, cause)
  } finally {
    clearTimeout(timer)
    endQuietly(probe)
  }
}

/**
 * Open what a command needs: the client (layout auto-detected), the shared reader and admin, the
 * colour decision. Always closed by `run()` in cli.ts, also on errors.
 */
export async function openContext(cmd: Command): Promise<Context> {
  const opts = globalOptions(cmd)
  const url = opts.url || DEFAULT_URL
  const prefix = validatePrefixForCli(opts.prefix)
  const timeoutMs = opts.timeout ? Number(opts.timeout) : 5000
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw usage(`--timeout must be a positive number of milliseconds`)
  const layoutOpt = opts.layout ?? 'auto'
  if (!['auto', 'standalone', 'cluster'].includes(layoutOpt)) throw usage(`--layout must be standalone, cluster or auto, not ${layoutOpt}`)
  const layout: Layout = layoutOpt === 'auto' ? await detectLayout(url, opts.tlsCa, timeoutMs) : layoutOpt
  const keys = new KeyLayout(prefix, layout)
  const redis = connect({ url, layout, tlsCaFile: opts.tlsCa, failFast: true, connectionName: 'botmesh-coord' })
  let cause: Error | null = null
  redis.on('error', (e: Error) => (cause ??= e))
  const json = Boolean(opts.json)
  const ctx: Context = {
    opts,
    url,
    keys,
    redis,
    reader: new StateReader(redis, keys, { timeoutMs }),
    admin: new CoordinationAdmin({ redis, prefix, layout, commandTimeoutMs: timeoutMs }),
    c: makeColour({ color: opts.color }),
    json,
    secrets: secretsOf(url),
    out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
    err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
  }
  // Fail here, with one line, when Redis is down or refuses us.
  try {
    await ctx.reader.now()
  } catch (err) {
    await closeContext(ctx)
    throw withConnectionCause(err, cause)
  }
  return ctx
}

export async function closeContext(ctx: Context | null): Promise<void> {
  if (!ctx) return
  if (ctx.redis.status === 'end') return
  await ctx.redis.quit().catch(() => endQuietly(ctx.redis))
}

/**
 * Disconnect unless the connection already ended: ioredis' disconnect() of a stream that failed to
 * connect arms an un-referenced 2 s timer that would keep the CLI alive after its answer.
 */
function endQuietly(client: RedisClient): void {
  if (client.status !== 'end') client.disconnect()
}

export function describeTarget(ctx: Context): string {
  return `${maskUrl(ctx.url)} prefix=${ctx.keys.prefix} layout=${ctx.keys.layout}`
}
