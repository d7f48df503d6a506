/**
 * `botmesh-coord exporter`: Prometheus metrics of the shared state on `/metrics`, and `/healthz`.
 * Each scrape reads Redis once, boundedly (the dashboard's read: live replicas, the chats and leads
 * they name, the new entries of the event stream, the schema), with a deadline: when Redis is down or
 * slow the scrape still answers at once with `botmesh_redis_up 0` and the error, and the client
 * reconnects by itself.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { Command, Option } from 'commander'
import { openContext } from '../context.js'
import {
  DEFAULTS,
  KeyLayout,
  formatDuration,
  replicaHealth,
  type DashboardSnapshot,
  type Io,
  type ReplicaSnapshot,
  type Layout,
  type RedisClient,
  type StateReader,
} from '../lib.js'
import { durationOption, interruptSignal } from '../duration.js'
import { scrub, usage } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { run } from '../run.js'
import type { ExporterMetrics, InventoryCounts } from './metrics.js'

export const DEFAULT_LISTEN = '127.0.0.1:9464'

/** `host:port`, `:port` or `[v6]:port` → where to listen; anything else is a usage error. */
export function parseListen(v: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]*)):(\d{1,5})$/.exec(v.trim())
  const port = m ? Number(m[3]) : NaN
  if (!m || !Number.isInteger(port) || port > 65535) {
    throw usage(`--listen ${JSON.stringify(v)} is not host:port (e.g. 127.0.0.1:9464, :9464, [::1]:9464)`)
  }
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port }
}

interface ExporterFlags {
  listen: string
  /** ms */
  scrapeTimeout: number
  maxChats: string
  /** ms */
  turnWait: number
}

/** Events read per scrape at most: a burst larger than this is counted over the next scrapes. */
const EVENTS_PER_SCRAPE = 1000
/**
 * The inventory's SCAN batches per scrape: at most this many, for at most this long, of
 * INVENTORY_SCAN_COUNT keys each. It reads their names only, so its batches are larger than a
 * listing's (a SCAN of 1,000 keys holds Redis about 1.5 ms). Measured at a million chats (2 million
 * keys): about 40 batches per scrape, a pass in about 50 scrapes; about 60 with DEFAULTS.scanCount.
 */
const INVENTORY_STEPS = 150
const INVENTORY_BUDGET_MS = 150
const INVENTORY_SCAN_COUNT = 1000

export interface Scraper {
  metrics: ExporterMetrics
  /** One scrape: read Redis (bounded, with a deadline) and set the metrics. Never throws. */
  scrape(): Promise<void>
  close(): Promise<void>
}

