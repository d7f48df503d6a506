/**
 * Doctor as a list of checks (diagnosis plugins): each check is a named unit that looks at what was
 * already read — a DoctorState — and returns its findings. No I/O and no terminal formatting here:
 * the CLI (commands/read/doctor.ts) reads the state and prints the findings; the exporter may run the
 * same checks on what it reads.
 */
import type { Layout } from '../../keys.js'
import type { LeadSnapshot, ReplicaSnapshot } from '../decode.js'
import type { DeployedFingerprints } from '../checkpoint-incidents.js'
import type { ChatFold, CheckpointFold, CorruptFold, LeaseFold } from './folds.js'

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip'

/** One line of the report: what a check found. */
export interface DoctorFinding {
  /** Stable id: redis-version, eviction-policy, memory, persistence, failover, cluster, schema, layout, nested-prefix, corrupt, replicas, clock-skew, stale-tickets, late-renewals, expired-leases, zombie-leases, transports, stale-writes, flow-versions. */
  id: string
  status: CheckStatus
  /** One line: what was found. */
  detail: string
  /** How to fix it (warn/fail), or what the user lacks (skip). */
  fix?: string
}

/** A check: `run` returns its findings (none when it does not apply to this server, e.g. cluster on a standalone one). */
export interface DoctorCheck {
  id: string
  /** What it looks at, in a few words (for a list of the checks). */
  title: string
  run(state: DoctorState): DoctorFinding[]
}

/** A master, by its index in the reader's source, named host:port. */
export interface DoctorNode {
  index: number
  name: string
}

/** A probe run on each master: the answers, or why it was refused (ACL, renamed command). */
export interface Probed<T> {
  ok: Array<[DoctorNode, T]>
  refused: string | null
}

/** A Cluster master the scans could not read (src/state/coverage.ts's UnreachableMaster). */
export interface Unanswered {
  node: string
  slots: string
  error: string
}

/** The schema record and what reading it said. */
export interface SchemaState {
  record: { version: number; layout: Layout; createdAt: number | null } | null
  /** The record is not one botmesh-coord wrote (its message). */
  corrupt: string | null
  /** A Cluster master holding it did not answer (its message). */
  unread: string | null
  /** The record is of a schema this release does not understand (StateReader.schemaProblem). */
  problem: string | null
  /** Read only without a record: does the prefix hold state, and which prefixes do. */
  survey: { used: boolean; others: string[] } | null
}

/** Everything the checks look at, read by the CLI (or any other reader of a live Redis or a snapshot). */
export interface DoctorState {
  nowMs: number
  prefix: string
  layout: Layout
  /** The schema record's key name. */
  schemaKey: string
  /** The replica index's key name. */
  replicaIndexKey: string
  /** Followed through sentinels: the master's name and how many sentinels. */
  sentinel: { masterName: string; sentinels: number } | null
  nodes: DoctorNode[]
  /** INFO of each master, CONFIG GET maxmemory-policy, CONFIG GET save (masters without AOF), CLUSTER INFO (a Cluster read with its layout). */
  redis: { infos: Probed<string>; policies: Probed<string>; saves: Probed<string> | null; clusterInfo: Probed<string> | null }
  schema: SchemaState
  /** Chat, lead and replica keys of the other layout: how many, and the first names. */
  strays: { other: Layout; count: number; names: string[] }
  /** The schema records of prefixes nested on a kind of key: those looked for, and those found. */
  nested: { looked: Array<{ prefix: string; schema: string }>; found: Array<{ prefix: string; schema: string }> }
  /** Masters the scans could not read; those of the replicas' heartbeats. */
  unread: Unanswered[]
  heartbeatsUnread: Unanswered[]
  /** Every heartbeat record the walk read (gone and live). */
  replicas: ReplicaSnapshot[]
  /**
   * Records that beat (not expired) whose incarnation the replica index does not list: every view,
   * doctor's lease checks too, judges their holders without heartbeat until a beat lists them again.
   */
  unindexed: ReplicaSnapshot[]
  leads: LeadSnapshot[]
  corrupt: CorruptFold
  chats: ChatFold
  leases: LeaseFold
  checkpoints: CheckpointFold
  deployed: DeployedFingerprints | null
}
