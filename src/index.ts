export { DEFAULTS, COORDINATOR_DEFAULTS, REDIS_DEFAULTS, STORE_DEFAULTS, CAMPAIGN_DEFAULTS, type Defaults } from './defaults.js'
export { Coordinator } from './coordinator/coordinator.js'
export type {
  CoordinatorOptions,
  AcquireTurnOptions,
  Lease,
  Turn,
  Lead,
  CampaignOptions,
  FollowerReason,
  LeaseLostEvent,
  HandoverEvent,
  HandoverOutcome,
  LeaderEvent,
  FollowerEvent,
  WarningEvent,
  EvictedEvent,
  TurnGrantedEvent,
  RenewedEvent,
  CoordinatorEvents,
} from './coordinator/types.js'
export { RedisCoordinator, type RedisCoordinatorOptions } from './coordinator/redis-coordinator.js'
export { Election } from './coordinator/election.js'
export type { YieldRequestInput, YieldResult, LeadReply } from './wire/types.js'
export type { Holder, ReplicaInfo, ReplicaStats, HeldSummary, YieldRequest } from './wire/types.js'
export type { Warning } from './coordinator/backend.js'
export {
  KeyLayout,
  SCHEMA_VERSION,
  DEFAULT_PREFIX,
  encodeId,
  decodeId,
  validateId,
  validatePrefix,
  RESERVED_SEGMENTS,
  type Layout,
  type KeyKind,
  type ChatKeys,
  type ParsedKey,
  type RedisKey,
} from './keys.js'
export { idFromBytes, idToBytes, keyText } from './bytes.js'
export * from './errors/index.js'
export { parseDuration, formatDuration, timerDuration, MAX_TIMER_MS, type Duration } from './duration.js'
export { connect, maskUrl, DEFAULT_URL, type ConnectOptions, type RedisClient, type RedisConnectionOptions } from './connection.js'
export { PACKAGE_VERSION } from './version.js'
export { CoordinationAdmin, operatorName, type YieldOptions } from './admin/admin.js'
export {
  RedisStore,
  type RedisStoreOptions,
  type StoreCoordinatorOptions,
  type CheckpointWrite,
  type CheckpointInput,
  type FencedLock,
  type HandoverMarkerInput,
  type TakenHandoverMarker,
} from './store/redis-store.js'
export type { CoordinationStore } from './store/coordination-store.js'
export type { CheckpointRead, CheckpointReadOptions } from './store/fenced-write.js'
export { SchedulerLeases, type SchedulerLease, type SchedulerLeaseBackend } from './store/scheduler-leases.js'
export * from './state/decode.js'
export { CHAT_FIELDS, CHAT_HOLDER_FIELDS } from './wire/chat.js'
export { StateReader, LISTING_DECODERS, type ScanOptions, type Listing, type Corrupt, type SchemaInfo } from './state/reader.js'
export { readDashboard, type DashboardSnapshot, type DashboardChat, type DashboardOptions } from './state/dashboard.js'
export type * from './admin/interventions.js'
export * from './state/health.js'
export * from './state/views.js'
export { registerMetrics, REPLICA_METRICS, type PromClientLike, type RegisterMetricsOptions } from './metrics.js'
