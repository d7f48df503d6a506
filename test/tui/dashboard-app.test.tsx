import React from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { render, cleanup } from 'ink-testing-library'
import { DashboardApp, type DashboardData } from '../../commands/tui/dashboard-app.js'
import type { ActionOutcome } from '../../commands/tui/interventions.js'
import type { DashboardSnapshot } from '../../src/index.js'
import { NOW, checkpoint, chatDetailOf, dashboard, dashboardChat, handoverMarker, incarnationOf } from '../helpers/snapshots.js'
import { strip } from './frame.js'
import { sleep, until } from '../helpers/wait.js'

const KEY = { tab: '\t', down: '\u001b[B', up: '\u001b[A', enter: '\r', esc: '\u001b' }

function fakeSource(initial: DashboardSnapshot = dashboard()) {
  const calls: Array<[string, ...unknown[]]> = []
  const state = { snap: initial, fail: null as Error | null, reads: 0 }
  const ok = (text: string): Promise<ActionOutcome> => Promise.resolve({ ok: true, text })
  const source: DashboardData = {
    url: 'redis://:***@127.0.0.1:6379',
    prefix: 'shop',
    layout: 'standalone',
    read: async () => {
      state.reads++
      if (state.fail) throw state.fail
      return state.snap
    },
    chat: async (key) => chatDetailOf(state.snap, key),
    commandsTotal: () => state.reads * 9,
    interventions: {
      yieldProvider: (name, o) => (calls.push(['yield', name, o]), ok(`asked pod-a to yield ${name}`)),
      releaseChat: (key, o) => (calls.push(['release', key, o]), ok(`released ${key}`)),
      skipTicket: (key, ticket, o) => (calls.push(['skip', key, ticket, o]), ok(`skipped ticket ${ticket} of ${key}`)),
      removeHandover: (key, o) => (calls.push(['handover-rm', key, o]), ok(`removed the handover marker of ${key}`)),
      extendCheckpoint: (key, o) => (calls.push(['extend', key, o]), ok(`the checkpoint of ${key} expires in 1h now`)),
    },
  }
  return { source, calls, state }
}

function mount(src: DashboardData, o: { readOnly?: boolean; intervalMs?: number; columns?: number; rows?: number } = {}) {
  return render(
    <DashboardApp
      source={src}
      intervalMs={o.intervalMs ?? 60_000}
      readOnly={o.readOnly ?? false}
      colour={false}
      size={{ columns: o.columns ?? 110, rows: o.rows ?? 30 }}
    />,
  )
}

/** Type keys one by one, each once the frame shows the last one took effect (every key here changes the screen). */
async function keys(app: { stdin: { write(s: string): void }; lastFrame(): string | undefined }, ...ks: string[]) {
  for (const k of ks) {
    const before = app.lastFrame()
    app.stdin.write(k)
    await until(() => app.lastFrame() !== before, 5000, `the screen to change after key ${JSON.stringify(k)}`)
  }
}

afterEach(() => cleanup())

