/**
 * What each intervention key (y r s h e) acts on, read from the screen as it is: a confirmation prompt
 * (what, to whom, at which fence or revision; the same action on the command line; the call that does
 * it), or the one line that says why there is nothing to act on. Pure: the dashboard rebuilds the open
 * prompt from every refresh, so it shows, and acts at, the fence of the screen behind it.
 */
import type { ChatView } from '../lib.js'
import { EXTEND_TTL_MS, cliEquivalent, type ActionOutcome, type Interventions } from './interventions.js'
import type { PanelId } from './layout.js'
import type { ChatRow, ExpiringRow, ProviderRow } from './model.js'
import { dur, shortInc } from './text.js'

export type Verb = 'yield' | 'release' | 'skip' | 'handover rm' | 'checkpoint extend'

export interface Prompt {
  /** What it acts on (verb and key, ticket): the open prompt is rebuilt at each refresh while this stays the same. */
  target: string
  /** What, to whom, at which fence. */
  text: string
  /** The same action on the command line. */
  command: string
  run: () => Promise<ActionOutcome>
}

/** What the prompts read off the screen. */
export interface PromptScreen {
  view: 'main' | 'detail' | 'help'
  focus: PanelId
  /** The rows as shown (the filter applied). */
  rows: { providers: ProviderRow[]; chats: ChatRow[]; expiring: ExpiringRow[] }
  /** The selected row of each panel, null when the panel is empty. */
  selected: Record<PanelId, number | null>
  /** Every chat of the refresh, filtered out or not: where a lease selected in LEASES BY EXPIRY finds its holder's incarnation. */
  allChats: ChatRow[]
  /** The open chat, once read. */
  detail: ChatView | null
  /** The open chat's selected ticket, null when it has none. */
  ticket: number | null
}

type Build = (s: PromptScreen, act: Interventions) => Prompt | string

/** The row selected in this panel, if the focus is on it. */
function focused<T>(s: PromptScreen, panel: PanelId, rows: T[]): T | null {
  if (s.focus !== panel) return null
  const i = s.selected[panel]
  return i === null ? null : (rows[i] ?? null)
}

/** y acts on the provider selected in PROVIDER (or a lead in LEASES BY EXPIRY); with one provider, on it. */
function yieldTarget(s: PromptScreen): ProviderRow | null {
  const lease = focused(s, 'expiring', s.rows.expiring)
  if (lease?.kind === 'lead') return s.rows.providers.find((p) => p.key === lease.key) ?? null
  if (s.focus === 'providers') return focused(s, 'providers', s.rows.providers)
  return s.rows.providers.length === 1 ? s.rows.providers[0]! : null
}

const askYield: Build = (s, act) => {
  const p = yieldTarget(s)
  if (!p) return 'select a provider first: tab to PROVIDER'
  if (!p.leader) return `nobody leads ${p.key}: nothing to yield`
  const command = cliEquivalent.yield(p.key, p.fence)
  return {
    target: `yield ${p.key}`,
    text: `yield ${p.key}: leader ${p.leader} (${shortInc(p.leaderIncarnation ?? '')}) fence ${p.fence}, standbys ${p.standbys.join(',') || 'none'}`,
    command,
    run: () => act.yieldProvider(p.key, { ifFence: p.fence, command }),
  }
}

interface HeldChat {
  key: string
  holder: string | null
  incarnation: string | null
  fence: number | null
}

/** r acts on the open chat, the chat selected in CHAT, or a turn selected in LEASES BY EXPIRY. */
function releaseTarget(s: PromptScreen): HeldChat | null {
  if (s.view === 'detail' && s.detail) {
    const v = s.detail
    return { key: v.key, holder: v.holder?.replicaId ?? null, incarnation: v.holder?.incarnation ?? null, fence: v.fence }
  }
  const lease = focused(s, 'expiring', s.rows.expiring)
  if (lease?.kind === 'chat') {
    const c = s.allChats.find((x) => x.key === lease.key)
    return { key: lease.key, holder: lease.replicaId, incarnation: c?.holderIncarnation ?? null, fence: lease.fence }
  }
  const c = focused(s, 'chats', s.rows.chats)
  return c ? { key: c.key, holder: c.holder, incarnation: c.holderIncarnation, fence: c.fence } : null
}

