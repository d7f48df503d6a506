/**
 * Where the dashboard's data comes from: its own Redis client that reconnects (the CLI's one-shot
 * commands fail fast instead), the shared StateReader and readDashboard (one bounded read per
 * refresh), the chat detail read, and the interventions of CoordinationAdmin. Counts every Redis
 * command it sends, so the header can show the dashboard's own load.
 */
import {
  KeyLayout,
  maskUrl,
  type ChatDetail,
  type DashboardSnapshot,
  type Io,
  type Layout,
  type RedisClient,
  type WriteSide,
  type StateRecords,
} from '../lib.js'
import { ConnectionFailed, isReplyError } from '../output/errors.js'
import { adminInterventions, type Interventions } from './interventions.js'

export interface DashboardSource {
  /** The URL with its password masked. */
  readonly url: string
  readonly prefix: string
  readonly layout: Layout
  read(): Promise<DashboardSnapshot>
  chat(key: string): Promise<ChatDetail>
  /** Every Redis command sent so far. */
  commandsTotal(): number
  /** The client's state: 'ready', 'connecting', 'reconnecting', 'end'… */
  status(): string
  interventions: Interventions
  close(): Promise<void>
}

export interface SourceOptions {
  /** The library's read and write sides (lib.ts loadIo(), loadWriteSide()). */
  io: Io
  write: WriteSide
  url: string
  prefix: string
  layout: Layout
  tlsCa?: string
  /** redis+sentinel://: the sentinels' own user and password, when they ask for one. */
  sentinelAuth?: { sentinelUsername?: string; sentinelPassword?: string }
  /** How long one refresh may take before it counts as a failure. Default 5 s. */
  timeoutMs?: number
  /** Chats shown at most (readDashboard's topChats). Default 30. */
  topChats?: number
  /** `watch --record`: every refresh's raw records are appended here (RecordingWriter in ./recording.ts). */
  record?: { write(records: StateRecords): void; close(): void }
  /** With `record`: keep conversation state and marker data too. */
  includeState?: boolean
}

export function openSource(o: SourceOptions): DashboardSource {
  const keys = new KeyLayout(o.prefix, o.layout)
  const timeoutMs = o.timeoutMs ?? 5000
  // Not fail-fast: ioredis reconnects with its backoff (at most every 2 s) for as long as we run.
  const { io } = o
  const redis: RedisClient = io.connect({
    url: o.url,
    layout: o.layout,
    tlsCaFile: o.tlsCa,
    ...o.sentinelAuth,
    commandTimeoutMs: timeoutMs,
    connectionName: 'botmesh-coord-watch',
  })
  let lastError: Error | null = null
  redis.on('error', (e: Error) => (lastError = e))
  redis.on('ready', () => (lastError = null))
  // Recording: the reader asks a source that keeps what Redis answered; each refresh's records make one line.
  const recording = o.record ? new io.RecordingSource(new io.RedisSource(redis), keys, o.includeState === true) : null
  const reader = new io.StateReader(recording ?? redis, keys, { timeoutMs })
  const admin = new o.write.CoordinationAdmin({ redis, prefix: o.prefix, layout: o.layout, commandTimeoutMs: timeoutMs })
  let total = 0
  // The client reports why a connection failed on its 'error' event; the command only sees it closed.
  const withCause = (err: unknown) => {
    throw lastError && !isReplyError(err) ? new ConnectionFailed(lastError) : err
  }
  const counted =
    (n: number) =>
    <T>(v: T): T => {
      total += n
      return v
    }
  const base = adminInterventions(admin)
  // An intervention is one script call (EVALSHA, EVAL on a cold script cache).
  const interventions: Interventions = {
    yieldProvider: (...a) => base.yieldProvider(...a).then(counted(1)),
    releaseChat: (...a) => base.releaseChat(...a).then(counted(1)),
    skipTicket: (...a) => base.skipTicket(...a).then(counted(1)),
    removeHandover: (...a) => base.removeHandover(...a).then(counted(1)),
    extendCheckpoint: (...a) => base.extendCheckpoint(...a).then(counted(1)),
  }
  return {
    url: maskUrl(o.url),
    prefix: o.prefix,
    layout: o.layout,
    read: async () => {
      try {
        const snap = await io.readDashboard(reader, { topChats: o.topChats, timeoutMs })
        total += snap.commands
        if (recording) o.record!.write(recording.take())
        return snap
      } catch (err) {
        return withCause(err)
      }
    },
    chat: async (key) => {
      const before = reader.commands
      try {
        return await reader.chat(key)
      } catch (err) {
        return withCause(err)
      } finally {
        total += reader.commands - before
      }
    },
    commandsTotal: () => total,
    status: () => redis.status,
    interventions,
    close: async () => {
      await admin.close().catch(() => {})
      o.record?.close()
      if (redis.status !== 'end') await redis.quit().catch(() => redis.disconnect())
    },
  }
}
