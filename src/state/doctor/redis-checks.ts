/** The checks of Redis itself: its version, eviction policy, memory, persistence, failover and Cluster state. */
import type { DoctorCheck, DoctorNode, DoctorState, DoctorFinding, Probed } from './types.js'

/** Redis 7 runs scripts with a `#!lua` shebang (cross-slot access fails loudly on a Cluster). */
const MIN_REDIS = [7, 0]

export function infoField(info: string, field: string): string | null {
  const m = new RegExp(`^${field}:(.*)$`, 'm').exec(info)
  return m ? m[1]!.trim() : null
}

const nodeName = (n: DoctorNode) => n.name

/** "3 masters", "1 master", "1 server (a replica)": what the servers scanned are, by their INFO role. */
function serversPhrase(roles: Array<string | null>): string {
  const masters = roles.filter((r) => r !== 'slave').length
  const replicas = roles.length - masters
  if (!replicas) return `${masters} master${masters === 1 ? '' : 's'}`
  return `${roles.length} server${roles.length === 1 ? '' : 's'} (${replicas === roles.length ? (replicas === 1 ? 'a replica' : 'replicas') : `${replicas} a replica`})`
}

/** A check the ACL user may not run. */
export const skipped = (id: string, what: string, refused: string, grant: string): DoctorFinding => ({
  id,
  status: 'skip',
  detail: `could not run ${what}: ${refused.replace(/^NOPERM\s*/, '')}`,
  fix: `grant the ACL user ${grant} to run this check`,
})

/** The INFO of each master, when it could be read (the checks after the first two need it). */
const infosOf = (s: DoctorState): Probed<string> | null => (s.redis.infos.refused ? null : s.redis.infos)

const redisVersion: DoctorCheck = {
  id: 'redis-version',
  title: 'Redis 7.0 or newer on every master',
  run(s) {
    const infos = s.redis.infos
    if (infos.refused) return [skipped('redis-version', 'INFO', infos.refused, '+info')]
    const old = infos.ok
      .map(([n, info]) => [n, infoField(info, 'redis_version') ?? '0'] as const)
      .filter(([, v]) => {
        const [a = 0, b = 0] = v.split('.').map(Number)
        return a < MIN_REDIS[0]! || (a === MIN_REDIS[0] && b < MIN_REDIS[1]!)
      })
    if (old.length)
      return [
        {
          id: 'redis-version',
          status: 'fail',
          detail: `Redis ${old.map(([n, v]) => `${v} on ${nodeName(n)}`).join(', ')}: the scripts need Redis 7.0 or newer`,
          fix: 'upgrade Redis to 7.x',
        },
      ]
    const versions = [...new Set(infos.ok.map(([, i]) => infoField(i, 'redis_version')))].join(', ')
    return [
      { id: 'redis-version', status: 'ok', detail: `Redis ${versions} on ${serversPhrase(infos.ok.map(([, i]) => infoField(i, 'role')))}` },
    ]
  },
}

const evictionPolicy: DoctorCheck = {
  id: 'eviction-policy',
  title: 'maxmemory-policy noeviction',
  run(s) {
    const policies = s.redis.policies
    if (policies.refused) return [skipped('eviction-policy', 'CONFIG GET maxmemory-policy', policies.refused, '+config|get')]
    const bad = policies.ok.filter(([, p]) => p !== 'noeviction')
    if (!bad.length) return [{ id: 'eviction-policy', status: 'ok', detail: 'maxmemory-policy noeviction' }]
    return [
      {
        id: 'eviction-policy',
        status: 'fail',
        detail: `maxmemory-policy ${bad.map(([n, p]) => `${p} on ${nodeName(n)}`).join(', ')}: Redis may evict a lease key and let a second replica in`,
        fix: 'CONFIG SET maxmemory-policy noeviction (and in redis.conf), or give this bot its own Redis',
      },
    ]
  },
}

const size = (i: string, f: string) => {
  const n = Number(infoField(i, f) ?? 0)
  return n >= 1048576 ? `${(n / 1048576).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`
}

/**
 * Redis at maxmemory with noeviction refuses every write (OOM): no turn, renewal, heartbeat or
 * checkpoint can be written, and the replicas' leases lapse.
 */
const memory: DoctorCheck = {
  id: 'memory',
  title: 'below maxmemory',
  run(s) {
    const infos = infosOf(s)
    if (!infos) return []
    const full = infos.ok.filter(([, i]) => {
      const max = Number(infoField(i, 'maxmemory') ?? 0)
      return max > 0 && Number(infoField(i, 'used_memory') ?? 0) >= max
    })
    if (!full.length) {
      const limited = infos.ok.some(([, i]) => Number(infoField(i, 'maxmemory') ?? 0) > 0)
      return [{ id: 'memory', status: 'ok', detail: limited ? 'below maxmemory' : 'no maxmemory limit' }]
    }
    return [
      {
        id: 'memory',
        status: 'fail',
        detail: `Redis out of memory on ${full.map(([n, i]) => `${nodeName(n)} (${size(i, 'used_memory')} used of maxmemory ${size(i, 'maxmemory')})`).join(', ')}: it refuses every write (OOM), so no turn, lease renewal, heartbeat or checkpoint can be written`,
        fix: 'free memory (find the big keys: redis-cli --bigkeys) or raise maxmemory',
      },
    ]
  },
}