export async function openScraper(o: {
  io: Io
  url: string
  prefix: string
  layout: Layout
  tlsCa?: string
  /** redis+sentinel://: the sentinels' own user and password, when they ask for one. */
  sentinelAuth?: { sentinelUsername?: string; sentinelPassword?: string }
  timeoutMs: number
  maxChats: number
  turnWaitMs: number
  secrets: string[]
}): Promise<Scraper> {
  // prom-client (and what it loads) only for the exporter: every other command starts without it.
  const { countEvents, exporterMetrics, setInventory, setState, stateGauges } = await import('./metrics.js')
  const keys = new KeyLayout(o.prefix, o.layout)
  // Not fail-fast: ioredis reconnects with its backoff for as long as we run.
  const redis: RedisClient = o.io.connect({
    url: o.url,
    layout: o.layout,
    tlsCaFile: o.tlsCa,
    ...o.sentinelAuth,
    commandTimeoutMs: o.timeoutMs,
    connectionName: 'botmesh-coord-exporter',
  })
  let lastError: Error | null = null
  redis.on('error', (e: Error) => (lastError = e))
  const reader: StateReader = new o.io.StateReader(redis, keys, { timeoutMs: o.timeoutMs })
  const m = exporterMetrics()
  // The event stream is counted from where it stood when the exporter started: a restarted exporter
  // does not count old entries again (its counters start at 0, which Prometheus reads as a reset).
  let after: string | null = null
  let inFlight: Promise<void> | null = null
  // Checkpoints and handover markers are counted by an inventory that walks the keyspace a few SCAN
  // batches per scrape (every master in turn; inventoryStep), from the key names alone: a bounded
  // number of short commands per scrape, whatever the number of keys; a pass is complete after
  // enough scrapes.
  let at = { node: 0, cursor: '0' }
  // The same walk finds the heartbeat records (a few per prefix), read one by one to count those gone:
  // kept past their heartbeat's expiry (lua/replica-beat-2.lua), they are the replicas lost lately.
  const emptyPass = (): InventoryCounts => ({ checkpoints: 0, handovers: 0, replicasGone: 0 })
  let pass: InventoryCounts = emptyPass()
  let passEndedAt: number | null = null
  const inventoryStep = async (): Promise<{ records: ReplicaSnapshot[]; wrapped: boolean }> => {
    // SCAN batches one after another for up to INVENTORY_BUDGET_MS (at most INVENTORY_STEPS): each is
    // one short command, and a pass over a million keys takes minutes of scrapes, not hours.
    const replicaIds: string[] = []
    const started = performance.now()
    let wrapped = false
    for (let i = 0; i < INVENTORY_STEPS && !wrapped && performance.now() - started < INVENTORY_BUDGET_MS; i++) {
      const step = await reader.scanStep(at, ['checkpoint', 'handover', 'replica'], { keysOnly: true, count: INVENTORY_SCAN_COUNT })
      for (const it of step.items) {
        if (it.kind === 'replica') replicaIds.push(it.id)
        else pass[it.kind === 'handover' ? 'handovers' : 'checkpoints']++
      }
      at = step.next
      wrapped = step.wrapped
    }
    const records = (await Promise.all(replicaIds.map((id) => reader.replica(id).catch(() => null)))).filter(
      (r): r is ReplicaSnapshot => r !== null,
    )
    return { records, wrapped }
  }
  const endStep = (step: { records: ReplicaSnapshot[]; wrapped: boolean }, nowMs: number) => {
    for (const r of step.records) if (replicaHealth(r, nowMs).state === 'gone') pass.replicasGone++
    if (step.wrapped) {
      setInventory(m, pass)
      pass = emptyPass()
      passEndedAt = performance.now()
    }
  }

  const deadline = <T>(p: Promise<T>): Promise<T> =>
    Promise.race([
      p,
      new Promise<T>((_, reject) => {
        const t = setTimeout(() => reject(new Error(`Redis did not answer within ${o.timeoutMs}ms`)), o.timeoutMs)
        t.unref()
        void p.finally(() => clearTimeout(t)).catch(() => {})
      }),
    ])

  const once = async (): Promise<void> => {
    const started = performance.now()
    const commandsBefore = reader.commands
    let dashboardCommands = 0
    try {
      await deadline(
        (async () => {
          if (after === null) {
            const last = await reader.events({ count: 1 })
            after = last.at(-1)?.id ?? '0-0'
          }
          const [snap, events, schema, step]: [
            DashboardSnapshot,
            Array<{ id: string; event: Record<string, unknown> }>,
            unknown,
            { records: ReplicaSnapshot[]; wrapped: boolean },
          ] = await Promise.all([
            o.io.readDashboard(reader, { topChats: o.maxChats, events: 1, timeoutMs: o.timeoutMs, turnWaitMs: o.turnWaitMs }),
            reader.events({ after: after!, count: EVENTS_PER_SCRAPE }),
            reader.schema(),
            inventoryStep(),
          ])
          dashboardCommands = snap.commands
          endStep(step, snap.nowMs)
          setState(m, snap, o.io.StateReader.schemaProblem(schema as Parameters<typeof o.io.StateReader.schemaProblem>[0]) === null, {
            turnWaitMs: o.turnWaitMs,
          })
          countEvents(m, events)
          if (events.length) after = events.at(-1)!.id
        })(),
      )
      m.redisUp.set(1)
      m.lastError.reset()
      if (passEndedAt !== null) m.inventoryAge.set((performance.now() - passEndedAt) / 1000)
    } catch (err) {
      for (const g of stateGauges(m)) g.reset()
      m.redisUp.set(0)
      m.scrapeErrors.inc()
      m.lastError.reset()
      const cause = lastError && redis.status !== 'ready' ? lastError : err
      m.lastError.set({ error: scrub(cause instanceof Error ? cause.message : String(cause), o.secrets).slice(0, 200) }, 1)
    } finally {
      m.scrapeDuration.set((performance.now() - started) / 1000)
      m.scrapeCommands.set(dashboardCommands + (reader.commands - commandsBefore))
    }
  }

  return {
    metrics: m,
    // Scrapes that arrive together share one read of Redis.
    scrape: () => (inFlight ??= once().finally(() => (inFlight = null))),
    close: async () => {
      if (redis.status !== 'end') await redis.quit().catch(() => redis.disconnect())
    },
  }
}

