/**
 * What the CLI uses from the library: the one import point (no other file under commands/ names a
 * module of src/). Everything re-exported here is pure — loading it loads no Redis client — so
 * `--version`, `--help` and `completion` start in a blink. The I/O side (ioredis, the reader, the
 * admin, the store) comes through `loadIo()`, which only the commands that connect call.
 */
export { PACKAGE_VERSION } from '../src/version.js'
export {
  KeyLayout,
  SCHEMA_VERSION,
  DEFAULT_PREFIX,
  LAYOUTS,
  validatePrefix,
  type Layout,
  type KeyKind,
  type RedisKey,
} from '../src/keys.js'
export { idFromBytes, idToBytes, keyText } from '../src/bytes.js'
export { parseDuration, formatDuration, MAX_TIMER_MS, timerTooLong, type Duration } from '../src/duration.js'
export { DEFAULTS } from '../src/defaults.js'
export {
  ConfigurationError,
  CoordinationUnavailableError,
  CorruptStateError,
  OutcomeUnknownError,
  LeaseLostError,
  ProviderNotLeaderError,
  CheckpointConflictError,
  InvalidIdError,
  NotMasterError,
  notMaster,
  isConnectionError,
} from '../src/errors/index.js'
export { isAclRefusal } from '../src/errors/from-redis.js'
export { DEFAULT_URL, maskUrl, parseRedisUrl, sentinelUrl, urlSecrets, withCredentials, type RedisUrl } from '../src/url.js'
export * from '../src/state/health.js'
export * from '../src/state/views.js'
export * from '../src/state/checkpoint-incidents.js'
export * from '../src/state/doctor/index.js'
export { INSPECT_CANDIDATES, INSPECT_TICKETS, LISTING_TICKETS, MAX_INSPECT_TICKETS } from '../src/state/bounded.js'
export type { Change, DecodedState, DiffKind } from '../src/state/snapshot-diff.js'
export type { Listing, Corrupt, SchemaInfo, StateReader } from '../src/state/reader.js'
export type { UnreachableMaster } from '../src/state/coverage.js'
export { decodeReplica, decodeCheckpoint, decodeHandover, leadKind } from '../src/state/decode.js'
export type {
  ChatSnapshot,
  LeadSnapshot,
  LockSnapshot,
  ReplicaSnapshot,
  FlowCheckpoint,
  HandoverMarker,
  TicketSnapshot,
  Json,
  LeaseKindLabel,
  ChatDetail,
  LetGo,
} from '../src/state/decode.js'
export type { DashboardSnapshot, DashboardChat } from '../src/state/dashboard.js'
export type { StateSource, ProbeName } from '../src/state/source.js'
export type { StateRecords, HashRecord, RecordedSource } from '../src/state/records.js'
export type { Snapshot, SnapshotServer } from '../src/state/snapshot.js'
export type { CoordinationAdmin, AuditOutcome, ReplicaEvictResult } from '../src/admin/admin.js'
export type { RedisClient } from '../src/connection.js'
export type { Turn } from '../src/coordinator/types.js'

/** The read side of the library (ioredis, the reader): loaded on first use, by the commands that talk to Redis. */
export const loadIo = () => import('./lib-io.js')
export type Io = Awaited<ReturnType<typeof loadIo>>

/** The write side (interventions, the store): loaded only by the commands that change state. */
export const loadWriteSide = () => import('./lib-write.js')
export type WriteSide = Awaited<ReturnType<typeof loadWriteSide>>
