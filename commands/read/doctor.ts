import { Command } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import {
  CoordinationUnavailableError,
  CorruptStateError,
  isConnectionError,
  KeyLayout,
  type Layout,
  type DeployedFingerprints,
  ChatFold,
  CheckpointFold,
  CorruptFold,
  LeaseFold,
  LISTED_KINDS,
  clusterOn,
  folding,
  runDoctorChecks,
  unindexedReplicas,
  volatileMasters,
  type CheckStatus,
  type DoctorNode,
  type DoctorState,
  type DoctorFinding,
  type Probed,
  type SchemaState,
  type ReplicaSnapshot,
} from '../lib.js'
import { EXIT } from '../output/exit-codes.js'
import { jsonOut } from '../output/format.js'
import { progress } from '../output/progress.js'
import { examples } from './common.js'
import { deployedFingerprints, fingerprintOptions, type FingerprintFlags } from './fingerprints.js'

// The checks themselves are pure (src/state/doctor/): this file reads what they look at and prints what they find.
export type { CheckStatus }
export type Check = DoctorFinding

/** Run one probe on every master; a refusal (ACL, renamed command) makes the check a skip that says why. */
async function perNode<T>(nodes: DoctorNode[], f: (n: DoctorNode) => Promise<T>): Promise<Probed<T>> {
  const ok: Array<[DoctorNode, T]> = []
  for (const n of nodes) {
    try {
      ok.push([n, await f(n)])
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err)
      if (/NOPERM|unknown command|ERR unknown|no permissions/i.test(msg)) return { ok, refused: msg.split('\n')[0]! }
      // A Cluster master down (failing over): the 'cluster' check names it; the others are checked.
      if (nodes.length > 1 && isConnectionError(err)) continue
      throw err
    }
  }
  return { ok, refused: null }
}

/** INFO, the eviction policy, the RDB settings of the masters without AOF, CLUSTER INFO: one master after the other. */
async function readRedis(ctx: Context, nodes: DoctorNode[]): Promise<DoctorState['redis']> {
  const source = ctx.reader.source
  const probe = (what: Parameters<typeof source.probe>[1]) => (n: DoctorNode) => source.probe(n.index, what)
  const infos = await perNode(nodes, probe('info'))
  const policies = await perNode(nodes, probe('maxmemory-policy'))
  if (infos.refused) return { infos, policies, saves: null, clusterInfo: null }
  const saves = await perNode(volatileMasters(infos), probe('save'))
  const clusterInfo =
    clusterOn(infos) && ctx.keys.layout === 'cluster'
      ? await perNode(
          infos.ok.map(([n]) => n),
          probe('cluster-info'),
        )
      : null
  return { infos, policies, saves, clusterInfo }
}

/** The schema record; a corrupt one is one failing check, not the end of the report. */
async function readSchema(ctx: Context, clusterChecked: boolean): Promise<SchemaState> {
  const out: SchemaState = { record: null, corrupt: null, unread: null, problem: null, survey: null }
  try {
    out.record = await ctx.reader.schema()
  } catch (err) {
    if (clusterChecked && err instanceof CoordinationUnavailableError && err.reason === 'unreachable') out.unread = err.message
    else if (!(err instanceof CorruptStateError)) throw err
    else out.corrupt = err.message
  }
  return out
}

/** Chat, lead and replica keys of the other layout: one bounded walk (10,000 keys of them at most). */
async function readStrays(ctx: Context): Promise<DoctorState['strays']> {
  const other: Layout = ctx.keys.layout === 'cluster' ? 'standalone' : 'cluster'
  const otherReader = new ctx.io.StateReader(ctx.reader.source, new KeyLayout(ctx.keys.prefix, other))
  const d = ctx.io.LISTING_DECODERS
  const { chat, lead, replica } = await otherReader.listMany({ chat: d.chat, lead: d.lead, replica: d.replica }, { limit: 10_000 })
  const names = [...chat.items.map((c) => c.key), ...lead.items.map((l) => l.key), ...replica.items.map((r) => r.replicaId)]
  return { other, count: chat.items.length + lead.items.length + replica.items.length, names: names.slice(0, 3) }
}

