/**
 * What a command that talks to Redis gets: the checked target, its one connection, the shared reader
 * (and the admin for interventions), the colour decision and the output streams. Opening it also
 * refuses a key schema newer than this release understands (every read and write; `doctor` reports it
 * as a check instead).
 */
import type { Command } from 'commander'
import type { ChalkInstance } from 'chalk'
import {
  CoordinationUnavailableError,
  KeyLayout,
  loadWriteSide,
  type CoordinationAdmin,
  type Io,
  type RedisClient,
  type StateReader,
} from './lib.js'
import { makeColour } from './output/colour.js'
import { headersWanted, outputFormat, type OutputFormat, type Printer } from './output/format.js'
import { CliError, ConnectionFailed, corrupt, isReplyError } from './output/errors.js'
import { openConnection, type Connection } from './connection.js'
import { connectionWords, globalOptions, resolveTarget, withConnection, type GlobalOptions, type Target } from './target.js'
import { checkAgainst, fromFile, fromRefusal, loadSnapshot, snapshotHeader } from './snapshot/from.js'

export interface Context extends Printer {
  opts: GlobalOptions
  target: Target
  url: string
  keys: KeyLayout
  io: Io
  /** The live client (null when the command answers from a snapshot: --from). */
  redis: RedisClient
  reader: StateReader
  /** The snapshot file the command answers from (--from), or null for a live Redis. */
  from: string | null
  /** The operator interventions (only for a context opened with `admin: true`). */
  readonly admin: CoordinationAdmin
  c: ChalkInstance
  format: OutputFormat
  headers: boolean
  /** Machine output (-o json or jsonl): the human preview of a write goes to stderr. */
  json: boolean
  /** Passwords to scrub from any message. */
  secrets: string[]
  /** A suggested command line (a fix, a next step) with the connection this command used. */
  cmdline(text: string): string
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
  /**
   * A read-only command whose every read goes through the reader: its reads are sent with the
   * connection and schema check, in the same round trip, and answered once the check passed.
   */
  readsWithCheck?: boolean
}

/** Refuse what this release cannot read: a key schema newer than this release's (the reader decides). */
export async function checkSchema(io: Io, reader: StateReader): Promise<void> {
  let schema: Awaited<ReturnType<StateReader['schema']>>
  try {
    schema = await reader.schema()
  } catch (err) {
    // On a Cluster whose master of the schema's slot is down (failing over), the reads of the other
    // masters still go on: they say which master they could not read.
    if (reader.source.slotOwners && err instanceof CoordinationUnavailableError && err.reason === 'unreachable') return
    throw err
  }
  const problem = io.StateReader.schemaProblem(schema)
  if (problem) throw corrupt(`prefix ${reader.keys.prefix}: ${problem}: upgrade botmesh-coord`)
}

/** The printing half of a context, from the command line alone (commands that read files, not Redis). */
export function printerOf(cmd: Command) {
  return printing(cmd, globalOptions(cmd))
}

function printing(cmd: Command, opts: GlobalOptions) {
  return {
    c: makeColour({ color: opts.color }),
    format: outputFormat(cmd),
    headers: headersWanted(cmd),
    json: outputFormat(cmd) === 'json' || outputFormat(cmd) === 'jsonl',
    out: (t: string) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
    err: (t: string) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
  }
}

/** A context that answers from a snapshot file (--from): its records behind the same reader. */
async function snapshotContext(cmd: Command, path: string, o: OpenOptions): Promise<Context> {
  const opts = globalOptions(cmd)
  if (o.admin) throw fromRefusal('this command changes state: it')
  const { io, snapshot } = await loadSnapshot(path, '--from', !['json', 'jsonl'].includes(outputFormat(cmd)))
  checkAgainst(cmd, snapshot)
  const keys = new KeyLayout(snapshot.target.prefix, snapshot.target.layout)
  const reader = new io.StateReader(new io.RecordedSource(snapshot.records), keys)
  const p = printing(cmd, opts)
  const ctx: Context = {
    opts,
    target: {
      url: snapshot.target.url,
      prefix: keys.prefix,
      layout: keys.layout,
      db: 0,
      sentinel: null,
      sentinelAuth: {},
      timeoutMs: opts.timeout,
      secrets: [],
      context: null,
    },
    url: snapshot.target.url,
    keys,
    io,
    redis: null as unknown as RedisClient,
    reader,
    from: path,
    get admin(): CoordinationAdmin {
      throw fromRefusal('this command changes state: it')
    },
    ...p,
    secrets: [],
    cmdline: (t) => withConnection(t, connectionWords({ url: snapshot.target.url, prefix: keys.prefix, context: null })),
    explain: (err) => err,
    close: async () => {},
  }
  p.err(p.c.dim(snapshotHeader(path, snapshot)))
  if (o.schema !== false) await checkSchema(io, reader)
  return ctx
}

export async function openContext(cmd: Command, o: OpenOptions = {}): Promise<Context> {
  const from = fromFile(cmd)
  if (from !== undefined) return snapshotContext(cmd, from, o)
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
    from: null,
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
    ...printing(cmd, opts),
    secrets: target.secrets,
    cmdline: (t) => withConnection(t, connectionWords(target)),
    explain: (err) => {
      const cause = conn.cause()
      // The CLI's own errors say what happened already (e.g. which Cluster master did not answer).
      return cause && !isReplyError(err) && !(err instanceof ConnectionFailed) && !(err instanceof CliError)
        ? new ConnectionFailed(cause)
        : err
    },
    close: async () => {
      await admin?.close().catch(() => {})
      await conn.close()
    },
  }
  // Fail here, with one line, when Redis is down, refuses us, or holds a schema we cannot read. Redis's
  // clock and the schema are asked together (one round trip).
  const now = reader.now()
  const schema = o.schema !== false ? checkSchema(conn.io, reader) : null
  schema?.catch(() => {})
  const checked = (async () => {
    await conn.check(now)
    await schema
  })()
  if (o.readsWithCheck && !o.admin) {
    reader.answerAfter(checked)
    return ctx
  }
  try {
    await checked
  } catch (err) {
    await ctx.close()
    throw err
  }
  return ctx
}
