/**
 * The dashboard's intervention prompts (commands/tui/prompts.ts) read off a screen built from one
 * refresh: what each key acts on, the text and CLI equivalent it shows, the conditions it passes, and
 * the line it says when there is nothing to act on.
 */
import { describe, expect, it } from 'vitest'
import type { ChatDetail, DashboardSnapshot } from '../../src/index.js'
import type { ActionOutcome, Interventions } from '../../commands/tui/interventions.js'
import type { PanelId } from '../../commands/tui/layout.js'
import { advance, chatDetail } from '../../commands/tui/model.js'
import { buildPrompt, type Prompt, type PromptScreen } from '../../commands/tui/prompts.js'
import {
  FENCE,
  LEAD_FENCE,
  NOW,
  checkpoint,
  chatDetailOf,
  dashboard,
  dashboardChat,
  handoverMarker,
  incarnationOf,
  lead,
} from '../helpers/snapshots.js'

function recorder() {
  const calls: unknown[][] = []
  const done = (...call: unknown[]): Promise<ActionOutcome> => (calls.push(call), Promise.resolve({ ok: true, text: 'done' }))
  const act: Interventions = {
    yieldProvider: (...a) => done('yield', ...a),
    releaseChat: (...a) => done('release', ...a),
    skipTicket: (...a) => done('skip', ...a),
    removeHandover: (...a) => done('handover rm', ...a),
    extendCheckpoint: (...a) => done('extend', ...a),
  }
  return { act, calls }
}

/** The screen of one refresh: the main view with `focus` on the first row of each panel, or the open chat:42. */
function screen(snap: DashboardSnapshot, o: { focus?: PanelId; open?: ChatDetail; ticket?: number } = {}): PromptScreen {
  const model = advance(null, snap, { sampledAtMs: 0, commandsTotal: 0 })
  const first = (rows: unknown[]) => (rows.length ? 0 : null)
  const detail = o.open ? chatDetail('chat:42', o.open, model.liveReplicas).view : null
  return {
    view: detail ? 'detail' : 'main',
    focus: o.focus ?? 'chats',
    rows: { providers: model.providers, chats: model.chats, expiring: model.expiring },
    selected: {
      replicas: first(model.replicas),
      providers: first(model.providers),
      chats: first(model.chats),
      expiring: first(model.expiring),
      events: first(model.events),
    },
    allChats: model.chats,
    detail,
    ticket: o.ticket ?? (detail?.tickets.length ? 0 : null),
  }
}

const prompt = (p: Prompt | string): Prompt => {
  if (typeof p === 'string') throw new Error(`expected a prompt, got: ${p}`)
  return p
}