/**
 * The listings the checks look at, in one walk of the keyspace, folded as they are read (counts and
 * the first examples, never every row: ../../src/state/doctor/folds.ts). Holders are judged as every
 * view judges them, by the live replicas of the replica index (docs/redis-layout.md, Liveness), read
 * first; the walk reads the heartbeat records themselves (gone and corrupt ones too) for the replica
 * checks.
 */
async function readListings(ctx: Context, nowMs: number, deployed: DeployedFingerprints | null) {
  const live = await ctx.reader.liveReplicas().then(
    (l) => l.items,
    async (err: unknown) => {
      // A Cluster whose master of the heartbeats is down: the checks that judge holders say they cannot know.
      if ((await ctx.reader.unreachable('replica')).length) return []
      throw err
    },
  )
  const [{ walked, chats, leases, checkpoints }, strays] = await Promise.all([walkKeyspace(ctx, nowMs, deployed, live), readStrays(ctx)])
  const corrupt = new CorruptFold()
  for (const kind of LISTED_KINDS) corrupt.add(kind, walked[kind].corrupt, walked[kind].scanned)
  const unindexed = unindexedReplicas(walked.replica.items, live, nowMs)
  return { replicas: walked.replica.items, unindexed, leads: walked.lead.items, corrupt, chats, leases, checkpoints, strays }
}

/** Replicas, chats, leads, locks, checkpoints and handover markers in one walk, holders judged by `replicas`. */
async function walkKeyspace(ctx: Context, nowMs: number, deployed: DeployedFingerprints | null, replicas: ReplicaSnapshot[]) {
  const d = ctx.io.LISTING_DECODERS
  const chats = new ChatFold(replicas, nowMs)
  const leases = new LeaseFold(replicas, nowMs)
  const checkpoints = new CheckpointFold(deployed)
  const chatFold = folding(d.chat, (batch) => {
    chats.add(batch)
    leases.add({ chats: batch })
    checkpoints.chats(batch)
  })
  const lockFold = folding(d.lock, (batch) => leases.add({ locks: batch }))
  const cpFold = folding(d.checkpoint, (batch) => checkpoints.add(batch))
  const walked = await ctx.reader.listMany(
    {
      replica: d.replica,
      chat: chatFold.decode,
      lead: d.lead,
      lock: lockFold.decode,
      checkpoint: cpFold.decode,
      // A marker is decoded for its corrupt values only.
      handover: (id, raw, h, m) => (d.handover(id, raw, h, m), null),
    },
    { onProgress: progress(ctx, 'the keyspace') },
  )
  chatFold.flush()
  lockFold.flush()
  cpFold.flush()
  leases.add({ leads: walked.lead.items })
  return { walked, chats, leases, checkpoints }
}

/** The schema records of prefixes nested on a kind of key (`shop:c` beside `shop`), read by name. */
async function readNested(ctx: Context): Promise<DoctorState['nested']> {
  const looked = ctx.keys.nestedSchemas
  const hashes = await Promise.all(looked.map((n) => ctx.reader.source.hgetall(n.schema).catch(() => ({}) as Record<string, string>)))
  return { looked, found: looked.filter((_, i) => /^\d+$/.test(hashes[i]!.version ?? '')) }
}

