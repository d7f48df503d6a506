/**
 * Every default of the library, in one table: an option left out takes its value from here, and
 * nothing else spells these numbers. Durations are in milliseconds.
 */
export const DEFAULTS = {
  // ---- where the shared state lives
  /** Redis URL when neither `url` nor `redis` is given. */
  url: 'redis://127.0.0.1:6379',
  /** Key prefix shared by every replica of one bot. */
  prefix: 'botmesh',
  layout: 'standalone',
  /** Connecting to a node may take this long. */
  connectTimeoutMs: 5000,
  /** Reconnecting after a dropped connection: the first wait, growing by as much per attempt… */
  reconnectMinDelayMs: 50,
  /** …up to this (a failover's new master is reached within this of answering). */
  reconnectMaxDelayMs: 500,
  /** One Redis call may take this long before it counts as unreachable (a coordinator: at most leaseMs / 3). */
  commandTimeoutMs: 5000,
  /** How long an idle chat, lead or lock keeps its last holder and counters. */
  idleKeyTtlMs: 24 * 3_600_000,
  /** Approximate length cap of the shared event stream (and of the memory hub's event list). */
  eventsMaxLen: 10_000,

  // ---- a coordinator
  /** Lease length: failover time after a crash, and how long a replica may freeze. */
  leaseMs: 15_000,
  /** Longest pause between two polls of a waiting turn. */
  maxPollMs: 100,
  /** First pause between polls (doubles up to maxPollMs). */
  minPollMs: 5,
  /** How long a message waits for its chat's turn. */
  turnWaitMs: 120_000,
  /** Most messages of one replica waiting for a turn at once (one more is refused: 'overloaded'). */
  maxWaiting: 50_000,
  /** A campaign's leader whose transport is reported down this long yields. */
  providerDownMs: 60_000,
  /** After yielding or resigning, a campaign waits this long before standing again. */
  sitOutMs: 3_000,

  // ---- the store
  /** Largest saved answer embedded in a checkpoint (bytes); a larger one is left out. */
  maxAnswerBytes: 16 * 1024,
  /** An ephemeral (forward) checkpoint written without `ttlMs` expires this long after its last write. */
  ephemeralTtlMs: 5 * 60_000,
  /** A handover marker written without `ttlMs` is removed by itself this long after its last write. */
  handoverTtlMs: 5 * 60_000,

  // ---- operator interventions
  /** How long a yield request (and a target's reservation) lasts. */
  yieldTtlMs: 30_000,
  /** How long an eviction tombstone refuses the evicted incarnation's beats. */
  tombstoneTtlMs: 24 * 3_600_000,
  /** A bulk clean-up runs this many entries' scripts at once (a bound on one batch's load on Redis). */
  bulkBatchSize: 100,

  // ---- reads (CLI, dashboard)
  /** One read of the CLI's state reader may take this long. */
  readTimeoutMs: 10_000,
  /**
   * SCAN COUNT of one batch of a walk of the keyspace that reads what it finds (listings, snapshot,
   * doctor; the exporter's inventory, which reads names only, takes larger ones). Measured against
   * 2,000,000 keys on a 2-core machine: a SCAN of 2,000 held Redis 3.6 ms (median), past 10 ms at
   * times; one of 300, about half a millisecond.
   */
  scanCount: 300,
  /** One dashboard refresh: each call may take this long. */
  dashboardTimeoutMs: 5000,
  /** Chats the dashboard shows. */
  dashboardChats: 30,
  /** Recent events the dashboard shows. */
  dashboardEvents: 12,
  /** Of the chats a dashboard read or a scrape finds, it reads this many times the chats it shows (or counts one by one). */
  dashboardChatsReadFactor: 4,
  /** Chats the exporter counts one by one per scrape (`--max-chats`). */
  exporterChats: 1000,

  // ---- the in-memory reference
  /** Idle chats a MemoryCoordinationHub keeps before evicting the least recently used. */
  maxIdleKeys: 10_000,
} as const

export type Defaults = typeof DEFAULTS

/** The coordinator's entries of DEFAULTS. */
export const COORDINATOR_DEFAULTS = {
  leaseMs: DEFAULTS.leaseMs,
  maxPollMs: DEFAULTS.maxPollMs,
  minPollMs: DEFAULTS.minPollMs,
  turnWaitMs: DEFAULTS.turnWaitMs,
  maxWaiting: DEFAULTS.maxWaiting,
} as const

/** The entries of DEFAULTS for what every Redis user of the library (coordinator, store, admin) is given. */
export const REDIS_DEFAULTS = {
  prefix: DEFAULTS.prefix,
  idleKeyTtlMs: DEFAULTS.idleKeyTtlMs,
  eventsMaxLen: DEFAULTS.eventsMaxLen,
} as const

/** The store's entries of DEFAULTS. */
export const STORE_DEFAULTS = {
  maxAnswerBytes: DEFAULTS.maxAnswerBytes,
  ephemeralTtlMs: DEFAULTS.ephemeralTtlMs,
  handoverTtlMs: DEFAULTS.handoverTtlMs,
  commandTimeoutMs: DEFAULTS.commandTimeoutMs,
} as const

/** A campaign's entries of DEFAULTS. */
export const CAMPAIGN_DEFAULTS = { providerDownMs: DEFAULTS.providerDownMs, sitOutMs: DEFAULTS.sitOutMs } as const

/** A coordinator's commandTimeoutMs: the default, but never above its renewal interval (a third of its lease). */
export function coordinatorCommandTimeoutMs(leaseMs: number): number {
  return Math.min(DEFAULTS.commandTimeoutMs, renewIntervalMs(leaseMs))
}

/** How often a coordinator renews its heartbeat and every lease it holds: a third of its lease. */
export function renewIntervalMs(leaseMs: number): number {
  return Math.max(10, Math.floor(leaseMs / 3))
}