describe('intervention prompts', () => {
  it('y: the only provider, with its leader, fence and standbys; yields at that fence', async () => {
    const { act, calls } = recorder()
    const p = prompt(buildPrompt('yield', screen(dashboard()), act))
    expect(p.target).toBe('yield provider:wa')
    expect(p.text).toBe(`yield provider:wa: leader pod-a (pod-a-in) fence ${LEAD_FENCE}, standbys pod-b`)
    expect(p.command).toBe(`provider yield provider:wa --if-fence ${LEAD_FENCE}`)
    await p.run()
    expect(calls).toEqual([['yield', 'provider:wa', { ifFence: LEAD_FENCE, command: p.command }]])
  })

  it('y: a lead selected in LEASES BY EXPIRY; with two providers and none selected, it says where to go', () => {
    const two = dashboard({ providers: [lead('provider:wa', 'pod-a'), lead('provider:tg', 'pod-b')] })
    const { act } = recorder()
    expect(buildPrompt('yield', screen(two), act)).toBe('select a provider first: tab to PROVIDER')
    const s = screen(two, { focus: 'expiring' })
    s.selected.expiring = s.rows.expiring.findIndex((e) => e.kind === 'lead')
    expect(prompt(buildPrompt('yield', s, act)).target).toBe(`yield ${s.rows.expiring[s.selected.expiring]!.key}`)
  })

  it('y: a provider nobody leads has nothing to yield', () => {
    const { act } = recorder()
    const s = screen(dashboard({ providers: [lead('provider:wa', null)] }), { focus: 'providers' })
    expect(buildPrompt('yield', s, act)).toBe('nobody leads provider:wa: nothing to yield')
  })

  it('r: the chat selected in CHAT, at its fence and holder incarnation; elsewhere it says where to go', async () => {
    const { act, calls } = recorder()
    const p = prompt(buildPrompt('release', screen(dashboard()), act))
    expect(p.text).toBe(`release chat:42: holder pod-a (pod-a-in) fence ${FENCE}; the fence is bumped, the next ticket granted`)
    expect(p.command).toBe(`chat release chat:42 --if-fence ${FENCE}`)
    await p.run()
    expect(calls).toEqual([['release', 'chat:42', { ifFence: FENCE, ifIncarnation: incarnationOf('pod-a'), command: p.command }]])
    expect(buildPrompt('release', screen(dashboard(), { focus: 'replicas' }), act)).toBe(
      'select a chat first: tab to CHAT (or open one with ⏎)',
    )
    expect(buildPrompt('release', screen(dashboard({ chats: [dashboardChat('chat:7', null)] })), act)).toBe(
      'chat:7 is not held: nothing to release',
    )
  })

  it('r: a turn selected in LEASES BY EXPIRY finds its holder incarnation among all chats, filtered out or not', async () => {
    const { act, calls } = recorder()
    const s = screen(dashboard(), { focus: 'expiring' })
    s.rows.chats = [] // a filter that hides the chat
    await prompt(buildPrompt('release', s, act)).run()
    expect(calls[0]![2]).toMatchObject({ ifIncarnation: incarnationOf('pod-a') })
  })

  it('s: the open chat selected ticket, at the chat fence and the ticket incarnation', async () => {
    const { act, calls } = recorder()
    const snap = dashboard({ chats: [dashboardChat('chat:42', 'pod-a', ['pod-b', 'pod-c'])] })
    expect(buildPrompt('skip', screen(snap), act)).toBe('open a chat (⏎) and select a ticket to skip it')
    const p = prompt(buildPrompt('skip', screen(snap, { open: chatDetailOf(snap, 'chat:42'), ticket: 1 }), act))
    expect(p.target).toBe('skip chat:42 3')
    expect(p.command).toBe(`chat skip chat:42 3 --if-fence ${FENCE}`)
    await p.run()
    expect(calls).toEqual([['skip', 'chat:42', 3, { ifFence: FENCE, ifIncarnation: incarnationOf('pod-c'), command: p.command }]])
    const empty = dashboard({ chats: [dashboardChat('chat:42', 'pod-a')] })
    expect(buildPrompt('skip', screen(empty, { open: chatDetailOf(empty, 'chat:42') }), act)).toBe('chat:42 has no queued ticket')
  })

  it('h: the open chat handover marker, conditioned on its incarnation and since', async () => {
    const { act, calls } = recorder()
    const snap = dashboard()
    const open = { ...chatDetailOf(snap, 'chat:42'), handover: handoverMarker('chat:42'), handoverTtlMs: null }
    expect(buildPrompt('handover rm', screen(snap), act)).toBe('open a chat (⏎) to remove its handover marker')
    expect(buildPrompt('handover rm', screen(snap, { open: chatDetailOf(snap, 'chat:42') }), act)).toBe('chat:42 has no handover marker')
    const p = prompt(buildPrompt('handover rm', screen(snap, { open }), act))
    expect(p.text).toBe(
      'remove the handover marker of chat:42: survey by pod-c (pod-c-in, gone), waiting 20s; the next owner applies no fallback',
    )
    await p.run()
    expect(calls).toEqual([
      ['handover rm', 'chat:42', { ifIncarnation: incarnationOf('pod-c'), ifSince: NOW - 20_000, command: p.command }],
    ])
  })

  it('e: the open chat ephemeral checkpoint, at its revision; a persistent one has no TTL to extend', async () => {
    const { act, calls } = recorder()
    const snap = dashboard()
    const cp = checkpoint('chat:42')
    const open = { ...chatDetailOf(snap, 'chat:42'), checkpoint: cp, checkpointTtlMs: 300_000 }
    const p = prompt(buildPrompt('checkpoint extend', screen(snap, { open }), act))
    expect(p.text).toBe(`extend the checkpoint of chat:42: order/address rev ${cp.revision}, expires in 5m → 1h`)
    expect(p.command).toBe(`checkpoint extend chat:42 --ttl 1h --if-revision ${cp.revision}`)
    await p.run()
    expect(calls).toEqual([['extend', 'chat:42', { ifRevision: cp.revision, ttlMs: 3_600_000, command: p.command }]])
    const persistent = { ...open, checkpoint: checkpoint('chat:42', 'pod-a', { ephemeral: null }) }
    expect(buildPrompt('checkpoint extend', screen(snap, { open: persistent }), act)).toBe(
      'the checkpoint of chat:42 is persistent: it has no TTL to extend',
    )
    expect(buildPrompt('checkpoint extend', screen(snap, { open: chatDetailOf(snap, 'chat:42') }), act)).toBe('chat:42 has no checkpoint')
  })
})