/** The masters without AOF: the CLI asks them for their RDB `save` setting (DoctorState.redis.saves). */
export function volatileMasters(infos: Probed<string>): DoctorNode[] {
  return infos.ok.filter(([, i]) => infoField(i, 'aof_enabled') !== '1').map(([n]) => n)
}

const persistence: DoctorCheck = {
  id: 'persistence',
  title: 'AOF, or at least RDB snapshots',
  run(s) {
    const infos = infosOf(s)
    if (!infos) return []
    const volatile = volatileMasters(infos)
    const saves = s.redis.saves ?? { ok: [], refused: null }
    const noDisk = saves.refused ? [] : saves.ok.filter(([, v]) => v.trim() === '')
    if (noDisk.length)
      return [
        {
          id: 'persistence',
          status: 'warn',
          detail: `no AOF and no RDB snapshots on ${noDisk.map(([n]) => nodeName(n)).join(', ')}: a Redis restart loses every checkpoint, queue and lease (fences still grow: they are seeded from Redis's clock)`,
          fix: 'appendonly yes (appendfsync everysec) so persistent checkpoints survive a restart',
        },
      ]
    if (!volatile.length) return [{ id: 'persistence', status: 'ok', detail: 'AOF enabled' }]
    return [
      {
        id: 'persistence',
        status: 'warn',
        detail: `no AOF on ${volatile.map(nodeName).join(', ')}${saves.refused ? '' : ' (RDB snapshots only)'}: a crash loses the writes since the last snapshot, checkpoints included`,
        fix: 'appendonly yes for checkpoints that survive a crash',
      },
    ]
  },
}

/** Some master has cluster_enabled:1. */
export const clusterOn = (infos: Probed<string>): boolean => infos.ok.some(([, i]) => infoField(i, 'cluster_enabled') === '1')

function failoverFinding(s: DoctorState, infos: Probed<string>): DoctorFinding {
  const replicaNodes = infos.ok.filter(([, i]) => infoField(i, 'role') === 'slave')
  if (replicaNodes.length)
    return {
      id: 'failover',
      status: 'fail',
      detail: `${replicaNodes.map(([n]) => nodeName(n)).join(', ')} is a read-only replica: replicas cannot coordinate through it`,
      fix: 'point --url / REDIS_URL at the master, or at its sentinels (--sentinel host:port --master-name <name>) to follow failovers',
    }
  const withReplicas = infos.ok.some(([, i]) => Number(infoField(i, 'connected_slaves') ?? 0) > 0)
  const cluster = clusterOn(infos)
  if (!withReplicas && !cluster && !s.sentinel)
    return {
      id: 'failover',
      status: 'ok',
      detail: 'single master without replicas: no failover can lose lease writes (but Redis is a single point of failure)',
    }
  const what = cluster
    ? 'Redis Cluster'
    : s.sentinel
      ? `master ${JSON.stringify(s.sentinel.masterName)} followed through ${s.sentinel.sentinels} sentinel(s)`
      : 'replicated master'
  return {
    id: 'failover',
    status: 'warn',
    detail: `${what}: a failover that loses the last writes can grant a lease twice (fences keep growing, so a fenced resource refuses the stale holder)`,
    fix: 'pass turn.fence / lead.fence to what you write; min-replicas-to-write 1 narrows the window',
  }
}

const failover: DoctorCheck = {
  id: 'failover',
  title: 'what a failover can lose',
  run(s) {
    const infos = infosOf(s)
    return infos ? [failoverFinding(s, infos)] : []
  },
}

/** cluster_state, and the masters the scans could not read (what the report says of their keys is not known). */
function clusterState(s: DoctorState, info: Probed<string>): DoctorFinding {
  const state = infoField(info.ok[0]?.[1] ?? '', 'cluster_state')
  if (s.unread.length)
    return {
      id: 'cluster',
      status: 'fail',
      detail: `${s.unread.length} slot owner${s.unread.length > 1 ? 's' : ''} did not answer: ${s.unread.map((m) => `${m.node} (slots ${m.slots}: ${m.error})`).join(', ')}; what this report says of the keys there is not known`,
      fix: 'a master is down or failing over: wait for its replica to be promoted (CLUSTER NODES shows who owns the slots), or bring it back',
    }
  if (state === 'ok')
    return { id: 'cluster', status: 'ok', detail: `cluster_state ok, ${s.nodes.length} masters scanned, every slot owner answered` }
  return {
    id: 'cluster',
    status: 'fail',
    detail: `cluster_state ${state ?? 'unknown'}: some slots have no master`,
    fix: 'repair the cluster (redis-cli --cluster check / fix); while a master is failing over, wait for its replica to be promoted',
  }
}

const cluster: DoctorCheck = {
  id: 'cluster',
  title: 'Cluster layout and state',
  run(s) {
    const infos = infosOf(s)
    if (!infos || !clusterOn(infos)) return []
    if (s.layout !== 'cluster')
      return [
        {
          id: 'cluster',
          status: 'fail',
          detail: 'the server is a Redis Cluster node but keys are read with the standalone layout',
          fix: 'drop --layout standalone (auto-detect) or use --layout cluster',
        },
      ]
    const info = s.redis.clusterInfo
    if (!info) return []
    if (info.refused) return [skipped('cluster', 'CLUSTER INFO', info.refused, '+cluster|info')]
    return [clusterState(s, info)]
  },
}

export const REDIS_CHECKS: DoctorCheck[] = [redisVersion, evictionPolicy, memory, persistence, failover, cluster]
