/**
 * What the dashboard says must be what is true: the confirmation prompt shows (and acts at) the fence
 * of the screen behind it, the lease panel says what it holds, "all healthy" only when nothing needs
 * attention, no event "in 57ms", a filter that matches nothing says so, and a leader whose transport
 * is down reads down with when it yields.
 */
import React from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { render, cleanup } from 'ink-testing-library'
import { DashboardApp, type DashboardData } from '../../commands/tui/dashboard-app.js'
import type { ActionOutcome } from '../../commands/tui/interventions.js'
import type { DashboardSnapshot } from '../../src/index.js'
import { LEAD_FENCE, NOW, chatDetailOf, dashboard, incarnationOf, lead, replica } from '../helpers/snapshots.js'
import { strip } from './frame.js'
import { until } from '../helpers/wait.js'

function fakeSource(initial: DashboardSnapshot = dashboard()) {
  const calls: Array<[string, ...unknown[]]> = []
  const state = { snap: initial }
  const ok = (text: string): Promise<ActionOutcome> => Promise.resolve({ ok: true, text })
  const source: DashboardData = {
    url: 'redis://127.0.0.1:6379',
    prefix: 'shop',
    layout: 'standalone',
    read: async () => state.snap,
    chat: async (key) => chatDetailOf(state.snap, key),
    commandsTotal: () => 9,
    interventions: {
      yieldProvider: (name, o) => (calls.push(['yield', name, o]), ok(`asked pod-a to yield ${name}`)),
      releaseChat: (key, o) => (calls.push(['release', key, o]), ok(`released ${key}`)),
      skipTicket: (key, ticket, o) => (calls.push(['skip', key, ticket, o]), ok(`skipped ${ticket}`)),
      removeHandover: (key, o) => (calls.push(['handover-rm', key, o]), ok(`removed ${key}`)),
      extendCheckpoint: (key, o) => (calls.push(['extend', key, o]), ok(`extended ${key}`)),
    },
  }
  return { source, calls, state }
}

const mount = (src: DashboardData, intervalMs = 60_000) =>
  render(<DashboardApp source={src} intervalMs={intervalMs} readOnly={false} colour={false} size={{ columns: 150, rows: 34 }} />)

const standby = [{ replicaId: 'pod-b', incarnation: incarnationOf('pod-b'), deadlineMs: NOW + 5000 }]

afterEach(() => cleanup())

describe('the dashboard tells the truth', () => {
  it('the confirmation prompt follows the refreshes behind it: it shows and acts at the latest fence', async () => {
    const { source, calls, state } = fakeSource()
    const app = mount(source, 100)
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    app.stdin.write('y')
    await until(() => expect(strip(app.lastFrame())).toContain(`fence ${LEAD_FENCE}, standbys pod-b`))
    const newer = LEAD_FENCE + 7
    state.snap = dashboard({ providers: [lead('provider:wa', 'pod-a', { fence: newer, candidates: standby })] })
    await until(() => expect(strip(app.lastFrame())).toContain(`confirm? [y/N]  = provider yield provider:wa --if-fence ${newer}`), 5000)
    expect(strip(app.lastFrame())).toContain(`yield provider:wa: leader pod-a (pod-a-in) fence ${newer}`)
    app.stdin.write('y')
    await until(() => expect(calls).toHaveLength(1))
    expect(calls[0]).toEqual(['yield', 'provider:wa', { ifFence: newer, command: `provider yield provider:wa --if-fence ${newer}` }])
  })

  it('a prompt whose target went away is closed with what changed; nothing is done', async () => {
    const { source, calls, state } = fakeSource()
    const app = mount(source, 100)
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    app.stdin.write('y')
    await until(() => expect(strip(app.lastFrame())).toContain('confirm? [y/N]'))
    state.snap = dashboard({ providers: [lead('provider:wa', null, { candidates: standby })] })
    await until(() => expect(strip(app.lastFrame())).toContain('the state changed: nobody leads provider:wa'), 5000)
    app.stdin.write('y')
    await new Promise((r) => setTimeout(r, 200))
    expect(calls).toEqual([])
  })

  it('says all healthy when nothing needs attention, and what does otherwise', async () => {
    const healthy = fakeSource()
    const app = mount(healthy.source)
    await until(() => expect(strip(app.lastFrame())).toContain('✔ all healthy'))
    cleanup()
    const late = fakeSource(dashboard({ replicas: [replica('pod-a'), replica('pod-b', { beatAgo: 9000 })] }))
    const app2 = mount(late.source)
    await until(() => expect(strip(app2.lastFrame())).toContain('⚠ 1 replica(s) late or gone'))
    expect(strip(app2.lastFrame())).not.toContain('all healthy')
  })

  it('the lease panel says what it holds; a filter that matches none says so, not "no lease held"', async () => {
    const { source } = fakeSource()
    const app = mount(source)
    await until(() => expect(strip(app.lastFrame())).toMatch(/LEASES BY EXPIRY \(2\)/))
    expect(strip(app.lastFrame())).not.toContain('EXPIRING')
    for (const k of ['/', 'z', 'z', 'x', '\r']) {
      const before = app.lastFrame()
      app.stdin.write(k)
      await until(() => app.lastFrame() !== before, 5000, `key ${k}`)
    }
    await until(() => expect(strip(app.lastFrame())).toContain('none match the filter "zzx"'))
    expect(strip(app.lastFrame())).not.toContain('no lease held')
  })

  it('an event stamped after Redis now (read in between, clock skew) reads now, never "in 57ms"', async () => {
    const { source } = fakeSource(
      dashboard({
        events: [{ id: `${NOW + 57}-0`, event: { type: 'leader', replicaId: 'pod-a', name: 'provider:wa', fence: 1, previous: null } }],
      }),
    )
    const app = mount(source)
    await until(() => expect(strip(app.lastFrame())).toMatch(/\bnow\s+pod-a leads provider:wa|\bnow\s+.*provider:wa/))
    expect(strip(app.lastFrame())).not.toMatch(/in 57ms/)
  })

  it('a leader whose transport is down reads down, for how long and when it yields', async () => {
    const { source } = fakeSource(
      dashboard({
        providers: [
          lead('provider:wa', 'pod-a', { candidates: standby, transportDown: { sinceMs: NOW - 35_000, yieldsAtMs: NOW + 25_000 } }),
        ],
      }),
    )
    const app = mount(source)
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    await until(() => expect(strip(app.lastFrame())).toMatch(/TRANSPORT[\s\S]*down 35s \(yields at 1m\)/))
    expect(strip(app.lastFrame())).toMatch(/pod-a down/)
    expect(strip(app.lastFrame())).toContain('⚠ 1 lead(s) not ok')
  })

  it('LAST TAKEOVER says how the leader before let go: an expiry is not a release', async () => {
    const { source } = fakeSource(
      dashboard({
        providers: [
          lead('provider:wa', 'pod-b', {
            candidates: [],
            previousHolder: { replicaId: 'pod-a', incarnation: incarnationOf('pod-a') },
            lastHandoverMs: 2100,
            lastHandoverHow: 'expired',
          }),
        ],
      }),
    )
    const app = mount(source)
    await until(() => expect(strip(app.lastFrame())).toMatch(/1m ago \(2\.1s expired\)/))
  })
})