export function exporterCommand(): Command {
  const cmd: Command = new Command('exporter')
    .description('Prometheus metrics of the shared state on /metrics (and /healthz): health, late renewals, stuck chats, leaders, events')
    .addOption(new Option('--listen <host:port>', 'where to serve /metrics and /healthz').default(DEFAULT_LISTEN))
    .addOption(
      durationOption('--scrape-timeout <duration>', 'one scrape reads Redis for at most this long; then it answers botmesh_redis_up 0', {
        min: 50,
        default: '3s',
        timer: true,
      }),
    )
    .addOption(
      new Option(
        '--max-chats <n>',
        `chats counted one by one per scrape: the stuck and busiest of at most ${DEFAULTS.dashboardChatsReadFactor} times as many read`,
      ).default(String(DEFAULTS.exporterChats)),
    )
    .addOption(
      durationOption('--turn-wait <duration>', "the runtime's turnWaitMs, for the slow-holder check", {
        min: 1,
        default: formatDuration(DEFAULTS.turnWaitMs),
      }),
    )
    .addHelpText(
      'after',
      `
Runs until interrupted. Exit codes: 2 a bad --listen or an address it cannot listen on; 4/5 Redis
unreachable or refused at start (later outages are reported as botmesh_redis_up 0).

Examples:
  botmesh-coord --prefix shop exporter
  botmesh-coord --prefix shop --url rediss://metrics@redis:6380 exporter --listen 0.0.0.0:9464`,
    )
  return cmd.action(
    run(
      async (_none, flags: ExporterFlags) => {
        const listen = parseListen(flags.listen)
        const maxChats = Number(flags.maxChats)
        if (!Number.isSafeInteger(maxChats) || maxChats <= 0) throw usage(`--max-chats must be a positive integer, not ${flags.maxChats}`)
        const g = cmd.optsWithGlobals() as { tlsCa?: string }
        // Like every command: one line and an exit code when Redis is unreachable at the start (the
        // layout is detected here); then the exporter runs on its own reconnecting client.
        const ctx = await openContext(cmd)
        const base = {
          io: ctx.io,
          url: ctx.url,
          prefix: ctx.keys.prefix,
          layout: ctx.keys.layout,
          secrets: ctx.secrets,
          sentinelAuth: ctx.target.sentinelAuth,
        }
        await ctx.close()
        const scraper = await openScraper({ ...base, tlsCa: g.tlsCa, timeoutMs: flags.scrapeTimeout, maxChats, turnWaitMs: flags.turnWait })
        const server = createServer((req: IncomingMessage, res: ServerResponse) => {
          const path = (req.url ?? '/').split('?')[0]
          if (req.method !== 'GET' && req.method !== 'HEAD') {
            res.writeHead(405, { allow: 'GET, HEAD' }).end()
          } else if (path === '/metrics') {
            void scraper
              .scrape()
              .then(() => scraper.metrics.registry.metrics())
              .then((text) => res.writeHead(200, { 'content-type': scraper.metrics.registry.contentType }).end(text))
              .catch((e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(e)}\n`))
          } else if (path === '/healthz') {
            res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n')
          } else {
            res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: /metrics, /healthz\n')
          }
        })
        try {
          await new Promise<void>((resolve, reject) => {
            server.once('error', reject)
            server.listen(listen.port, listen.host, () => resolve())
          })
        } catch (err) {
          await scraper.close()
          const code = (err as NodeJS.ErrnoException).code
          throw usage(
            `cannot listen on ${flags.listen}: ${code === 'EADDRINUSE' ? 'address in use' : code === 'EADDRNOTAVAIL' ? 'no such address here' : String((err as Error).message)}`,
          )
        }
        const addr = server.address()
        const where =
          typeof addr === 'object' && addr ? `${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}` : flags.listen
        process.stderr.write(`serving http://${where}/metrics for prefix ${base.prefix} (Ctrl-C to stop)\n`)
        const stop = interruptSignal()
        await new Promise<void>((resolve) => stop.addEventListener('abort', () => resolve(), { once: true }))
        server.closeAllConnections()
        await new Promise<void>((resolve) => server.close(() => resolve()))
        await scraper.close()
        return EXIT.ok
      },
      { connect: false },
    ),
  )
}