const askRelease: Build = (s, act) => {
  const t = releaseTarget(s)
  if (!t) return 'select a chat first: tab to CHAT (or open one with ⏎)'
  if (!t.holder) return `${t.key} is not held: nothing to release`
  const command = cliEquivalent.release(t.key, t.fence)
  return {
    target: `release ${t.key}`,
    text: `release ${t.key}: holder ${t.holder} (${shortInc(t.incarnation ?? '')}) fence ${t.fence}; the fence is bumped, the next ticket granted`,
    command,
    run: () => act.releaseChat(t.key, { ifFence: t.fence, ifIncarnation: t.incarnation, command }),
  }
}

const askSkip: Build = (s, act) => {
  if (s.view !== 'detail' || !s.detail) return 'open a chat (⏎) and select a ticket to skip it'
  const v = s.detail
  const t = s.ticket === null ? null : v.tickets[s.ticket]
  if (!t) return `${v.key} has no queued ticket`
  const command = cliEquivalent.skip(v.key, t.ticket, v.fence)
  return {
    target: `skip ${v.key} ${t.ticket}`,
    text: `skip ticket ${t.ticket} of ${v.key}: ${t.replicaId} (${shortInc(t.incarnation)}, ${t.alive ? 'alive' : t.state}); holder ${v.holder?.replicaId ?? 'none'} fence ${v.fence}`,
    command,
    run: () => act.skipTicket(v.key, t.ticket, { ifFence: v.fence, ifIncarnation: t.incarnation, command }),
  }
}

// h and e act on the open chat's handover marker and checkpoint, as `handover rm` and `checkpoint extend` do.
const askRemoveMarker: Build = (s, act) => {
  if (s.view !== 'detail' || !s.detail) return 'open a chat (⏎) to remove its handover marker'
  const v = s.detail
  const m = v.handover
  if (!m) return `${v.key} has no handover marker`
  const command = cliEquivalent.handoverRm(v.key, m.incarnation)
  return {
    target: `handover rm ${v.key}`,
    text: `remove the handover marker of ${v.key}: ${m.name} by ${m.replicaId} (${shortInc(m.incarnation)}, ${m.ownerAlive ? 'alive' : 'gone'}), waiting ${dur(m.waitingForMs)}; the next owner applies no fallback`,
    command,
    run: () => act.removeHandover(v.key, { ifIncarnation: m.incarnation, ifSince: m.since, command }),
  }
}

const askExtend: Build = (s, act) => {
  if (s.view !== 'detail' || !s.detail) return 'open a chat (⏎) to extend its checkpoint'
  const v = s.detail
  const cp = v.checkpoint
  if (!cp) return `${v.key} has no checkpoint`
  if (!cp.ephemeral) return `the checkpoint of ${v.key} is persistent: it has no TTL to extend`
  const command = cliEquivalent.extend(v.key, cp.revision)
  return {
    target: `checkpoint extend ${v.key}`,
    text: `extend the checkpoint of ${v.key}: ${cp.flow}/${cp.step} rev ${cp.revision}, expires in ${dur(cp.expiresInMs)} → ${dur(EXTEND_TTL_MS)}`,
    command,
    run: () => act.extendCheckpoint(v.key, { ifRevision: cp.revision, ttlMs: EXTEND_TTL_MS, command }),
  }
}

const BUILDERS: Record<Verb, Build> = {
  yield: askYield,
  release: askRelease,
  skip: askSkip,
  'handover rm': askRemoveMarker,
  'checkpoint extend': askExtend,
}

/** The prompt of this verb on this screen, or why there is nothing to act on. */
export function buildPrompt(verb: Verb, screen: PromptScreen, act: Interventions): Prompt | string {
  return BUILDERS[verb](screen, act)
}
