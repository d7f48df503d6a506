/**
 * What a command that talks to Redis gets: the checked target, its one connection, the shared reader
 * (and the admin for interventions), the colour decision and the output streams. Opening it also
 * refuses a key schema newer than this release understands (every read and write; `doctor` reports it
 * as a check instead).
 */
import type { Command } from 'commander'
import type { ChalkInstance } from 'chalk'
import { KeyLayout, loadWriteSide, type CoordinationAdmin, type Io, type RedisClient, type StateReader } from './lib.js'
import { makeColour } from './output/colour.js'
import { headersWanted, outputFormat, type OutputFormat, type Printer } from './output/format.js'
import { ConnectionFailed, corrupt, isReplyError } from './output/errors.js'
import { openConnection, type Connection } from './connection.js'
import { globalOptions, resolveTarget, type GlobalOptions, type Target } from './target.js'

export interface Context extends Printer {
  opts: GlobalOptions
  target: Target
  url: string
  keys: KeyLayout
  io: Io
  redis: RedisClient
  reader: StateReader
  /** The operator interventions (only for a context opened with `admin: true`). */
  readonly admin: CoordinationAdmin
  c: ChalkInstance
  format: OutputFormat
  headers: boolean
  /** Machine output (-o json or jsonl): the human preview of a write goes to stderr. */
  json: boolean
  /** Passwords to scrub from any message. */
  secrets: string[]
  out(text: string): void
  err(text: string): void
  /** The error as the connection saw it (its reported cause), for the one-line message. */
  explain(err: unknown): unknown
  close(): Promise<void>
}

export interface OpenOptions {
  /** Refuse a schema newer than this release (default true; doctor reports it as a check). */
  schema?: boolean
  /** Load the write side: interventions (CoordinationAdmin). */
  admin?: boolean
}

/** Refuse what this release cannot read: a key schema newer than this release's (the reader decides). */
export async function checkSchema(io: Io, reader: StateReader): Promise<void> {
  const problem = io.StateReader.schemaProblem(await reader.schema())
  if (problem) throw corrupt(`prefix ${reader.keys.prefix}: ${problem}: upgrade botmesh-coord`)
}

export async function openContext(cmd: Command, o: OpenOptions = {}): Promise<Context> {
  const opts = globalOptions(cmd)
  const target = resolveTarget(cmd)
  const [conn, write]: [Connection, Awaited<ReturnType<typeof loadWriteSide>> | null] = await Promise.all([
    openConnection(target),
    o.admin ? loadWriteSide() : null,
  ])
  const keys = new KeyLayout(target.prefix, conn.layout)
  const reader = new conn.io.StateReader(conn.redis, keys, { timeoutMs: target.timeoutMs })
  let admin: CoordinationAdmin | null = null
  const ctx: Context = {
    opts,
    target,
    url: target.url,
    keys,
    io: conn.io,
    redis: conn.redis,
    reader,
    get admin() {
      if (!write) throw new Error('internal: this command opened its context without the write side')
      admin ??= new write.CoordinationAdmin({
        redis: conn.redis,
        prefix: target.prefix,
        layout: conn.layout,
        commandTimeoutMs: target.timeoutMs,
      })
      return admin
    },
    c: makeColour({ color: opts.color }),
    format: outputFormat(cmd),
    headers: headersWanted(cmd),
    json: outputFormat(cmd) === 'json' || outputFormat(cmd) === 'jsonl',
    secrets: target.secrets,
    out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
    err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
    explain: (err) => {
      const cause = conn.cause()
      return cause && !isReplyError(err) && !(err instanceof ConnectionFailed) ? new ConnectionFailed(cause) : err
    },
    close: async () => {
      await admin?.close().catch(() => {})
      await conn.close()
    },
  }
  // Fail here, with one line, when Redis is down, refuses us, or holds a schema we cannot read.
  try {
    await conn.check(reader.now())
    if (o.schema !== false) await checkSchema(conn.io, reader)
  } catch (err) {
    await ctx.close()
    throw err
  }
  return ctx
}
