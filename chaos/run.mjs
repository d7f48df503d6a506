#!/usr/bin/env node
// node chaos/run.mjs --runs N --seed S [--lease-ms 1000] [--cluster-every 12] [--ha-every 0] [--only kind,kind] [--plans 'a,b;c']
//                    [--replay RUNSEED] [--keep] [--json] [--max-minutes M] [--no-snapshot]
// (npm run chaos -- --runs N --seed S: builds dist/ first)
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execFileSync } from 'node:child_process'
import { assertRedisServerAvailable } from '../scripts/redis-procs.mjs'

const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : dflt
}
// --replay S: one run with run seed S exactly as the campaign ran it (the seed a failing run prints)
const replay = opt('replay', null) === null ? undefined : Number(opt('replay'))
const runs = replay === undefined ? Number(opt('runs', 20)) : 1
const seed = Number(opt('seed', Date.now() % 1_000_000))
const leaseMs = Number(opt('lease-ms', 1000))
const clusterEvery = Number(opt('cluster-every', 12))
// --ha-every N: about one run in N on a high-availability topology (Sentinel, or a Cluster with replicas) with its failover faults
const haEvery = Number(opt('ha-every', 0))
const only = opt('only', null)?.split(',')
// --plans 'a,b;c': run i injects exactly the faults of plan i (mod the number of plans)
const plans = opt('plans', null)
  ?.split(';')
  .map((p) => p.split(',').filter(Boolean))
const maxMinutes = Number(opt('max-minutes', 0))
const json = args.includes('--json')

// No redis-server, no campaign: one line, exit 1.
try {
  assertRedisServerAvailable()
} catch (e) {
  console.error(e.message)
  process.exit(1)
}

// Run against a frozen copy of the build (dist/ and lua/): a rebuild or an edit of lua/ while the
// campaign runs cannot mix two versions of the library into one table. --no-snapshot: this checkout.
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
let snapshot = null
if (!args.includes('--no-snapshot') && !process.env.CHAOS_LIB) {
  snapshot = mkdtempSync(join(tmpdir(), 'botmesh-chaos-lib-'))
  cpSync(join(root, 'dist'), join(snapshot, 'dist'), { recursive: true })
  cpSync(join(root, 'lua'), join(snapshot, 'lua'), { recursive: true })
  cpSync(join(root, 'package.json'), join(snapshot, 'package.json'))
  symlinkSync(join(root, 'node_modules'), join(snapshot, 'node_modules'))
  process.env.CHAOS_LIB = snapshot
  process.once('exit', () => rmSync(snapshot, { recursive: true, force: true }))
}
const { runCampaign, killAllSync, ALL_FAULTS } = await import('./campaign.mjs')
const { formatTable, formatFailure } = await import('./report.mjs')
for (const f of [...(only ?? []), ...(plans ?? []).flat()])
  if (!ALL_FAULTS.includes(f)) {
    console.error(`unknown fault ${f}; known: ${ALL_FAULTS.join(', ')}`)
    process.exit(2)
  }

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    console.error(`\n${sig}: stopping every process the campaign started`)
    killAllSync()
    if (snapshot) rmSync(snapshot, { recursive: true, force: true })
    process.exit(130)
  })
}

let commit = 'unknown'
try {
  commit = execFileSync('git', ['-C', root, 'describe', '--always', '--dirty'], { encoding: 'utf8' }).trim()
} catch {}
console.error(`chaos: ${runs} runs, seed ${seed}, leaseMs ${leaseMs}, library ${commit}${snapshot ? ' (snapshot)' : ''}`)
const summary = await runCampaign({
  runs,
  seed,
  leaseMs,
  clusterEvery,
  haEvery,
  only,
  plans,
  replay,
  keep: args.includes('--keep'),
  maxMs: maxMinutes ? maxMinutes * 60_000 : 0,
  onRun: (res, i) => {
    const v = res.violations.length
    const tag = res.error ? 'ERROR' : v ? `${v} VIOLATION(S)` : 'ok'
    console.error(
      `run ${i + 1}/${runs} seed ${res.seed} ${res.plan.topology && res.plan.topology !== 'standalone' ? `${res.plan.topology} ` : ''}[${res.plan.faults.join(', ')}] ` +
        `${res.stats.handled ?? 0}/${res.stats.messages ?? 0} msgs ${(res.wallMs / 1000).toFixed(1)}s ${tag}`,
    )
    if (res.error || v) console.error(formatFailure(res))
  },
})
summary.library = commit
if (json)
  console.log(
    JSON.stringify(
      { ...summary, failing: summary.failing.map((f) => ({ seed: f.seed, plan: f.plan, violations: f.violations, error: f.error })) },
      null,
      1,
    ),
  )
else {
  // A run's plan follows from its seed and the options that choose plans: a replay names them too.
  const choosing = [
    leaseMs !== 1000 && `--lease-ms ${leaseMs}`,
    clusterEvery !== 12 && `--cluster-every ${clusterEvery}`,
    haEvery !== 0 && `--ha-every ${haEvery}`,
    only && `--only ${only.join(',')}`,
  ].filter(Boolean)
  console.log(formatTable(summary, ['node chaos/run.mjs --replay <seed>', ...choosing].join(' ')))
}
const bad = summary.errors + Object.values(summary.violations).reduce((a, b) => a + b, 0)
killAllSync()
process.exit(bad ? 1 : 0)
