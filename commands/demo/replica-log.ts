/**
 * The demo replica's output: one JSON line per notable thing on stdout (the orchestrator points it at
 * the replica's log file), and reports to the orchestrator over IPC. Split from replica.ts.
 */
import { config } from './replica-config.js'

let replicaName = config.replicaId ?? '?'

/** Name the log lines after the replicaId the coordinator settled on. */
export function setReplicaName(name: string): void {
  replicaName = name
}

export function log(ev: string, fields: Record<string, unknown> = {}): void {
  // stdout is a file when the orchestrator starts us: the write is synchronous, so a SIGKILL loses nothing.
  process.stdout.write(`${JSON.stringify({ t: new Date().toISOString(), replica: replicaName, ev, ...fields })}\n`)
}

/** Tell the orchestrator (if any) what happened: it counts, it does not decide anything from this. */
export function report(message: Record<string, unknown>): void {
  if (process.send && process.connected) process.send(message, undefined, undefined, () => {})
}