/** Everything the checks look at, read in the order doctor always read it. */
async function readState(ctx: Context, deployed: DeployedFingerprints | null): Promise<DoctorState> {
  const nowMs = await ctx.reader.now() // also loads a Cluster's slots: the masters are known after it
  const source = ctx.reader.source
  const nodes: DoctorNode[] = Array.from({ length: await source.nodeCount() }, (_, index) => ({ index, name: source.nodeName(index) }))
  const redis = await readRedis(ctx, nodes)
  const schema = await readSchema(ctx, redis.clusterInfo !== null && !redis.clusterInfo.refused)
  const listings = await readListings(ctx, nowMs, deployed)
  schema.problem = ctx.io.StateReader.schemaProblem(schema.record)
  if (!schema.unread && !schema.corrupt && !schema.record) {
    const survey = await ctx.reader.prefixSurvey().catch(() => null)
    schema.survey = survey && { used: survey.used, others: survey.others }
  }
  const nested = await readNested(ctx)
  // The masters the scans could not read: the cluster check fails, and replicas whose heartbeats
  // live there are not known (not "none").
  const [unread, heartbeatsUnread] = await Promise.all([ctx.reader.unreachable(), ctx.reader.unreachable('replica')])
  const sentinel = ctx.target.sentinel
    ? { masterName: ctx.target.sentinel.masterName, sentinels: ctx.target.sentinel.sentinels.length }
    : null
  const { prefix, layout, schema: schemaKey, replicaIndex: replicaIndexKey } = ctx.keys
  return {
    nowMs,
    prefix,
    layout,
    schemaKey,
    replicaIndexKey,
    sentinel,
    nodes,
    redis,
    schema,
    nested,
    unread,
    heartbeatsUnread,
    deployed,
    ...listings,
  }
}

export async function collectDoctor(
  ctx: Context,
  o: { deployed?: DeployedFingerprints | null } = {},
): Promise<{ nowMs: number; target: { prefix: string; layout: Layout; masters: number }; checks: Check[] }> {
  const state = await readState(ctx, o.deployed ?? null)
  const checks = runDoctorChecks(state)
  // Each fix names the command with the connection this one used, so it runs as pasted.
  for (const ch of checks) if (ch.fix) ch.fix = ctx.cmdline(ch.fix)
  return { nowMs: state.nowMs, target: { prefix: ctx.keys.prefix, layout: ctx.keys.layout, masters: state.nodes.length }, checks }
}

export function doctorCommand(): Command {
  const cmd = new Command('doctor')
    .description('what makes coordination unsafe or slow here, and how to fix it; exits 1 when something is unsafe')
    .option('--strict', 'exit 1 on warnings too')
  return fingerprintOptions(cmd)
    .addHelpText(
      'after',
      `${examples('botmesh-coord --prefix shop doctor', 'botmesh-coord --prefix shop doctor --json | jq \'.checks[] | select(.status != "ok")\'')}

Checks: redis-version, eviction-policy, memory, persistence, failover, cluster, schema, layout,
nested-prefix (state of a prefix nested on a kind of key, e.g. shop:c beside shop), corrupt,
replicas (and those gone without an orderly stop, or beating unlisted by the replica index),
clock-skew, stale-tickets, late-renewals, expired-leases, zombie-leases, stale-writes (written
from outside the chat's turn), flow-versions (ephemeral checkpoints of a flow version other than the
deployed one, given with --fingerprint flow=fp; without it: more than one version per flow). A check
the ACL user may not run is "skip".
Exit: 0 nothing unsafe (warnings allowed), 1 something unsafe (or a warning with --strict).`,
    )
    .action(
      run(
        async (ctx, o: { strict?: boolean } & FingerprintFlags) => {
          const data = await collectDoctor(ctx, { deployed: deployedFingerprints(o) })
          const fails = data.checks.filter((c) => c.status === 'fail').length
          const warns = data.checks.filter((c) => c.status === 'warn').length
          const unsafe = fails > 0 || (o.strict === true && warns > 0)
          if (ctx.json) ctx.out(jsonOut('doctor', { ...data, ok: !unsafe, failures: fails, warnings: warns }))
          else {
            const { c } = ctx
            const mark = { ok: c.green('ok  '), warn: c.yellow('warn'), fail: c.red('FAIL'), skip: c.dim('skip') }
            for (const ch of data.checks) {
              ctx.out(`${mark[ch.status]}  ${c.bold(ch.id.padEnd(17))}${ch.detail}`)
              if (ch.fix && ch.status !== 'ok') ctx.out(`      ${' '.repeat(17)}${c.dim('→ ' + ch.fix)}`)
            }
            ctx.out(
              unsafe
                ? c.red(`\n${fails} unsafe, ${warns} warning(s)`)
                : c.green(`\nnothing unsafe${warns ? c.yellow(`, ${warns} warning(s)`) : ''}`),
            )
          }
          return unsafe ? EXIT.unsafe : EXIT.ok
        },
        { schema: false },
      ),
    )
}
