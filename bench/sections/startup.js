// Section 5: start-up of the CLI. Every command is a fresh Node process, so its start-up is most of
// what an operator waits for on a small state. Measured as ratios to a bare `node -e 0` on the same
// machine in the same run, interleaved round by round (one run of each case per round, the order
// rotating) so that load from elsewhere on the machine touches every case alike; medians are reported.
// The small state is real: three replicas (RedisCoordinator) holding a few chats, a lead and a lock.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { RedisCoordinator, RedisStore } from '../../dist/src/index.js'
import { quantile, round } from '../lib/stats.js'

const median = (xs) => quantile(Float64Array.from(xs).sort(), 0.5)

const BIN = fileURLToPath(new URL('../../bin/botmesh-coord.js', import.meta.url))
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null

/**
 * Run once: wall ms (monotonic, around the whole process). With `rss`, under /usr/bin/time for the
 * process's max RSS in MB instead (a separate run: the wrapper must not add to the timed ones).
 */
function once(args, rss = false) {
  return new Promise((resolve, reject) => {
    const argv = rss ? [TIME, '-f', '%M', process.execPath, ...args] : [process.execPath, ...args]
    const t0 = performance.now()
    const p = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } })
    let err = ''
    p.stderr.on('data', (d) => (err += d.toString()))
    p.on('error', reject)
    p.on('close', (code) => {
      const ms = performance.now() - t0
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited ${code}: ${err.slice(-300)}`))
      resolve({ ms, rssMb: rss ? Number(/(\d+)\s*$/.exec(err.trim())?.[1]) / 1024 : null })
    })
  })
}

export async function runStartup({ url, rounds }, log) {
  const prefix = `bench-startup-${process.pid}`
  const store = new RedisStore({ url, prefix })
  const replicas = ['pod-a', 'pod-b', 'pod-c'].map((replicaId) => new RedisCoordinator({ url, prefix, replicaId, leaseMs: 60_000 }))
  await Promise.all(replicas.map((r) => r.start()))
  const turns = []
  for (let i = 0; i < 6; i++) turns.push(await replicas[i % 3].acquireTurn(`chat:${i}`))
  const lead = await replicas[0].tryLead('provider:whatsapp')
  const lock = await store.acquireLockFenced('invoice:run', 60_000)
  await Promise.all(replicas.map((r) => r.renewNow()))
  const base = ['--url', url, '--prefix', prefix]
  const cases = [
    { id: 'node', label: '`node -e 0` (the baseline)', args: ['-e', '0'] },
    { id: 'version', label: '`botmesh-coord --version`', args: [BIN, '--version'] },
    { id: 'help', label: '`botmesh-coord --help`', args: [BIN, '--help'] },
    { id: 'completion', label: '`botmesh-coord completion bash`', args: [BIN, 'completion', 'bash'] },
    { id: 'leases', label: '`botmesh-coord leases ls` (3 replicas, 8 leases)', args: [BIN, ...base, 'leases', 'ls'] },
    { id: 'inspect', label: '`botmesh-coord chat inspect chat:0`', args: [BIN, ...base, 'chat', 'inspect', 'chat:0'] },
  ]
  const samples = Object.fromEntries(cases.map((c) => [c.id, []]))
  const rssMb = {}
  try {
    for (const c of cases) await once(c.args) // warm the file cache once
    if (TIME) for (const c of cases) rssMb[c.id] = (await once(c.args, true)).rssMb
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < cases.length; k++) {
        const c = cases[(r + k) % cases.length]
        samples[c.id].push(await once(c.args))
      }
    }
  } finally {
    await lead?.release().catch(() => {})
    if (lock) await store.releaseLock('invoice:run', lock.token).catch(() => {})
    for (const t of turns) await t.release().catch(() => {})
    await Promise.all(replicas.map((r) => r.stop().catch(() => {})))
    await store.close()
  }
  const nodeMs = median(samples.node.map((s) => s.ms))
  const out = {
    rounds,
    rssMeasured: TIME !== null,
    cases: cases.map((c) => {
      const ms = median(samples[c.id].map((s) => s.ms))
      return { id: c.id, label: c.label, medianMs: round(ms, 1), ratio: round(ms / nodeMs, 2), rssMb: TIME ? round(rssMb[c.id], 1) : null }
    }),
  }
  for (const c of out.cases) log(`  ${c.label}: ${c.medianMs} ms (${c.ratio}× node)${c.rssMb ? `, ${c.rssMb} MB` : ''}`)
  return out
}
