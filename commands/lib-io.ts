/**
 * The library's read side for the CLI (ioredis and the reader). Imported only through `loadIo()` in
 * ./lib.ts, so commands that do not connect never load a Redis client.
 */
export { connect, masters, isCluster } from '../src/connection.js'
export { StateReader, LISTING_DECODERS } from '../src/state/reader.js'
export { readDashboard } from '../src/state/dashboard.js'
export { RedisSource } from '../src/state/source.js'
export { RecordedSource, RecordingSource } from '../src/state/records.js'
export { captureTo, type Snapshot, type SnapshotHead, type SnapshotSink } from '../src/state/snapshot.js'
export { readSnapshot, snapshotLimitReason, snapshotReadLimit, snapshotTooLarge } from '../src/state/snapshot-read.js'
export type { HashRecord, NodeRecord } from '../src/state/records.js'
export { diffStates } from '../src/state/snapshot-diff.js'
