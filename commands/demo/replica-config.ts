/**
 * The demo replica's configuration: its flags (or their environment variables) read once at start.
 * Split from replica.ts so that the runtime there reads as the steps it shows.
 */
import { parseArgs } from 'node:util'
import { parseDuration } from '../lib.js'

const { values: argv } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
    prefix: { type: 'string', default: process.env.BOTMESH_PREFIX ?? 'demo' },
    layout: { type: 'string', default: process.env.BOTMESH_LAYOUT ?? 'standalone' },
    'replica-id': { type: 'string', default: process.env.DEMO_REPLICA_ID },
    'lease-ms': { type: 'string', default: process.env.DEMO_LEASE_MS ?? '5s' },
    'provider-down-ms': { type: 'string', default: process.env.DEMO_PROVIDER_DOWN_MS ?? '5s' },
    'sit-out-ms': { type: 'string', default: process.env.DEMO_SIT_OUT_MS ?? '3s' },
    'job-every-ms': { type: 'string', default: process.env.DEMO_JOB_EVERY_MS ?? '5s' },
    // Only used when run by hand (no orchestrator): this replica makes up its own traffic.
    chats: { type: 'string', default: process.env.DEMO_CHATS ?? '12' },
    rate: { type: 'string', default: process.env.DEMO_RATE ?? '5' },
    // Change it on one replica to rehearse a rolling deploy of a changed flow ('changed' handovers).
    'flow-version': { type: 'string', default: process.env.DEMO_FLOW_VERSION ?? '1' },
    // `faq@2,order@3`: these flows run another version (a deploy of changed flows: other fingerprints).
    deploy: { type: 'string', default: process.env.DEMO_DEPLOY ?? '' },
    // Rehearsal settings (demo --rehearsal): waits, checkpoints and markers that stay while an operator follows the runbook.
    rehearsal: { type: 'boolean', default: process.env.DEMO_REHEARSAL === '1' },
    // How long a message waits for its chat's turn before it is given up (default 30s; 1m in a rehearsal).
    'turn-wait-ms': { type: 'string', default: process.env.DEMO_TURN_WAIT_MS },
  },
})

export const config = {
  url: argv.url!,
  prefix: argv.prefix!,
  layout: argv.layout === 'cluster' ? ('cluster' as const) : ('standalone' as const),
  replicaId: argv['replica-id'],
  leaseMs: parseDuration(argv['lease-ms']!, '--lease-ms'),
  providerDownMs: parseDuration(argv['provider-down-ms']!, '--provider-down-ms'),
  sitOutMs: parseDuration(argv['sit-out-ms']!, '--sit-out-ms'),
  jobEveryMs: parseDuration(argv['job-every-ms']!, '--job-every-ms'),
  chats: Number(argv.chats),
  rate: Number(argv.rate),
  flowVersion: argv['flow-version']!,
  /** The version each deployed flow runs (`--deploy faq@2`); the others run flowVersion. */
  deployed: Object.fromEntries(
    argv
      .deploy!.split(',')
      .filter(Boolean)
      .map((d) => d.split('@') as [string, string]),
  ) as Record<string, string>,
  /** How long a message waits for its chat's turn before it is given up. */
  turnWaitMs: argv['turn-wait-ms'] ? parseDuration(argv['turn-wait-ms'], '--turn-wait-ms') : argv.rehearsal ? 60_000 : 30_000,
  /** Forward (ephemeral) checkpoints expire this long after their last write. */
  ephemeralTtlMs: argv.rehearsal ? 60 * 60_000 : 60_000,
  /** A waiting async conversation's handover marker removes itself after this long. */
  markerTtlMs: argv.rehearsal ? 2 * 60 * 60_000 : 120_000,
}
