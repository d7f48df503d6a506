/**
 * docs/prometheus/alerts.yml: valid rules (promtool check rules) that fire as its unit tests say
 * (promtool test rules docs/prometheus/alerts.test.yml), and every metric they use is one the
 * exporter serves. promtool comes with Debian's package `prometheus` (.ci/run installs it).
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { describeMetrics } from '../../commands/exporter/metrics.js'
import { ROOT } from './markdown.js'

const DIR = join(ROOT, 'docs', 'prometheus')

function promtool(...args: string[]) {
  const r = spawnSync('promtool', args, { cwd: DIR, encoding: 'utf8', timeout: 60_000 })
  if (r.error) throw new Error(`promtool not found (apt-get install prometheus): ${r.error.message}`)
  return r
}

describe('Prometheus alerting rules', () => {
  it('promtool checks them', () => {
    const r = promtool('check', 'rules', 'alerts.yml')
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/SUCCESS: 13 rules found/)
  })

  it('their promtool unit tests pass', () => {
    const r = promtool('test', 'rules', 'alerts.test.yml')
    expect(r.status, r.stdout + r.stderr).toBe(0)
  })

  it('use only metrics the exporter serves, and name the command to run', async () => {
    const served = new Set((await describeMetrics()).map((m) => m.name))
    const rules = readFileSync(join(DIR, 'alerts.yml'), 'utf8')
    const used = new Set([...rules.matchAll(/\b(botmesh_[a-z_]+)/g)].map((m) => m[1]!))
    expect(used.size).toBeGreaterThan(5)
    expect([...used].filter((n) => !served.has(n))).toEqual([])
    for (const summary of rules.matchAll(/summary: (.*)/g)) expect(summary[1]).toMatch(/Run: botmesh-coord /)
  })
})
