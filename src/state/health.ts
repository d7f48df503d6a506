/**
 * The one place that decides how things are doing: a replica, a lease (chat turn, lead, lock), a
 * queued ticket, a chat and a lead (provider). Every view calls it — `replicas ls`, `leases ls`,
 * `chat ls/inspect --explain`, `provider ls/status`, `doctor`, the dashboard, the write commands'
 * plans and the exporter — so the same lease reads the same everywhere. Pure: decoded snapshots and
 * Redis's now in, a state, the reason in words and the measured ages out.
 *
 * Late renewals. A replica renews its heartbeat and every lease it holds every `renewMs`
 * (`leaseMs / 3`, recorded in its heartbeat's `info`). A renewal older than that interval plus a
 * margin of half an interval is `late`: by then a healthy process has renewed (timer jitter, a
 * Redis round trip and a GC pause stay well inside half an interval), and half the lease is still
 * left before Redis lets it go — time for an operator or an alert to act.
 *
 * One module per job under ./health/: liveness (who beats, how time reads), replica, lease (turns,
 * leads, locks), tickets (and the grant rule), chat (findings and the verdict), lead. This index
 * keeps the names every importer used; what a module shares only with the views (the chat verdict,
 * the reasons of an idle chat and of a replica without a record) stays out of the public API.
 */
export * from './health/liveness.js'
export { GONE_KEEP_MS, absentReplicaState, replicaHealth, type ReplicaHealth, type ReplicaState } from './health/replica.js'
export * from './health/lease.js'
export * from './health/tickets.js'
export * from './health/lead.js'
export {
  CHAT_REASONS,
  UNGRANTED_HEAD_MS,
  chatHealth,
  stuckReasons,
  type ChatFinding,
  type ChatHealth,
  type ChatReason,
  type ChatState,
  type Severity,
} from './health/chat.js'
export { pinnedRevoke, shellWord } from './suggested-commands.js'
