/**
 * Every Lua script of lua/, typed: KEYS by role, ARGV by name in the script's order, and the decoder
 * of its reply. The scripts answer with small status codes whose meaning is the script's own (-1 is
 * "dropped" for one, "fence changed" for another): this module and registry/ are the only place that
 * reads them.
 * Each definition mirrors the comment block at the top of its lua/<name>.lua.
 *
 * The definitions live in registry/, one module a family of scripts (replica, turn, lead,
 * lock-checkpoint-handover, admin, read); this index re-exports them all under the same names and
 * holds ALL_SCRIPTS.
 */
import * as replica from './registry/replica.js'
import * as turn from './registry/turn.js'
import * as lead from './registry/lead.js'
import * as fenced from './registry/lock-checkpoint-handover.js'
import * as admin from './registry/admin.js'
import * as read from './registry/read.js'

export * from './registry/replica.js'
export * from './registry/turn.js'
export * from './registry/lead.js'
export * from './registry/lock-checkpoint-handover.js'
export * from './registry/admin.js'
export * from './registry/read.js'

/** Every script, for the checks that hold them against lua/ (names, key counts, documented ARGV). */
export const ALL_SCRIPTS = [
  replica.SCHEMA_INIT,
  replica.REPLICA_BEAT,
  replica.REPLICA_STOP,
  turn.TURN_ACQUIRE,
  turn.TURN_RELEASE,
  turn.LEASE_RENEW,
  turn.LEASE_RENEW_MANY,
  lead.LEAD_ACQUIRE,
  lead.LEAD_RELEASE,
  lead.LEAD_TRANSPORT,
  lead.LEAD_YIELD,
  fenced.LOCK_ACQUIRE,
  fenced.LOCK_RENEW,
  fenced.LOCK_RELEASE,
  fenced.CHECKPOINT_SET,
  fenced.CHECKPOINT_CLEAR,
  fenced.HANDOVER_SET,
  fenced.HANDOVER_CLEAR,
  fenced.HANDOVER_TAKE,
  admin.ADMIN_CHAT_RELEASE,
  admin.ADMIN_CHAT_SKIP,
  admin.ADMIN_CHAT_EVICT,
  admin.ADMIN_LEAD_REVOKE,
  admin.ADMIN_YIELD_CANCEL,
  admin.ADMIN_LEAD_EVICT,
  admin.ADMIN_LOCK_RELEASE,
  admin.ADMIN_CHECKPOINT_RM,
  admin.ADMIN_CHECKPOINT_EXTEND,
  admin.ADMIN_HANDOVER_RM,
  admin.ADMIN_REPLICA_EVICT,
  read.READ_LISTING,
  read.READ_CHAT,
  read.READ_SNAPSHOT,
] as const
