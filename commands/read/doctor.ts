import { Command } from 'commander'
import { run } from '../run.js'
import type { Context } from '../context.js'
import {
  CoordinationUnavailableError,
  CorruptStateError,
  isConnectionError,
  KeyLayout,
  leaseRows,
  staleTickets,
  zombieLeases,
  lateLeases,
  replicaHealth,
  leadRows,
  transportDownText,
  validatePrefix,
  type Layout,
  type Listing,
  type ReplicaSnapshot,
  type ChatSnapshot,
  type FlowCheckpoint,
  type DeployedFingerprints,
  staleCheckpointWrite,
  fingerprintMismatch,
  fingerprintsByFlow,
  shellWord,
  pinnedRevoke,
} from '../lib.js'
import { EXIT } from '../output/exit-codes.js'
import { jsonOut } from '../output/format.js'
import { dur } from '../output/time.js'
import { progress } from '../output/progress.js'
import { examples } from './common.js'
import { deployedFingerprints, fingerprintOptions, type FingerprintFlags } from './fingerprints.js'

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip'

export interface Check {
  /** Stable id: redis-version, eviction-policy, memory, persistence, failover, cluster, schema, layout, nested-prefix, corrupt, replicas, clock-skew, stale-tickets, late-renewals, expired-leases, zombie-leases, stale-writes, flow-versions. */
  id: string
  status: CheckStatus
  /** One line: what was found. */
  detail: string
  /** How to fix it (warn/fail), or what the user lacks (skip). */
  fix?: string
}

/** Redis 7 runs scripts with a `#!lua` shebang (cross-slot access fails loudly on a Cluster). */
const MIN_REDIS = [7, 0]
/** A replica's clock this far from Redis's is worth a look (beat - cw also holds one-way latency). */
const SKEW_WARN_MS = 1000

function infoField(info: string, field: string): string | null {
  const m = new RegExp(`^${field}:(.*)$`, 'm').exec(info)
  return m ? m[1]!.trim() : null
}

/** A master, by its index in the reader's source, named host:port. */
interface Node {
  index: number
  name: string
}
const nodeName = (n: Node) => n.name

/** "3 masters", "1 master", "1 server (a replica)": what the servers scanned are, by their INFO role. */
function serversPhrase(roles: Array<string | null>): string {
  const masters = roles.filter((r) => r !== 'slave').length
  const replicas = roles.length - masters
  if (!replicas) return `${masters} master${masters === 1 ? '' : 's'}`
  return `${roles.length} server${roles.length === 1 ? '' : 's'} (${replicas === roles.length ? (replicas === 1 ? 'a replica' : 'replicas') : `${replicas} a replica`})`
}

