/**
 * The scripts of a replica's own record: the schema marker written at connect, the heartbeat and
 * the clean stop (lua/schema-init, replica-beat, replica-stop). Split from registry.ts by family.
 */
import type { BeatReply } from '../../wire/types.js'
import { asIs, defineScript } from '../define.js'
import { row, yes } from './replies.js'

export const SCHEMA_INIT = defineScript({
  name: 'schema-init-1',
  keys: ['schema'],
  argv: { version: 'int', layout: 'str' },
  decode: (r, key): { version: number; layout: string } => {
    const [version, layout] = row(r, key)
    return { version: Number(version), layout: String(layout) }
  },
  // idempotent: a second run answers as the first
  resent: asIs,
})

export const REPLICA_BEAT = defineScript({
  name: 'replica-beat-2',
  keys: ['replica', 'index'],
  argv: { replicaId: 'str', incarnation: 'str', leaseMs: 'int', info: 'json', stats: 'json', leases: 'json', wallClockMs: 'num' },
  decode: (r, key): BeatReply & { recordMissing: boolean } => {
    const a = row(r, key)
    if (a[0] === -1) return { evicted: true, otherIncarnation: null, recordMissing: false }
    return { evicted: false, otherIncarnation: a[1] ? String(a[1]) : null, recordMissing: a[3] === 1 }
  },
  // idempotent (the same record written again)
  resent: asIs,
})

export const REPLICA_STOP = defineScript({
  name: 'replica-stop-2',
  keys: ['replica', 'index'],
  argv: { incarnation: 'str', replicaId: 'str' },
  decode: yes,
  // false from a second run: the first one removed the record, or it was gone — stopped either way
  resent: () => true,
})