describe('DashboardApp', () => {
  it('shows replicas, the provider leader and the held chat from one refresh', async () => {
    const { source } = fakeSource()
    const app = mount(source)
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    const f = strip(app.lastFrame())
    expect(f).toContain('redis://:***@127.0.0.1:6379  prefix shop  standalone')
    expect(f).toMatch(/pod-a\s+pod-a-in/)
    expect(f).toMatch(/provider:wa\s+pod-a\s+1700000000000001\s+up/)
    expect(f).toMatch(/▸ CHAT \(1\)[\s\S]*› chat:42\s+pod-a/)
    expect(f.split('\n').length).toBeLessThanOrEqual(29) // one line less than the terminal
  })

  it('y asks first (holder, fence, --if-fence) and yields with the fence it showed', async () => {
    const { source, calls, state } = fakeSource()
    const app = mount(source)
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    await keys(app, 'y')
    const f = strip(app.lastFrame())
    expect(f).toContain('yield provider:wa: leader pod-a (pod-a-in) fence 1700000000000001, standbys pod-b')
    expect(f).toContain('confirm? [y/N]  = provider yield provider:wa --if-fence 1700000000000001')
    expect(calls).toEqual([])
    const readsBefore = state.reads
    await keys(app, 'y')
    await until(() => expect(calls).toHaveLength(1))
    expect(calls).toEqual([
      ['yield', 'provider:wa', { ifFence: 1700000000000001, command: 'provider yield provider:wa --if-fence 1700000000000001' }],
    ])
    await until(() => expect(strip(app.lastFrame())).toContain('asked pod-a to yield provider:wa'))
    expect(state.reads).toBeGreaterThan(readsBefore) // refreshed at once
  })

  it('any other key cancels the confirmation', async () => {
    const { source, calls } = fakeSource()
    const app = mount(source)
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    await keys(app, 'y', 'n')
    expect(calls).toEqual([])
    expect(strip(app.lastFrame())).toContain('cancelled: nothing done')
  })

  it('r releases the selected chat with its fence and holder incarnation', async () => {
    const { source, calls } = fakeSource()
    const app = mount(source)
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    await keys(app, 'r')
    expect(strip(app.lastFrame())).toContain('release chat:42: holder pod-a (pod-a-in) fence 1700000000000042')
    await keys(app, 'y')
    await until(() => expect(calls).toHaveLength(1))
    expect(calls).toEqual([
      [
        'release',
        'chat:42',
        { ifFence: 1700000000000042, ifIncarnation: 'pod-a-inc-0123456789', command: 'chat release chat:42 --if-fence 1700000000000042' },
      ],
    ])
  })

  it('Enter opens the chat; ↓ selects a ticket and s skips it with the same conditions as the CLI', async () => {
    const { source, calls } = fakeSource(dashboard({ chats: [dashboardChat('chat:42', 'pod-a', ['pod-b', 'pod-c'])] }))
    const app = mount(source)
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    await keys(app, KEY.enter)
    await until(() => expect(strip(app.lastFrame())).toMatch(/› #2 {2}pod-b/))
    let f = strip(app.lastFrame())
    expect(f).toContain('CHAT chat:42   fence 1700000000000042')
    expect(f).toMatch(/› #2 {2}pod-b/)
    expect(f).toContain('VERDICT')
    await keys(app, KEY.down, 's')
    f = strip(app.lastFrame())
    expect(f).toContain('skip ticket 3 of chat:42: pod-c (pod-c-in, dead); holder pod-a fence 1700000000000042')
    expect(f).toContain('= chat skip chat:42 3 --if-fence 1700000000000042')
    await keys(app, 'y')
    await until(() => expect(calls).toHaveLength(1))
    expect(calls).toEqual([
      [
        'skip',
        'chat:42',
        3,
        { ifFence: 1700000000000042, ifIncarnation: 'pod-c-inc-0123456789', command: 'chat skip chat:42 3 --if-fence 1700000000000042' },
      ],
    ])
    await keys(app, KEY.esc)
    expect(strip(app.lastFrame())).toMatch(/▸ CHAT/)
  })

  it('in the open chat, h removes the handover marker and e extends the checkpoint, with the conditions the CLI uses', async () => {
    const { source, calls } = fakeSource()
    const cp = checkpoint('chat:42')
    const withBoth = async (key: string) => ({
      ...chatDetailOf(dashboard(), key),
      checkpoint: cp,
      checkpointTtlMs: 300_000,
      handover: handoverMarker(key),
      handoverTtlMs: null,
    })
    source.chat = withBoth
    const app = mount(source, { columns: 200 })
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    await keys(app, 'h')
    expect(strip(app.lastFrame())).toContain('open a chat (⏎) to remove its handover marker')
    await keys(app, KEY.enter)
    await until(() => expect(strip(app.lastFrame())).toContain('(h remove)'))
    let f = strip(app.lastFrame())
    expect(f).toMatch(/handover {3}survey by pod-c \(pod-c-in\) \(gone\), waiting 20s \(h remove\)/)
    expect(f).toMatch(/expires in 5m, fingerprint f1a2b3 \(e extend\)/)
    expect(f).toMatch(/r release s skip h marker e extend/)
    await keys(app, 'h')
    f = strip(app.lastFrame())
    expect(f).toContain('remove the handover marker of chat:42: survey by pod-c (pod-c-in, gone), waiting 20s')
    expect(f).toContain(`= handover rm chat:42 --if-incarnation ${incarnationOf('pod-c')}`)
    await keys(app, 'y')
    await until(() => expect(calls).toHaveLength(1))
    await until(() => expect(strip(app.lastFrame())).toContain('removed the handover marker of chat:42'))
    await keys(app, 'e')
    f = strip(app.lastFrame())
    expect(f).toContain(`extend the checkpoint of chat:42: order/address rev ${cp.revision}, expires in 5m → 1h`)
    expect(f).toContain(`= checkpoint extend chat:42 --ttl 1h --if-revision ${cp.revision}`)
    await keys(app, 'y')
    await until(() => expect(calls).toHaveLength(2))
    expect(calls).toEqual([
      [
        'handover-rm',
        'chat:42',
        {
          ifIncarnation: incarnationOf('pod-c'),
          ifSince: NOW - 20_000,
          command: `handover rm chat:42 --if-incarnation ${incarnationOf('pod-c')}`,
        },
      ],
      [
        'extend',
        'chat:42',
        { ifRevision: cp.revision, ttlMs: 3_600_000, command: `checkpoint extend chat:42 --ttl 1h --if-revision ${cp.revision}` },
      ],
    ])
  })

  it('e refuses a persistent checkpoint without asking', async () => {
    const { source, calls } = fakeSource()
    source.chat = async (key) => ({ ...chatDetailOf(dashboard(), key), checkpoint: checkpoint(key, 'pod-a', { ephemeral: null }) })
    const app = mount(source)
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    await keys(app, KEY.enter)
    await until(() => expect(strip(app.lastFrame())).toContain('checkpoint rev'))
    await keys(app, 'e')
    expect(strip(app.lastFrame())).toContain('the checkpoint of chat:42 is persistent: it has no TTL to extend')
    expect(calls).toEqual([])
  })

  it('read-only mode refuses y, r and s without asking', async () => {
    const { source, calls } = fakeSource()
    const app = mount(source, { readOnly: true })
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    await keys(app, 'y')
    expect(strip(app.lastFrame())).toContain('read-only mode (--read-only / BOTMESH_READ_ONLY): yield is disabled')
    await keys(app, 'r')
    expect(strip(app.lastFrame())).toContain('release is disabled')
    await keys(app, 'y')
    expect(calls).toEqual([])
    expect(strip(app.lastFrame())).toContain('READ-ONLY')
  })

  it('/ filters chats by key or replica; Esc clears it', async () => {
    const { source } = fakeSource(
      dashboard({
        chats: [dashboardChat('chat:42', 'pod-a'), dashboardChat('chat:7', 'pod-b'), dashboardChat('chat:9', 'pod-c', ['pod-b'])],
      }),
    )
    const app = mount(source)
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    await keys(app, '/', 'p', 'o', 'd', '-', 'b')
    expect(strip(app.lastFrame())).toContain('filter chats by key or replica: /pod-b')
    await keys(app, KEY.enter)
    let f = strip(app.lastFrame())
    expect(f).toMatch(/CHAT \(2\/3 \/pod-b\)/)
    expect(f).toContain('chat:7')
    expect(f).toContain('chat:9')
    expect(f).not.toMatch(/chat:42\s+pod-a/)
    await keys(app, KEY.esc)
    f = strip(app.lastFrame())
    expect(f).toMatch(/CHAT \(3\)/)
  })

  it('tab moves between panels and arrows between rows; the selection follows its row across refreshes', async () => {
    const { source, state } = fakeSource(dashboard({ chats: [dashboardChat('chat:a', 'pod-a'), dashboardChat('chat:b', 'pod-a')] }))
    const app = mount(source, { intervalMs: 100 })
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    // Refreshes redraw the screen too (every 100 ms here): wait for what each key shows.
    await keys(app, KEY.down)
    await until(() => expect(strip(app.lastFrame())).toMatch(/› chat:b/))
    state.snap = dashboard({ chats: [dashboardChat('chat:b', 'pod-a', ['pod-b']), dashboardChat('chat:a', 'pod-a')] })
    await until(() => expect(strip(app.lastFrame())).toMatch(/› chat:b\s+pod-a\s+\S+\s+1/))
    await keys(app, KEY.tab)
    await until(() => expect(strip(app.lastFrame())).toMatch(/▸ LEASES BY EXPIRY/))
  })

  it('Redis going away shows a banner and keeps the last data; it recovers by itself', async () => {
    const { source, state } = fakeSource()
    const app = mount(source, { intervalMs: 100 })
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    state.fail = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })
    await until(() => expect(strip(app.lastFrame())).toContain('✖ REDIS UNREACHABLE (connection refused) — retrying'))
    let f = strip(app.lastFrame())
    expect(f).toMatch(/provider:wa\s+pod-a/)
    state.fail = null
    await until(() => expect(strip(app.lastFrame())).not.toContain('UNREACHABLE'))
    f = strip(app.lastFrame())
    expect(f).toContain('● connected')
  })

  it('p pauses refreshing; ? shows the help', async () => {
    const { source, state } = fakeSource()
    const app = mount(source, { intervalMs: 100 })
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    await keys(app, 'p')
    expect(strip(app.lastFrame())).toContain('PAUSED')
    // React runs the pause's effect (it clears the interval) after that render, and before the next one.
    await keys(app, '?')
    expect(strip(app.lastFrame())).toContain('KEYS')
    const reads = state.reads
    await sleep(300) // time is the subject: three refresh intervals pass without a read
    expect(state.reads).toBe(reads)
    await keys(app, 'x')
    expect(strip(app.lastFrame())).toContain('PROVIDER')
  })

  it('stays inside 80x24: no line wider than 80, at most 23 lines', async () => {
    const many = dashboard({
      chats: Array.from({ length: 40 }, (_, i) =>
        dashboardChat(`chat:${i}`, 'pod-a', ['pod-b'], { stuck: i < 3 ? ['holder is dead'] : [] }),
      ),
    })
    const { source } = fakeSource(many)
    const app = mount(source, { columns: 80, rows: 24 })
    await until(() => expect(strip(app.lastFrame())).toContain('provider:wa'))
    const lines = strip(app.lastFrame()).split('\n')
    expect(lines.length).toBeLessThanOrEqual(23)
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80)
    expect(lines.join('\n')).toMatch(/CHAT \(40\) \+\d+/)
  })
})