/** Run one probe on every master; a refusal (ACL, renamed command) makes the check a skip that says why. */
async function perNode<T>(nodes: Node[], f: (n: Node) => Promise<T>): Promise<{ ok: Array<[Node, T]>; refused: string | null }> {
  const ok: Array<[Node, T]> = []
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

const skipped = (id: string, what: string, refused: string, grant: string): Check => ({
  id,
  status: 'skip',
  detail: `could not run ${what}: ${refused.replace(/^NOPERM\s*/, '')}`,
  fix: `grant the ACL user ${grant} to run this check`,
})

export async function collectDoctor(
  ctx: Context,
  o: { deployed?: DeployedFingerprints | null } = {},
): Promise<{ nowMs: number; target: { prefix: string; layout: Layout; masters: number }; checks: Check[] }> {
  const checks: Check[] = []
  /** Where the 'cluster' check is: the masters the scans could not read are added to it at the end. */
  let clusterCheckAt = -1
  const nowMs = await ctx.reader.now() // also loads a Cluster's slots: the masters are known after it
  const source = ctx.reader.source
  const nodes: Node[] = Array.from({ length: await source.nodeCount() }, (_, index) => ({ index, name: source.nodeName(index) }))
  const probe = (what: Parameters<typeof source.probe>[1]) => (n: Node) => source.probe(n.index, what)

  // -- Redis itself: version, eviction, persistence, failover
  const infos = await perNode(nodes, probe('info'))
  if (infos.refused) {
    checks.push(skipped('redis-version', 'INFO', infos.refused, '+info'))
  } else {
    const old = infos.ok
      .map(([n, info]) => [n, infoField(info, 'redis_version') ?? '0'] as const)
      .filter(([, v]) => {
        const [a = 0, b = 0] = v.split('.').map(Number)
        return a < MIN_REDIS[0]! || (a === MIN_REDIS[0] && b < MIN_REDIS[1]!)
      })
    const versions = [...new Set(infos.ok.map(([, i]) => infoField(i, 'redis_version')))].join(', ')
    checks.push(
      old.length
        ? {
            id: 'redis-version',
            status: 'fail',
            detail: `Redis ${old.map(([n, v]) => `${v} on ${nodeName(n)}`).join(', ')}: the scripts need Redis 7.0 or newer`,
            fix: 'upgrade Redis to 7.x',
          }
        : {
            id: 'redis-version',
            status: 'ok',
            detail: `Redis ${versions} on ${serversPhrase(infos.ok.map(([, i]) => infoField(i, 'role')))}`,
          },
    )
  }

  const policies = await perNode(nodes, probe('maxmemory-policy'))
  if (policies.refused) checks.push(skipped('eviction-policy', 'CONFIG GET maxmemory-policy', policies.refused, '+config|get'))
  else {
    const bad = policies.ok.filter(([, p]) => p !== 'noeviction')
    checks.push(
      bad.length
        ? {
            id: 'eviction-policy',
            status: 'fail',
            detail: `maxmemory-policy ${bad.map(([n, p]) => `${p} on ${nodeName(n)}`).join(', ')}: Redis may evict a lease key and let a second replica in`,
            fix: 'CONFIG SET maxmemory-policy noeviction (and in redis.conf), or give this bot its own Redis',
          }
        : { id: 'eviction-policy', status: 'ok', detail: 'maxmemory-policy noeviction' },
    )
  }

  if (!infos.refused) {
    // Redis at maxmemory with noeviction refuses every write (OOM): no turn, renewal, heartbeat or
    // checkpoint can be written, and the replicas' leases lapse.
    const full = infos.ok.filter(([, i]) => {
      const max = Number(infoField(i, 'maxmemory') ?? 0)
      return max > 0 && Number(infoField(i, 'used_memory') ?? 0) >= max
    })
    const mb = (i: string, f: string) => {
      const n = Number(infoField(i, f) ?? 0)
      return n >= 1048576 ? `${(n / 1048576).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`
    }
    checks.push(
      full.length
        ? {
            id: 'memory',
            status: 'fail',
            detail: `Redis out of memory on ${full.map(([n, i]) => `${nodeName(n)} (${mb(i, 'used_memory')} used of maxmemory ${mb(i, 'maxmemory')})`).join(', ')}: it refuses every write (OOM), so no turn, lease renewal, heartbeat or checkpoint can be written`,
            fix: 'free memory (find the big keys: redis-cli --bigkeys) or raise maxmemory',
          }
        : {
            id: 'memory',
            status: 'ok',
            detail: infos.ok.some(([, i]) => Number(infoField(i, 'maxmemory') ?? 0) > 0) ? 'below maxmemory' : 'no maxmemory limit',
          },
    )
    const volatile = infos.ok.filter(([, i]) => infoField(i, 'aof_enabled') !== '1')
    const saves = await perNode(
      volatile.map(([n]) => n),
      probe('save'),
    )
    const noDisk = saves.refused ? [] : saves.ok.filter(([, s]) => s.trim() === '')
    checks.push(
      noDisk.length
        ? {
            id: 'persistence',
            status: 'warn',
            detail: `no AOF and no RDB snapshots on ${noDisk.map(([n]) => nodeName(n)).join(', ')}: a Redis restart loses every checkpoint, queue and lease (fences still grow: they are seeded from Redis's clock)`,
            fix: 'appendonly yes (appendfsync everysec) so persistent checkpoints survive a restart',
          }
        : volatile.length
          ? {
              id: 'persistence',
              status: 'warn',
              detail: `no AOF on ${volatile.map(([n]) => nodeName(n)).join(', ')}${saves.refused ? '' : ' (RDB snapshots only)'}: a crash loses the writes since the last snapshot, checkpoints included`,
              fix: 'appendonly yes for checkpoints that survive a crash',
            }
          : { id: 'persistence', status: 'ok', detail: 'AOF enabled' },
    )
    const replicaNodes = infos.ok.filter(([, i]) => infoField(i, 'role') === 'slave')
    const withReplicas = infos.ok.filter(([, i]) => Number(infoField(i, 'connected_slaves') ?? 0) > 0)
    const clusterOn = infos.ok.some(([, i]) => infoField(i, 'cluster_enabled') === '1')
    checks.push(
      replicaNodes.length
        ? {
            id: 'failover',
            status: 'fail',
            detail: `${replicaNodes.map(([n]) => nodeName(n)).join(', ')} is a read-only replica: replicas cannot coordinate through it`,
            fix: 'point --url / REDIS_URL at the master, or at its sentinels (--sentinel host:port --master-name <name>) to follow failovers',
          }
        : withReplicas.length || clusterOn || ctx.target.sentinel
          ? {
              id: 'failover',
              status: 'warn',
              detail: `${clusterOn ? 'Redis Cluster' : ctx.target.sentinel ? `master ${JSON.stringify(ctx.target.sentinel.masterName)} followed through ${ctx.target.sentinel.sentinels.length} sentinel(s)` : 'replicated master'}: a failover that loses the last writes can grant a lease twice (fences keep growing, so a fenced resource refuses the stale holder)`,
              fix: 'pass turn.fence / lead.fence to what you write; min-replicas-to-write 1 narrows the window',
            }
          : {
              id: 'failover',
              status: 'ok',
              detail: 'single master without replicas: no failover can lose lease writes (but Redis is a single point of failure)',
            },
    )
    // -- Cluster vs layout
    if (clusterOn && ctx.keys.layout !== 'cluster') {
      checks.push({
        id: 'cluster',
        status: 'fail',
        detail: 'the server is a Redis Cluster node but keys are read with the standalone layout',
        fix: 'drop --layout standalone (auto-detect) or use --layout cluster',
      })
    } else if (clusterOn) {
      const states = await perNode(
        infos.ok.map(([n]) => n),
        probe('cluster-info'),
      )
      if (states.refused) checks.push(skipped('cluster', 'CLUSTER INFO', states.refused, '+cluster|info'))
      else {
        const state = infoField(states.ok[0]?.[1] ?? '', 'cluster_state')
        clusterCheckAt = checks.length
        checks.push(
          state === 'ok'
            ? { id: 'cluster', status: 'ok', detail: `cluster_state ok` }
            : {
                id: 'cluster',
                status: 'fail',
                detail: `cluster_state ${state ?? 'unknown'}: some slots have no master`,
                fix: 'repair the cluster (redis-cli --cluster check / fix); while a master is failing over, wait for its replica to be promoted',
              },
        )
      }
    }
  }

  // -- The prefix: schema, layout, corrupt values, replicas and their clocks, stale tickets
  // A corrupt schema record is one failing check, not the end of the report.
  let schema: Awaited<ReturnType<typeof ctx.reader.schema>> = null
  let schemaCorrupt: string | null = null
  let schemaUnread: string | null = null
  try {
    schema = await ctx.reader.schema()
  } catch (err) {
    if (clusterCheckAt >= 0 && err instanceof CoordinationUnavailableError && err.reason === 'unreachable') schemaUnread = err.message
    else if (!(err instanceof CorruptStateError)) throw err
    else schemaCorrupt = err.message
  }
  const other: Layout = ctx.keys.layout === 'cluster' ? 'standalone' : 'cluster'
  const otherReader = new ctx.io.StateReader(source, new KeyLayout(ctx.keys.prefix, other))
  const [replicas, chats, leads, locks, cps, hos, otherChats, otherLeads, otherReplicas] = await Promise.all([
    ctx.reader.replicas({ onProgress: progress(ctx, 'replicas') }),
    ctx.reader.chats({ onProgress: progress(ctx, 'chats') }),
    ctx.reader.leads(),
    ctx.reader.locks(),
    ctx.reader.checkpoints({ onProgress: progress(ctx, 'checkpoints') }),
    ctx.reader.handovers(),
    otherReader.chats({ limit: 10_000 }),
    otherReader.leads({ limit: 10_000 }),
    otherReader.replicas({ limit: 10_000 }),
  ])
  const schemaProblem = ctx.io.StateReader.schemaProblem(schema)
  if (schemaUnread) {
    checks.push({
      id: 'schema',
      status: 'skip',
      detail: `could not read ${ctx.keys.schema}: ${schemaUnread.replace(/^Redis unreachable:\s*/, '')}`,
      fix: 'see the cluster check',
    })
  } else if (schemaCorrupt) {
    checks.push({
      id: 'schema',
      status: 'fail',
      detail: schemaCorrupt,
      fix: `something other than botmesh-coord wrote ${ctx.keys.schema}; the replicas refuse to start on it (inspect it with redis-cli HGETALL)`,
    })
  } else if (!schema) {
    const survey = await ctx.reader.prefixSurvey().catch(() => null)
    const others = survey && !survey.used && survey.others.length ? survey.others : null
    if (survey?.used) {
      // State under the prefix, but no record of its schema: the one key was deleted or evicted.
      checks.push({
        id: 'schema',
        status: 'warn',
        detail: `no schema record under prefix ${ctx.keys.prefix}, though it holds botmesh-coord state: ${ctx.keys.schema} was deleted or evicted`,
        fix: 'restart one replica: it writes the record when it starts (the replicas running now are not affected; the record tells readers the schema version and layout)',
      })
    } else {
      checks.push({
        id: 'schema',
        status: 'warn',
        detail: `no schema record under prefix ${ctx.keys.prefix}: no replica has started with it${survey && !survey.used ? ' (no botmesh-coord key at all under it)' : ''}${others ? `; prefixes with botmesh-coord state here: ${others.join(', ')}` : ''}`,
        fix: others
          ? `pass the replicas' prefix: --prefix ${others[0]} (or BOTMESH_PREFIX)`
          : "check --prefix / BOTMESH_PREFIX (the replicas' prefix option)",
      })
    }
  } else if (schemaProblem) {
    checks.push({
      id: 'schema',
      status: 'fail',
      detail: schemaProblem,
      fix: 'upgrade botmesh-coord',
    })
  } else {
    checks.push({ id: 'schema', status: 'ok', detail: `schema ${schema.version}, first written with the ${schema.layout} layout` })
  }
  const strays = otherChats.items.length + otherLeads.items.length + otherReplicas.items.length
  if (schema && schema.layout !== ctx.keys.layout) {
    checks.push({
      id: 'layout',
      status: 'fail',
      detail: `prefix ${ctx.keys.prefix} was first written with the ${schema.layout} layout, read now with ${ctx.keys.layout}${strays ? `; ${strays} key(s) of the ${other} layout found` : ''}`,
      fix: `give every replica and the CLI the same layout (--layout ${schema.layout}); replicas with different layouts do not see each other's turns`,
    })
  } else if (strays) {
    checks.push({
      id: 'layout',
      status: 'fail',
      detail: `${strays} chat/lead/replica key(s) under prefix ${ctx.keys.prefix} were written with the ${other} layout (e.g. ${[...otherChats.items.map((c) => c.key), ...otherLeads.items.map((l) => l.key), ...otherReplicas.items.map((r) => r.replicaId)].slice(0, 3).join(', ')}): those replicas do not coordinate with the others`,
      fix: `configure layout: '${ctx.keys.layout}' on every replica`,
    })
  } else checks.push({ id: 'layout', status: 'ok', detail: `every key under the prefix uses the ${ctx.keys.layout} layout` })

  checks.push(await nestedPrefixCheck(ctx))

  const listings: Array<[string, Listing<unknown>]> = [
    ['replica', replicas],
    ['chat', chats],
    ['lead', leads],
    ['lock', locks],
    ['checkpoint', cps],
    ['handover', hos],
  ]
  const corrupt = listings.flatMap(([, l]) => l.corrupt)
  checks.push(
    corrupt.length
      ? {
          id: 'corrupt',
          status: 'fail',
          detail: `${corrupt.length} corrupt value(s): ${corrupt
            .slice(0, 3)
            .map((k) => `${k.rawKey} (${k.error.replace(/^corrupt value at Redis key "[^"]*": /, '')})`)
            .join(', ')}`,
          fix: 'inspect them with redis-cli; something other than botmesh-coord writes under this prefix',
        }
      : { id: 'corrupt', status: 'ok', detail: `${listings.reduce((n, [, l]) => n + l.scanned, 0)} keys scanned, none corrupt` },
  )

  // The masters the scans could not read: the cluster check fails, and replicas whose heartbeats
  // live there are not known (not "none").
  const [unread, heartbeatsUnread] = await Promise.all([ctx.reader.unreachable(), ctx.reader.unreachable('replica')])
  if (clusterCheckAt >= 0) {
    const scanned = nodes.length - unread.filter((m) => nodes.some((n) => nodeName(n) === m.node)).length
    checks[clusterCheckAt] = unread.length
      ? {
          id: 'cluster',
          status: 'fail',
          detail: `${unread.length} slot owner${unread.length > 1 ? 's' : ''} did not answer: ${unread.map((m) => `${m.node} (slots ${m.slots}: ${m.error})`).join(', ')}; what this report says of the keys there is not known`,
          fix: 'a master is down or failing over: wait for its replica to be promoted (CLUSTER NODES shows who owns the slots), or bring it back',
        }
      : checks[clusterCheckAt]!.status === 'ok'
        ? { ...checks[clusterCheckAt]!, detail: `cluster_state ok, ${scanned} masters scanned, every slot owner answered` }
        : checks[clusterCheckAt]!
  }
  const live = replicas.items.filter((r) => r.expiresAtMs > nowMs)
  checks.push(
    heartbeatsUnread.length
      ? {
          id: 'replicas',
          status: 'fail',
          detail: `cannot know the live replicas: master ${heartbeatsUnread[0]!.node} (slots ${heartbeatsUnread[0]!.slots}), which holds every heartbeat under prefix ${ctx.keys.prefix}, did not answer`,
          fix: 'see the cluster check',
        }
      : replicaCheck(
          live,
          replicas.items.filter((r) => replicaHealth(r, nowMs).state === 'gone'),
          nowMs,
        ),
  )
  const skewed = live.filter((r) => r.clockSkewMs !== null && Math.abs(r.clockSkewMs) > SKEW_WARN_MS)
  checks.push(
    skewed.length
      ? {
          id: 'clock-skew',
          status: 'warn',
          detail: `clocks off Redis's by more than ${dur(SKEW_WARN_MS)}: ${skewed.map((r) => `${r.replicaId} ${r.clockSkewMs! > 0 ? 'behind' : 'ahead'} ${dur(Math.abs(r.clockSkewMs!))}`).join(', ')}. Leases use Redis's clock, but logs, events and timestamps from that host will not line up`,
          fix: 'run NTP (chrony/systemd-timesyncd) on those hosts; a large value can also be heartbeat latency',
        }
      : {
          id: 'clock-skew',
          status: 'ok',
          detail: live.length ? `every replica's clock within ${dur(SKEW_WARN_MS)} of Redis's` : 'no live replica to compare',
        },
  )

  const stale = staleTickets(chats.items, replicas.items, nowMs)
  // A listing reads the head of each queue: in a longer one, the tickets behind it are not judged.
  const longQueues = chats.items.filter((c) => c.queued > c.tickets.length)
  const notRead = longQueues.length
    ? ` (only the first ${Math.max(...longQueues.map((c) => c.tickets.length))} tickets of each queue are read: ${longQueues.length} longer queue(s) have ${longQueues.reduce((n, c) => n + c.queued - c.tickets.length, 0)} more, not judged; chat inspect <key> --tickets <n> shows them)`
    : ''
  checks.push(
    stale.length
      ? {
          id: 'stale-tickets',
          status: 'warn',
          detail: `${stale.length} queued ticket(s) of replicas that died, restarted or stopped polling: ${stale
            .slice(0, 3)
            .map((t) => `${t.key}#${t.ticket} (${t.replicaId}, ${t.state})`)
            .join(', ')}${stale.length > 3 ? ', …' : ''}; they are skipped when they reach the head${notRead}`,
          fix: 'botmesh-coord chat ls --waiting; botmesh-coord chat inspect <key> --explain',
        }
      : { id: 'stale-tickets', status: 'ok', detail: `no stale tickets${notRead}` },
  )
  const leaseList = leaseRows({ chats: chats.items, leads: leads.items, locks: locks.items, replicas: replicas.items }, nowMs)
  const late = [
    ...live.map((r) => replicaHealth(r, nowMs)).filter((h) => h.state === 'late'),
    ...lateLeases(leaseList).map((l) => ({ ...l, reason: `${l.kind} ${l.key}: ${l.reason}` })),
  ]
  checks.push(
    late.length
      ? {
          id: 'late-renewals',
          status: 'warn',
          detail: `${late.length} heartbeat(s) or lease(s) not renewed on time: ${late
            .slice(0, 3)
            .map((l) => l.reason)
            .join('; ')}${late.length > 3 ? '; …' : ''}`,
          fix: 'look at those replicas (event loop, GC pauses, network to Redis); botmesh-coord leases ls --sort renewal',
        }
      : { id: 'late-renewals', status: 'ok', detail: 'every heartbeat and lease renewed on time' },
  )
  // An expired lease is not held, whatever its record still names: nothing to release, but its holder stopped renewing.
  const expired = leaseList.filter((l) => l.state === 'expired')
  checks.push(
    expired.length
      ? {
          id: 'expired-leases',
          status: 'warn',
          detail: `${expired.length} lease(s) past their expiry, not held: ${expired
            .slice(0, 3)
            .map((l) => `${l.kind} ${l.key} (${l.reason.replace(/^not held: /, '')})`)
            .join('; ')}${expired.length > 3 ? '; …' : ''}`,
          fix: "their holder stopped renewing (frozen or gone: botmesh-coord replicas ls --all); a chat's next waiter or message takes its turn, a lead's next candidate takes it",
        }
      : { id: 'expired-leases', status: 'ok', detail: 'no lease past its expiry' },
  )
  const zombies = zombieLeases(leaseList)
  checks.push(
    zombies.length
      ? {
          id: 'zombie-leases',
          status: 'warn',
          detail: `${zombies.length} lease(s) held by a replica without heartbeat, not yet expired: ${zombies
            .slice(0, 3)
            .map((z) => `${z.kind} ${z.key} (${z.replicaId}, ${dur(z.expiresInMs)} left)`)
            .join(', ')}`,
          fix: `they expire by themselves; to act now, pinned to what doctor saw: ${zombies
            .slice(0, 3)
            .map((z) => pinnedRevoke(z.kind, z.key, z.fence))
            .join(
              '; ',
            )}${zombies[0]!.replicaId && zombies[0]!.incarnation ? `; or evict the replica: botmesh-coord replica evict ${shellWord(zombies[0]!.replicaId)} --if-incarnation ${zombies[0]!.incarnation}` : ''}`,
        }
      : { id: 'zombie-leases', status: 'ok', detail: 'every lease holder beats' },
  )
  // A leader that renews but recorded its transport closed: nothing is sent on that provider until it
  // comes back or the leader yields (providerDownMs after it went down).
  const downs = leadRows(leads.items, replicas.items, nowMs).filter((l) => l.transportDown !== null)
  checks.push(
    downs.length
      ? {
          id: 'transports',
          status: 'warn',
          detail: `${downs.length} leader(s) report their transport down: ${downs
            .slice(0, 3)
            .map(
              (l) =>
                `${l.key} (${l.replicaId}: ${transportDownText(l.transportDown!)}, ${l.transportDown!.yieldsInMs > 0 ? `yields in ${dur(l.transportDown!.yieldsInMs)}` : 'yielding now'})`,
            )
            .join(', ')}${downs.length > 3 ? ', …' : ''}; nothing is sent or received on them meanwhile`,
          fix: `look at that replica's transport (session, network to the provider); to hand it over now: ${downs
            .slice(0, 3)
            .map((l) => `botmesh-coord provider yield ${shellWord(l.key)}${l.fence !== null ? ` --if-fence ${l.fence}` : ''} --wait`)
            .join('; ')}`,
        }
      : { id: 'transports', status: 'ok', detail: 'every leader reports its transport up' },
  )
  if (heartbeatsUnread.length) {
    // Without the heartbeats, who is alive is not known: these checks would judge every holder dead.
    for (const id of ['clock-skew', 'stale-tickets', 'late-renewals', 'expired-leases', 'zombie-leases']) {
      const i = checks.findIndex((c) => c.id === id)
      if (i >= 0) checks[i] = { id, status: 'skip', detail: 'cannot know: the heartbeats were not read', fix: 'see the replicas check' }
    }
  }
  checks.push(...checkpointChecks(chats.items, cps.items, o.deployed ?? null))
  // Each fix names the command with the connection this one used, so it runs as pasted.
  for (const ch of checks) if (ch.fix) ch.fix = ctx.cmdline(ch.fix)
  return { nowMs, target: { prefix: ctx.keys.prefix, layout: ctx.keys.layout, masters: nodes.length }, checks }
}

/** Checkpoints written from outside their turn, and ephemeral ones of a flow version no longer deployed. */
function checkpointChecks(chats: ChatSnapshot[], cps: FlowCheckpoint[], deployed: DeployedFingerprints | null): Check[] {
  const byKey = new Map(chats.map((c) => [c.key, c]))
  const stale = cps.map((cp) => staleCheckpointWrite(byKey.get(cp.key) ?? null, cp)).filter((x) => x !== null)
  const writes: Check = stale.length
    ? {
        id: 'stale-writes',
        status: 'fail',
        detail: `${stale.length} checkpoint(s) written from outside the chat's turn: ${stale
          .slice(0, 3)
          .map(
            (w) => `${w.key} (revision ${w.revision} by ${w.replicaId} ${w.fence === null ? 'without a fence' : `under fence ${w.fence}`})`,
          )
          .join(', ')}${stale.length > 3 ? ', …' : ''}; the next turn resumes from a state its holder did not write`,
        fix: `pass turn.fence to setCheckpointIf in that runtime; remove each: ${stale[0]!.fix}${stale.length > 1 ? ' (botmesh-coord chat inspect <key> --explain names each one)' : ''}`,
      }
    : { id: 'stale-writes', status: 'ok', detail: `every checkpoint written by its chat's turn (${cps.length} checked)` }
  let fingerprints: Check
  if (deployed) {
    const mism = cps.map((cp) => fingerprintMismatch(cp, deployed)).filter((x) => x !== null)
    const perFlow = new Map<string, number>()
    for (const m of mism) perFlow.set(m.flow, (perFlow.get(m.flow) ?? 0) + 1)
    fingerprints = mism.length
      ? {
          id: 'flow-versions',
          status: 'warn',
          detail: `${mism.length} ephemeral checkpoint(s) of a flow version no longer deployed: ${[...perFlow]
            .map(([flow, n]) => `${flow} ${n} (deployed ${deployed[flow]})`)
            .join(', ')}; the runtime will not resume them (fallback changed: the conversation restarts)`,
          fix: [...perFlow.keys()]
            .map(
              (flow) =>
                `botmesh-coord checkpoints rm --flow ${shellWord(flow)} --ephemeral --fingerprint-not ${shellWord(deployed[flow]!)}`,
            )
            .join('; '),
        }
      : {
          id: 'flow-versions',
          status: 'ok',
          detail: `every ephemeral checkpoint of ${Object.keys(deployed).join(', ')} matches the deployed fingerprint`,
        }
  } else {
    const mixed = [...fingerprintsByFlow(cps)].filter(([, fps]) => fps.size > 1)
    fingerprints = mixed.length
      ? {
          id: 'flow-versions',
          status: 'warn',
          detail: `ephemeral checkpoints of more than one version of ${mixed
            .map(([flow, fps]) => `${flow} (${[...fps].map(([fp, n]) => `${fp}: ${n}`).join(', ')})`)
            .join(', ')}: those of a version no longer deployed will not be resumed`,
          fix: 'botmesh-coord doctor --fingerprint <flow>=<deployed fingerprint> counts them; botmesh-coord checkpoints ls --fingerprint <flow>=<fp> --mismatched lists them',
        }
      : { id: 'flow-versions', status: 'ok', detail: 'one flow version per flow among the ephemeral checkpoints' }
  }
  return [writes, fingerprints]
}

/** Replicas whose heartbeat expired within the last GONE_KEEP_MS: frozen, cut off or killed. */
function goneNote(gone: ReplicaSnapshot[], nowMs: number): string {
  const one = (r: ReplicaSnapshot) => {
    const held = r.leases.held.length
      ? `, held ${r.leases.held.map((h) => `${h.kind} ${h.key}`).join(', ')}${r.leases.more ? ` and ${r.leases.more} more` : ''}`
      : ''
    return `${r.replicaId} (no heartbeat for ${dur(nowMs - r.beatAtMs)}${held})`
  }
  return `${gone.length} replica(s) gone without an orderly stop: ${gone.slice(0, 3).map(one).join(', ')}${gone.length > 3 ? ', …' : ''}`
}

function replicaCheck(live: ReplicaSnapshot[], gone: ReplicaSnapshot[] = [], nowMs = 0): Check {
  const base = liveReplicaCheck(live)
  if (!gone.length) return base
  // Gone replicas are a warning of their own, added to what the live ones say (none, mixed leaseMs, ok).
  return {
    id: 'replicas',
    status: base.status === 'fail' ? 'fail' : 'warn',
    detail: `${base.detail}; ${goneNote(gone, nowMs)}: frozen, cut off or killed (their leases expire or are taken over)`,
    fix: `${base.fix ? `${base.fix}; ` : ''}botmesh-coord replicas ls; look at those pods (a frozen one beats again when it wakes; a killed one is restarted by its supervisor)`,
  }
}

/**
 * Prefixes nested on a kind of key (`shop:c` beside `shop`) are refused by this release, but one an
 * earlier release ran on may still hold state here, under this prefix's key names (`shop:c:c:chat:1`
 * is chat `c:chat:1` of `shop`), so an intervention here could change its turns. Found by its schema
 * record, read by name.
 */
async function nestedPrefixCheck(ctx: Context): Promise<Check> {
  const nested = ctx.keys.nestedSchemas
  const hashes = await Promise.all(nested.map((n) => ctx.reader.source.hgetall(n.schema).catch(() => ({}) as Record<string, string>)))
  const found = nested.filter((_, i) => /^\d+$/.test(hashes[i]!.version ?? ''))
  if (!found.length) {
    return { id: 'nested-prefix', status: 'ok', detail: `no prefix nested on a kind of key (${nested[0]!.prefix}, …) holds state here` }
  }
  const first = found[0]!
  let why = ''
  try {
    validatePrefix(first.prefix)
  } catch (err) {
    why = (err as Error).message
  }
  const segment = first.prefix.slice(ctx.keys.prefix.length + 1)
  return {
    id: 'nested-prefix',
    status: 'fail',
    detail: `prefix ${found.map((f) => `${f.prefix} (schema record ${f.schema})`).join(', ')} holds state here, under this prefix's key names (${first.prefix}'s chat <id> is ${first.prefix}:c:<id>, chat ${segment}:<id> of ${ctx.keys.prefix} on the standalone layout): commands under ${ctx.keys.prefix} count, list and can change it as their own`,
    fix: `${why}; until then, check a key that begins with ${segment}: before acting on it`,
  }
}

function liveReplicaCheck(live: ReplicaSnapshot[]): Check {
  if (live.length === 0)
    return { id: 'replicas', status: 'warn', detail: 'no live replica under this prefix', fix: 'check --prefix, or whether the bot runs' }
  const leaseMs = new Set(live.map((r) => r.info.leaseMs))
  const versions = new Set(live.map((r) => r.info.version))
  if (leaseMs.size > 1) {
    return {
      id: 'replicas',
      status: 'warn',
      detail: `replicas run with different leaseMs (${[...leaseMs].map((m) => dur(m)).join(', ')}): failover times and ticket deadlines differ per replica`,
      fix: 'give every replica the same leaseMs',
    }
  }
  return {
    id: 'replicas',
    status: 'ok',
    detail: `${live.length} live replica(s), leaseMs ${dur([...leaseMs][0]!)}, version${versions.size > 1 ? 's' : ''} ${[...versions].join(', ')}`,
  }
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
replicas (and those gone without an orderly stop), clock-skew, stale-tickets, late-renewals,
expired-leases, zombie-leases, stale-writes (written from
outside the chat's turn), flow-versions (ephemeral checkpoints of a flow version other than the
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
