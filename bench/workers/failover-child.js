// A replica in its own process for the failover benchmark; one JSON line per event on stdout, each
// stamped with the machine-wide monotonic clock (t, ms), so the parent can time kills and takeovers.
//   node failover-child.js hold     <url> <prefix> <chat> <leaseMs>   take the turn, keep it (renewing)
//   node failover-child.js wait     <url> <prefix> <chat> <leaseMs>   queue for the turn, report the grant
//   node failover-child.js campaign <url> <prefix> <name> <leaseMs>   stand for a lead, report leader/follower
// 'exit' on stdin stops the coordinator in order.
import { createInterface } from 'node:readline'
import { RedisCoordinator } from '../../dist/src/index.js'
import { sharedNow } from '../lib/stats.js'

const [mode, url, prefix, key, leaseMs] = process.argv.slice(2)
const out = (o) => process.stdout.write(JSON.stringify({ ...o, t: sharedNow() }) + '\n')
// A cold start (connect, load the scripts) on a loaded machine can outlast commandTimeoutMs
// (leaseMs / 3): try again with a fresh coordinator, as a supervisor would; any other failure throws.
async function started() {
  for (let attempt = 1; ; attempt++) {
    const c = new RedisCoordinator({ url, prefix, leaseMs: Number(leaseMs), replicaId: `${mode}-${process.pid}` })
    c.on('coordination:warning', () => {})
    try {
      await c.start()
      return c
    } catch (err) {
      await c.stop().catch(() => {})
      if (attempt >= 10 || err?.reason !== 'unreachable') throw err
    }
  }
}
const coordinator = await started()
out({ event: 'started', incarnation: coordinator.incarnation })

createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line.trim() === 'exit') {
    await coordinator.stop().catch(() => {})
    process.exit(0)
  }
})

if (mode === 'hold' || mode === 'wait') {
  if (mode === 'wait') out({ event: 'acquiring' })
  const turn = await coordinator.acquireTurn(key, { waitMs: 120_000 })
  out({ event: 'granted', fence: turn.fence })
} else if (mode === 'campaign') {
  coordinator.campaign(key, {
    onLeader: async (lead) => out({ event: 'leader', fence: lead.fence }),
    onFollower: async ({ reason }) => out({ event: 'follower', reason }),
  })
}
