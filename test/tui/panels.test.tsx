import React from 'react'
import { describe, expect, it } from 'vitest'
import { render } from 'ink-testing-library'
import { advance, chatDetail as detailOf } from '../../commands/tui/model.js'
import { ReplicasPanel, replicaCells } from '../../commands/tui/components/replicas-panel.js'
import { ProvidersPanel } from '../../commands/tui/components/providers-panel.js'
import { ChatsPanel } from '../../commands/tui/components/chats-panel.js'
import { ExpiringPanel } from '../../commands/tui/components/expiring-panel.js'
import { EventsPanel } from '../../commands/tui/components/events-panel.js'
import { Header } from '../../commands/tui/components/header.js'
import { Footer } from '../../commands/tui/components/footer.js'
import { ChatDetailView } from '../../commands/tui/components/chat-detail.js'
import { HelpView } from '../../commands/tui/components/help-view.js'
import { NOW, chatDetailOf, dashboard, dashboardChat, lead, replica } from '../helpers/snapshots.js'
import { strip } from './frame.js'

const model = (s = dashboard()) => advance(null, s, { sampledAtMs: 0, commandsTotal: 0 })
const base = { selected: null, focused: false, colour: false }

describe('dashboard panels', () => {
  it('replicas: id, short incarnation, heartbeat bar, counters; a gone replica stands out', () => {
    const m1 = model(
      dashboard({
        replicas: [
          replica('pod-a', {
            stats: { turnsGranted: 5, waitingNow: 2, oldestWaitMs: 4100, waitP99Ms: 1500, leasesLost: 3, leadsHeld: 1, turnsHeld: 2 },
          }),
          replica('pod-b'),
        ],
      }),
    )
    const m2 = advance(m1, dashboard({ nowMs: NOW + 2000, replicas: [replica('pod-a')] }), { sampledAtMs: 1, commandsTotal: 0 })
    const { lastFrame } = render(<ReplicasPanel rows={[m1.replicas[0]!, m2.replicas[1]!]} width={100} height={5} {...base} />)
    const f = strip(lastFrame())
    expect(f).toMatch(/REPLICA \(1\)\s+INC\s+HEARTBEAT\s+LEASES\s+TURNS\/S\s+WAITING\s+OLDEST\s+WAIT P99\s+LOST/)
    expect(f).toMatch(/pod-a\s+pod-a-in\s+1s\s+█░+\s+3\s+-\s+2\s+4\.1s\s+1\.5s\s+3/)
    expect(f).toMatch(/pod-b\s+pod-b-in\s+GONE 0ms ago/)
  })

  it('replicas: OLDEST is the oldest wait of the last beat, red from a minute on; - when none waits or the replica is gone', () => {
    const m1 = model(
      dashboard({
        replicas: [
          replica('pod-a', { stats: { waitingNow: 40, oldestWaitMs: 95_000 } }),
          replica('pod-b', { stats: { waitingNow: 0, oldestWaitMs: null } }),
          replica('pod-c', { stats: { waitingNow: 0 } }), // an older replica: its record has no oldestWaitMs
        ],
      }),
    )
    const m2 = advance(m1, dashboard({ nowMs: NOW + 2000, replicas: [replica('pod-b'), replica('pod-c')] }), {
      sampledAtMs: 1,
      commandsTotal: 0,
    })
    const cells = new Map(m1.replicas.map((r) => [r.replicaId, replicaCells(r)]))
    expect(cells.get('pod-a')!.oldest).toEqual({ text: '1m35s', tone: 'bad' })
    expect(cells.get('pod-b')!.oldest).toEqual({ text: '-', tone: undefined })
    expect(cells.get('pod-c')!.oldest).toEqual({ text: '-', tone: undefined })
    const gone = m2.replicas.find((r) => r.replicaId === 'pod-a')!
    expect(gone.status).toBe('gone')
    expect(replicaCells(gone).oldest.text).toBe('-')
    const { lastFrame } = render(<ReplicasPanel rows={m1.replicas} width={100} height={5} {...base} />)
    expect(strip(lastFrame())).toMatch(/pod-a\s.*\s40\s+1m35s\s/)
  })

  it('replicas at 80 columns drop the least useful columns instead of wrapping', () => {
    const { lastFrame } = render(<ReplicasPanel rows={model().replicas} width={60} height={5} {...base} />)
    const lines = strip(lastFrame()).split('\n')
    expect(lines[0]).toContain('HEARTBEAT')
    expect(lines[0]).not.toContain('INC')
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(60)
  })

  it('providers: leader, fence, standbys, last handover; a leaderless provider says since when', () => {
    const s = dashboard({
      providers: [
        lead('provider:wa', 'pod-b', {
          previousHolder: { replicaId: 'pod-a', incarnation: 'x' },
          lastHandoverMs: 340,
          candidates: [{ replicaId: 'pod-a', incarnation: 'y', deadlineMs: NOW + 1 }],
        }),
        lead('provider:tg', null, { releasedAtMs: NOW - 4000 }),
      ],
    })
    const { lastFrame } = render(<ProvidersPanel rows={model(s).providers} width={120} height={4} {...base} />)
    const f = strip(lastFrame())
    // The column says what it measures: when the last takeover was, and how long nobody led.
    expect(f).toMatch(/STANDBYS\s+LAST TAKEOVER/)
    expect(f).toMatch(/provider:wa\s+pod-b\s+1700000000000001\s+up\s+1m\s+pod-a\s+1m ago \(340ms\)/)
    expect(f).toMatch(/provider:tg\s+none 4s/)
    expect(f).not.toContain('YIELD') // no request pending: the column makes room
  })

  it('chats: stuck first with the reason, holder, queue, oldest wait, lease left, checkpoint; the filter shows in the header', () => {
    const s = dashboard({
      chats: [
        dashboardChat('chat:stuck', 'pod-x', ['pod-b'], {
          stuck: ['holder is dead'],
          checkpoint: { flow: 'order', step: 'pay', ephemeral: false },
        }),
        dashboardChat('chat:42', 'pod-a'),
      ],
    })
    const rows = model(s).chats
    const { lastFrame, rerender } = render(
      <ChatsPanel rows={rows} total={2} filter="" width={130} height={4} {...base} selected={0} focused />,
    )
    const f = strip(lastFrame())
    expect(f).toMatch(/▸ CHAT \(2\)/)
    expect(f).toMatch(/› chat:stuck\s+pod-x\s+1700000000000042\s+1\s+2s\s+8s\s+order\/pay\s+! holder is dead/)
    rerender(<ChatsPanel rows={rows.slice(1)} total={2} filter="42" width={130} height={4} {...base} />)
    expect(strip(lastFrame())).toMatch(/CHAT \(1\/2 \/42\)/)
    rerender(<ChatsPanel rows={[]} total={2} filter="zz" width={130} height={4} {...base} />)
    expect(strip(lastFrame())).toContain('no chat matches /zz')
  })

  it('expiring: a countdown per lease, soonest first; events newest first with their age', () => {
    const m = model(
      dashboard({
        expiring: [
          { kind: 'chat', key: 'chat:1', replicaId: 'pod-a', fence: 5, expiresInMs: -1200, state: 'expired' },
          { kind: 'lead', key: 'provider:wa', replicaId: 'pod-a', fence: 6, expiresInMs: 9000, state: 'late' },
        ],
      }),
    )
    const e = render(<ExpiringPanel rows={m.expiring} width={90} height={3} {...base} />)
    expect(strip(e.lastFrame())).toMatch(/chat:1\s+chat\s+pod-a\s+5\s+-1\.2s/)
    expect(strip(e.lastFrame())).toMatch(/provider:wa\s+lead\s+pod-a\s+6\s+9s/)
    expect(m.expiring.map((x) => x.late)).toEqual([false, true]) // a late holder's lease stands out (yellow, bold)
    const ev = render(<EventsPanel rows={m.events} nowMs={NOW} width={90} height={3} {...base} />)
    expect(strip(ev.lastFrame())).toMatch(/5s ago\s+pod-a leads provider:wa/)
  })

  it('a panel with fewer lines than rows says how many are hidden', () => {
    const s = dashboard({ chats: Array.from({ length: 6 }, (_, i) => dashboardChat(`chat:${i}`, 'pod-a')) })
    const { lastFrame } = render(<ChatsPanel rows={model(s).chats} total={6} filter="" width={80} height={3} {...base} />)
    const lines = strip(lastFrame()).split('\n')
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatch(/CHAT \(6\) \+4/)
  })

  it('header: masked URL, prefix, layout, Redis time, load; a banner when Redis is gone', () => {
    const common = {
      url: 'redis://:***@10.0.0.5:6379',
      prefix: 'shop',
      layout: 'cluster',
      redisNowMs: NOW,
      commandsPerSec: 9,
      refreshCommands: 9,
      intervalMs: 1000,
      paused: true,
      readOnly: true,
      width: 120,
      colour: false,
    }
    const { lastFrame, rerender } = render(<Header {...common} connection={{ state: 'live', refreshedAgoMs: 200 }} />)
    const f = strip(lastFrame())
    expect(f).toContain('redis://:***@10.0.0.5:6379  prefix shop  cluster  Redis 08:00:00 UTC')
    expect(f).toMatch(/connected, refreshed 200ms ago\s+load 9\.0 cmd\/s \(9\/refresh, every 1s\)\s+PAUSED READ-ONLY/)
    rerender(
      <Header {...common} connection={{ state: 'down', error: 'connection refused', downForMs: 4000, attempts: 3, dataAgeMs: 5000 }} />,
    )
    expect(strip(lastFrame())).toContain('✖ REDIS UNREACHABLE (connection refused) — retrying, down 4s, data below is 5s old (3 failed)')
  })

  it('footer: the confirmation shows what, to whom, the fence, and the CLI equivalent', () => {
    const { lastFrame } = render(
      <Footer
        mode={{
          kind: 'confirm',
          text: 'yield provider:wa: leader pod-a (pod-a-in) fence 17',
          command: 'provider yield provider:wa --if-fence 17',
        }}
        width={100}
        colour={false}
      />,
    )
    expect(strip(lastFrame())).toBe(
      'yield provider:wa: leader pod-a (pod-a-in) fence 17\n confirm? [y/N]  = provider yield provider:wa --if-fence 17',
    )
  })

  it('chat detail: holder, queue tickets with liveness (selected one marked), and the explain verdict', () => {
    const s = dashboard({ replicas: [replica('pod-a')], chats: [dashboardChat('chat:42', 'pod-a', ['pod-b', 'pod-a'])] })
    const d = detailOf('chat:42', chatDetailOf(s, 'chat:42'), s.replicas)
    const { lastFrame } = render(
      <ChatDetailView
        key_="chat:42"
        view={{
          ...d.view,
          previousHolder: { replicaId: 'pod-c', incarnation: 'pod-c-in' },
          lastHolder: { replicaId: 'pod-a', incarnation: 'pod-a-in' },
        }}
        explanation={d.explanation}
        error={null}
        selectedTicket={0}
        width={140}
        height={16}
        colour={false}
      />,
    )
    const f = strip(lastFrame())
    expect(f).toContain('CHAT chat:42   fence 1700000000000042')
    expect(f).toMatch(/holder\s+pod-a \(pod-a-in\) alive, ticket 1/)
    // The holder before this grant and the last holder are named apart.
    expect(f).toMatch(/previous\s+pod-c \(pod-c-in\) held it before this grant\s+last held by pod-a \(pod-a-in\)/)
    expect(f).toMatch(/› #2 {2}pod-b \(pod-b-in\) {2}DEAD/)
    expect(f).toMatch(/ {2}#3 {2}pod-a \(pod-a-in\) {2}alive/)
    expect(f).toMatch(/VERDICT\s+stuck: ticket 2 at the head of the queue is dead/)
    expect(f).toContain('→ botmesh-coord chat skip chat:42 2')
  })

  it('help lists the keys, and says when actions are disabled', () => {
    const { lastFrame } = render(<HelpView readOnly width={80} height={20} logFiles={{ 'pod-a': '/tmp/a.log' }} />)
    const f = strip(lastFrame())
    expect(f).toContain('provider yield <name> --if-fence')
    expect(f).toContain('Read-only mode')
    expect(f).toContain('log of pod-a: /tmp/a.log')
  })
})
