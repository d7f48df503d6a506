/**
 * Smoke run of the benchmark (bench/run.js --smoke): tiny parameters, its own redis-server on a free
 * port. Checks only that it runs and that the report has its sections — never speed.
 * `npm test` builds first, and bench/ imports the built library.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const RUN = fileURLToPath(new URL('../bench/run.js', import.meta.url))
const out = mkdtempSync(join(tmpdir(), 'botmesh-bench-smoke-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill('SIGINT'), 170_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

describe('npm run bench (smoke)', () => {
  it('runs every section with tiny parameters and writes the report', async () => {
    const r = await runBench(['--smoke', '--out', out])
    expect(r.code, r.stderr).toBe(0)
    const json = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8'))
    expect(json.errors).toEqual({})
    expect(json.machine.cpus).toBeGreaterThan(0)
    expect(json.limit.length).toBe(2)
    expect(new Set(json.turns.map((s: { adapter: string }) => s.adapter))).toEqual(new Set(['botmesh', 'redlock', 'semaphore', 'naive']))
    for (const s of json.turns) {
      expect(s.messages).toBeGreaterThan(0)
      expect(typeof s.overlaps).toBe('number')
      expect(typeof s.outOfOrder).toBe('number')
    }
    // Renewals: the commands per cycle grow with the leases held, the writes (batches) do not.
    expect(json.renewal.map((x: { leases: number }) => x.leases)).toEqual([10, 100])
    // One script renews every lease of a standalone server: more leases, more Redis work, not more commands.
    expect(json.renewal[1].redisCommands).toBeGreaterThan(json.renewal[0].redisCommands)
    expect(json.renewal[1].commandsSent).toBe(json.renewal[0].commandsSent)
    expect(json.renewal[1].writes).toBeLessThanOrEqual(json.renewal[0].writes)
    expect(json.renewalLoaded).toEqual([expect.objectContaining({ leases: 100, lost: 0, heldAtEnd: 100 })])
    // Open loop: every scenario with every adapter, the same schedule each; the chart beside the report.
    const ol = json.openloop.rows as { scenario: string; adapter: string; completed: number; messages: number }[]
    for (const scenario of ['sweep', 'overload', 'contention'])
      expect(new Set(ol.filter((x) => x.scenario === scenario).map((x) => x.adapter))).toEqual(
        new Set(['botmesh', 'redlock', 'semaphore', 'naive']),
      )
    for (const x of ol) expect(x.completed).toBeGreaterThan(0)
    expect(readFileSync(join(out, 'openloop.svg'), 'utf8')).toContain('<svg')
    // The replica's heap per waiting message: every message of the smoke run waited, and each holds some heap.
    expect(json.openloop.waitingHeap).toEqual(expect.objectContaining({ messages: 500, chats: 100 }))
    expect(json.openloop.waitingHeap.bytesPerMessage).toBeGreaterThan(100)
    expect(readFileSync(join(out, 'latest.md'), 'utf8')).toContain('bytes of its replica')
    expect(json.failover.holderKill.length).toBe(1)
    expect(json.failover.leaderKill.length).toBe(1)
    expect(json.failover.yield.length).toBe(1)
    expect(json.scale[0].layout).toBe('standalone')
    expect(json.memory.chats).toBeGreaterThan(0)
    expect(json.targets.length).toBeGreaterThan(0)
    const md = readFileSync(join(out, 'latest.md'), 'utf8')
    for (const heading of [
      '### Targets',
      "### Redis's own limit",
      '### Turns',
      '### Open loop',
      '### Renewals',
      '### Failover',
      '### Operator side at scale',
      '### Redis memory',
    ]) {
      expect(md).toContain(heading)
    }
  }, 180_000)
})
