// Section: renewals at scale. One replica holds N chat turns at once (10, 100, 1,000) and runs its
// renewal cycle (heartbeat + a renewal of every held lease, then the server's identity); per cycle:
// the commands it sends (counted in ioredis), the writes on its sockets (commands sent together leave
// in one write: that is one batch on the wire), the Redis commands run (INFO commandstats, those
// inside Lua included), Redis CPU, and the cycle's wall time.
import net from 'node:net'
import { spawn } from 'node:child_process'
import { Redis } from 'ioredis'
import { installCommandCounter, resetCommandCounts, commandCounts } from '../lib/count-commands.js'
import { parseCommandStats, parseInfo, diffStats, total, round } from '../lib/stats.js'

const redisCpuUs = (text) => {
  const i = parseInfo(text)
  return (Number(i.used_cpu_user) + Number(i.used_cpu_sys)) * 1e6
}

/** Count socket writes (write or writev system calls) in this process while `fn` runs. */
async function countingWrites(fn) {
  const proto = net.Socket.prototype
  const { _write: write, _writev: writev } = proto
  let writes = 0
  proto._write = function (...a) {
    writes++
    return write.apply(this, a)
  }
  proto._writev = function (...a) {
    writes++
    return writev.apply(this, a)
  }
  try {
    await fn()
  } finally {
    proto._write = write
    proto._writev = writev
  }
  return writes
}

/** Take the turns of chats chat:0 … chat:n-1 on coordinator `c`, `inFlight` acquisitions at a time. */
async function holdTurns(c, n, inFlight) {
  const turns = []
  for (let i = 0; i < n; i += inFlight) {
    const batch = []
    for (let j = i; j < Math.min(n, i + inFlight); j++) batch.push(c.acquireTurn(`chat:${j}`))
    turns.push(...(await Promise.all(batch)))
  }
  return turns
}

/** o: { url, counts: number[], cycles } */
export async function runRenewal(o, log) {
  const { RedisCoordinator } = await import('../../dist/src/index.js')
  installCommandCounter()
  const admin = new Redis(o.url)
  admin.on('error', () => {})
  const out = []
  try {
    for (const n of o.counts) {
      const c = new RedisCoordinator({ url: o.url, prefix: `bench-renew-${n}`, leaseMs: 600_000, replicaId: `renew-${n}` })
      c.on('coordination:warning', () => {})
      await c.start()
      const turns = await holdTurns(c, n, 200)
      await c.renewNow() // warm: scripts loaded, connections up
      const cpu0 = redisCpuUs(await admin.info('cpu'))
      const before = parseCommandStats(await admin.info('commandstats'))
      resetCommandCounts()
      const t0 = performance.now()
      const writes = await countingWrites(async () => {
        for (let k = 0; k < o.cycles; k++) await c.renewNow()
      })
      const ms = (performance.now() - t0) / o.cycles
      const client = commandCounts()
      const server = diffStats(before, parseCommandStats(await admin.info('commandstats')), 2)
      const cpu = redisCpuUs(await admin.info('cpu')) - cpu0
      const row = {
        leases: n,
        commandsSent: round(total(client) / o.cycles, 1),
        writes: round(writes / o.cycles, 1),
        redisCommands: round(total(server) / o.cycles, 1),
        redisCpuUs: round(cpu / o.cycles, 0),
        wallMs: round(ms, 2),
        clientCommands: Object.fromEntries(Object.entries(client).map(([k, v]) => [k, round(v / o.cycles, 1)])),
      }
      out.push(row)
      log(
        `  ${String(n).padStart(5)} leases: ${row.commandsSent} commands sent in ${row.writes} writes, ${row.redisCommands} Redis commands, ${row.redisCpuUs} µs Redis CPU, ${row.wallMs} ms per cycle`,
      )
      await Promise.all(turns.map((t) => t.release()))
      await c.stop()
      await admin.flushall()
    }
  } finally {
    admin.disconnect()
  }
  return out
}

/**
 * Renewals on time with the machine loaded: one replica holds N chat turns (leaseMs `leaseMs`, so a
 * renewal every leaseMs / 3) while `busy` busy-loop processes compete for the cores, for `cycles`
 * renewal intervals. Per N: the cycles seen, their wall time (p50 / max, against the interval), and
 * the leases lost (a cycle that slips past the lease drops them).
 * o: { url, held: number[], leaseMs, cycles, busy }
 */
export async function runRenewalLoaded(o, log) {
  const { RedisCoordinator } = await import('../../dist/src/index.js')
  const admin = new Redis(o.url)
  admin.on('error', () => {})
  const out = []
  try {
    for (const n of o.held) {
      const c = new RedisCoordinator({ url: o.url, prefix: `bench-held-${n}`, leaseMs: o.leaseMs, replicaId: `held-${n}` })
      c.on('coordination:warning', () => {})
      const cycles = []
      let lost = 0
      c.on('coordination:renewed', (e) => cycles.push(e.roundTripMs))
      c.on('coordination:lease-lost', () => lost++)
      await c.start()
      const turns = await holdTurns(c, n, 500)
      const busy = Array.from({ length: o.busy }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }))
      const interval = Math.floor(o.leaseMs / 3)
      cycles.length = 0
      try {
        await new Promise((r) => setTimeout(r, o.cycles * interval + interval / 2))
      } finally {
        for (const b of busy) if (b.exitCode === null) process.kill(b.pid, 'SIGKILL')
      }
      const held = turns.filter((t) => t.held).length
      const s = [...cycles].sort((a, b) => a - b)
      const row = {
        leases: n,
        busyLoops: o.busy,
        intervalMs: interval,
        cycles: s.length,
        cycleP50Ms: s.length ? round(s[Math.floor(s.length / 2)], 0) : null,
        cycleMaxMs: s.length ? round(s[s.length - 1], 0) : null,
        lost,
        heldAtEnd: held,
      }
      out.push(row)
      log(
        `  ${String(n).padStart(6)} leases, ${o.busy} busy loops: ${row.cycles} cycles, p50 ${row.cycleP50Ms} ms, max ${row.cycleMaxMs} ms (interval ${interval} ms); ${lost} lost, ${held} held at the end`,
      )
      for (let i = 0; i < turns.length; i += 2000) await Promise.all(turns.slice(i, i + 2000).map((t) => t.release().catch(() => {})))
      await c.stop()
      await admin.flushall()
    }
  } finally {
    admin.disconnect()
  }
  return out
}
