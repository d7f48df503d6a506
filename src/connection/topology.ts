/**
 * Which servers stand behind a client: a key's Cluster slot, the identity of a Cluster's masters and
 * the owner of a slot in it, watching for a changed server, and the eviction policy of each master.
 * Split from connection.ts: what the coordinator asks to notice a failover or a risky server.
 */
import type { Cluster, Redis } from 'ioredis'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { withTimeout } from './calls.js'
import { isCluster, masters, type RedisClient } from './client.js'

/** The Cluster hash slot of a key: CRC16 (XMODEM) of its hash tag (or of the whole key) mod 16384, as Redis computes it. */
export function keySlot(key: string | Buffer): number {
  let bytes = typeof key === 'string' ? Buffer.from(key) : key
  const open = bytes.indexOf(0x7b) // {
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1) // }
    if (close > open + 1) bytes = bytes.subarray(open + 1, close)
  }
  let crc = 0
  for (const b of bytes) {
    crc ^= b << 8
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc % 16384
}

/**
 * Who serves a Cluster's slots now, with each master's run_id: `host:port=run_id@0-5460,…`, one entry
 * per master (sorted, `;` between them). The slot map is read at once from a master that answers
 * (CLUSTER SLOTS; ioredis refreshes its own lazily), and each slot owner must answer INFO as a master
 * — one that does not answer, or answers as a replica (a stale map), makes the whole check fail,
 * and a master ioredis has no connection to yet makes it refresh its map and fail this time.
 */
export async function clusterIdentity(client: Cluster, timeoutMs: number): Promise<string> {
  type Slots = Array<[number, number, [string, number, ...unknown[]], ...unknown[]]>
  let slots: Slots | undefined
  let lastError: unknown = new CoordinationUnavailableError('unreachable', 'no Cluster master answered CLUSTER SLOTS')
  for (const node of client.nodes('master')) {
    try {
      slots = (await withTimeout(node.call('CLUSTER', 'SLOTS'), timeoutMs, 'CLUSTER SLOTS')) as Slots
      break
    } catch (err) {
      lastError = err
    }
  }
  if (!slots) throw lastError
  const ranges = new Map<string, string[]>()
  for (const [start, end, [host, port]] of slots) {
    const addr = `${host}:${port}`
    ranges.set(addr, [...(ranges.get(addr) ?? []), start === end ? `${start}` : `${start}-${end}`])
  }
  const nodes = new Map(client.nodes('all').map((n) => [`${n.options.host}:${n.options.port}`, n]))
  const entries = await Promise.all(
    [...ranges].map(async ([addr, owned]) => {
      const node = nodes.get(addr)
      if (!node) {
        void client.refreshSlotsCache()
        throw new CoordinationUnavailableError('unreachable', `no connection to the Cluster master ${addr} yet`)
      }
      const info = String(await withTimeout(node.call('INFO', 'server', 'replication'), timeoutMs, 'INFO'))
      if (!/role:master/.test(info)) {
        void client.refreshSlotsCache()
        throw new CoordinationUnavailableError('unreachable', `${addr} is no longer a master (the slot map was stale)`)
      }
      const run = /run_id:([0-9a-f]+)/.exec(info)?.[1] ?? '?'
      return `${addr}=${run}@${owned.sort((a, b) => parseInt(a) - parseInt(b)).join(',')}`
    }),
  )
  return entries.sort().join(';')
}

/**
 * The entry of a Cluster identity (clusterIdentity) that serves `slot`: `host:port=run_id`, or null
 * when none does (the identity is not a Cluster's, or the slot had no owner).
 */
export function slotOwnerIn(identity: string, slot: number): string | null {
  for (const entry of identity.split(';')) {
    const at = entry.indexOf('@')
    if (at < 0) return null
    for (const range of entry.slice(at + 1).split(',')) {
      const [a, b = a] = range.split('-')
      if (slot >= Number(a) && slot <= Number(b)) return entry.slice(0, at)
    }
  }
  return null
}

/** maxmemory-policy other than noeviction can silently evict lease keys. Checked on every master. */
export async function evictionWarnings(client: RedisClient): Promise<Array<{ code: string; message: string }>> {
  const out: Array<{ code: string; message: string }> = []
  const nodes: Redis[] = isCluster(client) ? masters(client) : [client as Redis]
  for (const node of nodes) {
    try {
      const r = (await node.config('GET', 'maxmemory-policy')) as string[]
      const policy = r[1]
      if (policy && policy !== 'noeviction') {
        out.push({
          code: 'eviction-policy',
          message: `Redis ${node.options.host}:${node.options.port} has maxmemory-policy ${policy}: it may evict lease keys; set it to noeviction`,
        })
      }
    } catch {
      // CONFIG may be refused to an ACL user: nothing to say then
    }
  }
  return out
}

/**
 * Call `onChange` when the server behind the client may have changed: a reconnect (to the same
 * server, a restarted one, or a new master: a Sentinel client, a managed service's address that
 * moved); on a Cluster, its set of masters changed (a failover, a slot moved) or a master's
 * connection came back. Returns a function that stops watching.
 */
export function watchServerChanges(client: RedisClient, onChange: () => void): () => void {
  if (!isCluster(client)) {
    client.on('ready', onChange)
    return () => void client.off('ready', onChange)
  }
  const signature = () =>
    masters(client)
      .map((n) => `${n.options.host}:${n.options.port}`)
      .sort()
      .join(',')
  let last = signature()
  const onRefresh = () => {
    const now = signature()
    if (now === last) return
    last = now
    onChange()
  }
  const watched = new Set<Redis>()
  const watchNode = (node: Redis) => {
    if (watched.has(node)) return
    watched.add(node)
    node.on('ready', onChange)
  }
  for (const node of client.nodes('master')) watchNode(node)
  client.on('refresh', onRefresh)
  client.on('+node', watchNode)
  return () => {
    client.off('refresh', onRefresh)
    client.off('+node', watchNode)
    for (const node of watched) node.off('ready', onChange)
  }
}
