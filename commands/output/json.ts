import { SCHEMA_VERSION } from '../../src/index.js'

/** The --json envelope: stable field names and a top-level schemaVersion. */
export function jsonOut(kind: string, body: Record<string, unknown>): string {
  return JSON.stringify({ schemaVersion: SCHEMA_VERSION, kind, ...body }, null, 2)
}
