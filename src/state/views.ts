/**
 * Views of the decoded state for people: the rows the CLI prints (and puts in --json) and the
 * dashboard renders. Pure functions of snapshots and Redis's now — no I/O, no formatting, no
 * colours — so the CLI and the dashboard show the same thing and both are tested without Redis.
 *
 * Every lease, chat or lead row carries `key` (the runtime's name), `kind`, `replicaId`,
 * `incarnation`, `fence` and `expiresInMs` (from Redis's clock; negative once expired).
 *
 * One module per kind of row under ./views/ (replica, lease, chat, lead, lock, checkpoint,
 * handover), the diagnosis of a chat (explain), the CLI's lead-name resolution (names), what doctor
 * singles out (doctor) and the event types (events). This index keeps the names every importer used;
 * how things are doing is decided by the health model (./health.ts), never here.
 */
export * from './views/events.js'
export * from './views/replica.js'
export * from './views/lease.js'
export * from './views/chat.js'
export * from './views/explain.js'
export * from './views/names.js'
export * from './views/lead.js'
export * from './views/lock.js'
export * from './views/checkpoint.js'
export * from './views/handover.js'
export * from './views/doctor.js'
