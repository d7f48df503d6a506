/**
 * The short, seeded fault campaign (chaos/): real replica processes against real redis-server
 * processes, one TCP proxy per replica, a fixed list of fault plans that together touch every kind of
 * fault the standalone layout supports, and every invariant checked on the recorded history.
 * The long campaign is `npm run chaos -- --runs 200 --seed 1` (docs/reliability.md).
 */
import { execFile } from 'node:child_process'
import { describe, expect, it } from 'vitest'

const PLANS = [
  'kill-holding,net-cut,op-skip',
  'redis-restart-empty,op-release-chat,kill-leading',
  'kill-after-send,net-cut-waiting,failover-lossy',
  'eviction,script-flush,op-yield',
  'redis-restart-aof,restart-same-id,block-0.9',
  'net-stall,op-evict,kill-queued,pause-0.5,clock-jump',
  'renew-latency,op-revoke-lead,pause-1.5,net-slow,pause-0.8',
].join(';')

interface Summary {
  runs: number
  errors: number
  handled: number
  messages: number
  faults: Record<string, number>
  violations: Record<string, number>
  failing: Array<{ seed: number; plan: unknown; violations: Array<{ invariant: string; message: string }>; error: string | null }>
}

function campaign(): Promise<{ summary: Summary; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['chaos/run.mjs', '--runs', '7', '--seed', '20260', '--plans', PLANS, '--json'],
      { timeout: 170_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        try {
          resolve({ summary: JSON.parse(stdout) as Summary, stderr })
        } catch {
          reject(new Error(`campaign did not report (${err?.message ?? 'no error'}):\n${stderr.slice(-3000)}`))
        }
      },
    )
  })
}

describe('fault campaign (short, seeded)', () => {
  it('its checkers catch planted violations (and pass clean histories)', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['chaos/selftest.mjs'], { timeout: 30_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
      ),
    )
    expect(out).toMatch(/all planted violations caught/)
  })

  it('keeps every invariant under crashes, freezes, Redis restarts, failover, network faults and operators', async () => {
    const { summary, stderr } = await campaign()
    // Every safety invariant must hold. The two time-bound ones (a dead holder's chat or lead taken
    // within leaseMs + poll + 400 ms; no leader gap longer than that) are timing: on this 2-core
    // machine, shared with the rest of the suite, they belong to the long campaign run alone under
    // the heavy lock (npm run chaos, docs/reliability.md), not to an assert here. "One lease, not
    // two" is checked on the state in test/contract/turns.contract.ts and chaos-dead-holder-ticket.
    const timing = ['handoff-time', 'leader-gap', 'queued-stall']
    const unexpected = Object.entries(summary.violations).filter(([k, v]) => v > 0 && !timing.includes(k))
    expect(summary.errors, stderr.slice(-3000)).toBe(0)
    expect(unexpected, stderr.slice(-4000)).toEqual([])
    expect(summary.runs).toBe(7)
    expect(summary.handled).toBeGreaterThan(summary.messages * 0.8)
    // every plan ran its faults
    // (an operator's intervention acts only on what it finds held or queued at that moment; on a busy
    // machine it may find nothing: the process faults must all land)
    for (const f of PLANS.split(/[;,]/).filter((f) => !f.startsWith('op-')))
      expect(summary.faults[f] ?? 0, `fault ${f} was not injected`).toBeGreaterThan(0)
  }, 180_000)
})
