import type { Io, Layout, WriteSide } from '../lib.js'

/** What a demo is started with (commands/demo/index.ts builds it from the command line). */
export interface DemoOptions {
  url: string
  prefix: string
  layout: Layout
  replicas: number
  chats: number
  rate: number
  leaseMs: number
  providerDownMs: number
  /** Rehearsal settings: the replicas keep waits, checkpoints and markers long enough to follow the runbook by hand. */
  rehearsal?: boolean
  /** How long a replica's message waits for its chat's turn (turnWaitMs). */
  turnWaitMs: number
  /** How a printed command reaches this demo's Redis (`--context demo`, or `--url … --prefix …`). */
  connection: string
  /** The throwaway redis-server, when the demo started one. */
  redis: { pid: number; port: number; dir: string; stop(): Promise<void> } | null
  json: boolean
  /** The library's read and write sides (lib.ts loadIo(), loadWriteSide()). */
  io: Io
  write: WriteSide
  out(line: string): void
  err(line: string): void
}
