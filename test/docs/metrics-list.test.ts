/**
 * README's metric list is the exporter's registry: generated from it (`UPDATE_DOCS=1 npx vitest run
 * test/docs/metrics-list.test.ts` writes it), so it cannot drift. The alert list names every rule of
 * docs/prometheus/alerts.yml.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { describeMetrics } from '../../commands/exporter/metrics.js'
import { REPLICA_METRICS } from '../../src/metrics.js'
import { ROOT } from './markdown.js'

const README = join(ROOT, 'README.md')
const START = '<!-- metrics: generated from the exporter registry; do not edit -->'
const END = '<!-- /metrics -->'

async function metricTable(): Promise<string> {
  const rows = (await describeMetrics()).map(
    (m) => `| \`${m.name}\` | ${m.type} | ${m.labels.map((l) => `\`${l}\``).join(', ') || '-'} | ${m.help.replace(/\|/g, '\\|')} |`,
  )
  return ['| metric | type | labels | what it says |', '| --- | --- | --- | --- |', ...rows].join('\n')
}

describe('README: Monitoring and alerts', () => {
  it('lists every metric of the exporter as its registry declares it', async () => {
    const text = readFileSync(README, 'utf8')
    const from = text.indexOf(START)
    const to = text.indexOf(END)
    expect(from, `README.md needs the markers ${START} … ${END}`).toBeGreaterThan(0)
    const want = `${START}\n\n${await metricTable()}\n\n${END}`
    if (process.env.UPDATE_DOCS) writeFileSync(README, text.slice(0, from) + want + text.slice(to + END.length))
    else expect(text.slice(from, to + END.length)).toBe(want)
  })

  it('names every alerting rule and every metric a replica registers itself', () => {
    const text = readFileSync(README, 'utf8')
    const rules = [...readFileSync(join(ROOT, 'docs/prometheus/alerts.yml'), 'utf8').matchAll(/- alert: (\w+)/g)].map((m) => m[1]!)
    expect(rules.length).toBe(13)
    for (const r of rules) expect(text).toContain(`\`${r}\``)
    for (const m of Object.values(REPLICA_METRICS)) expect(text).toContain(`botmesh_replica_${m}`)
  })
})
