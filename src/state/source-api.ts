/**
 * The questions the read side asks (StateSource): every read of the CLI and the dashboard asks them
 * of a live Redis (RedisSource, ./source.ts) or of recorded answers (RecordedSource, ./records.ts).
 */
import type { ChatKeys, RedisKey } from '../keys.js'
import type { RedisClient } from '../connection.js'
import type { SlotOwner } from './coverage.js'
import type { ListedHash, ListingPlan } from './bounded.js'

export type Hash = Record<string, string>
export type StreamEntry = [id: string, fields: string[]]

/** What `doctor` asks each master about its configuration. */
export const PROBES = ['info', 'maxmemory-policy', 'save', 'cluster-info'] as const
export type ProbeName = (typeof PROBES)[number]

/** What `chat()` reads of a chat's queue and checkpoint: never all of a long queue, nor a checkpoint's data unless asked. */
export interface ChatReadOptions {
  /** Tickets read from the head of the queue. Default INSPECT_TICKETS (./bounded.ts). */
  tickets?: number
  /** A ticket read too, wherever it stands in the queue (the one an operator names). */
  ticket?: number
  /** Read the checkpoint's data `d` (its state and saved answer); otherwise only its length. */
  checkpointData?: boolean
}

/** One chat's keys read together (one slot): the raw replies, each an error or its value. */
export interface ChatRaw {
  /** The chat hash's named fields and the fields of the tickets read (./bounded.ts). */
  state: Hash | Error
  /** Tickets queued (ZCARD of the queue; -1 a queue of another type). */
  queued: number
  checkpoint: Hash | Error
  /** The length of the checkpoint's data when it was not read (null: read, or no checkpoint). */
  checkpointDataBytes: number | null
  /** PTTL of the checkpoint (-1 none, -2 no key). */
  checkpointTtl: number | Error
  handover: Hash | Error
  handoverTtl: number | Error
  /** Redis's clock when read (ms). */
  nowMs: number
}

export interface StateSource {
  /** 'redis' for a live server; 'recorded' for a snapshot or a recording. */
  readonly origin: 'redis' | 'recorded'
  /** Redis commands sent so far by hashes(), where it knows (one per batch when read by a script). */
  readonly hashCommands?: number
  /** The masters to walk (one for a standalone server). */
  nodeCount(): Promise<number>
  /** `host:port` of a master, for reports. */
  nodeName(node: number): string
  /** Redis's clock (ms), from the first master. */
  time(): Promise<number>
  /** One SCAN batch on one master: the keys as bytes, and the next cursor ('0' once done). */
  scan(node: number, cursor: string, pattern: string, count: number): Promise<{ cursor: string; keys: Buffer[] }>
  /**
   * Hashes of keys that one pipeline reads: on `node` (a SCAN batch), or, with `node` null, through the
   * client (keys of one slot). `fields[i]` reads only those fields of key i. A key's failure is its Error.
   */
  hashes(node: number | null, keys: RedisKey[], fields?: Array<string[] | undefined>): Promise<Array<Hash | Error>>
  /**
   * What a listing shows of keys of one kind (./bounded.ts): named fields, sizes, a chat's queue head, a
   * lead's candidates — bounded whatever the hashes hold. On `node` (a SCAN batch), or, with `node`
   * null, through the client (keys of one slot). A key's failure is its Error.
   */
  listing(node: number | null, items: Array<{ key: RedisKey; queue?: RedisKey }>, plan: ListingPlan): Promise<Array<ListedHash | Error>>
  hgetall(key: RedisKey): Promise<Hash>
  /** Members of a sorted set, lowest score first. */
  zrange(key: RedisKey): Promise<string[]>
  /** One chat — its turn and the head of its queue, checkpoint, handover marker — in one round trip (two or three for a queue). */
  chat(keys: ChatKeys, options?: ChatReadOptions): Promise<ChatRaw>
  /** XRANGE key start end COUNT count. */
  xrange(key: string, start: string, end: string, count: number): Promise<StreamEntry[]>
  /** XREVRANGE key end start COUNT count. */
  xrevrange(key: string, end: string, start: string, count: number): Promise<StreamEntry[]>
  /** A master's answer to a configuration probe (INFO, CONFIG GET …, CLUSTER INFO); rejects as Redis refused it. */
  probe(node: number, what: ProbeName): Promise<string>
  /**
   * A Redis Cluster only (absent elsewhere): the slot owners as the cluster sees them now (CLUSTER
   * SLOTS from any node that answers; null when none does), and a key's slot — what a read compares
   * the masters it reached with (./coverage.ts).
   */
  slotOwners?(): Promise<SlotOwner[] | null>
  keySlot?(key: string): Promise<number | null>
  /** How many keys a master holds, every prefix's (DBSIZE): what a full walk reads at most. A live Redis only. */
  keyCount?(node: number): Promise<number>
}

/** A source given as a Redis client is the live one. */
export function isStateSource(x: RedisClient | StateSource): x is StateSource {
  return typeof (x as StateSource).origin === 'string' && typeof (x as StateSource).probe === 'function'
}
