/**
 * The dashboard's root: the one component that owns state (polling, and the screen state of
 * ./dashboard-state.ts) and handles keys (the table of ./keys.ts). Everything it renders is a
 * presentational component fed with rows from the pure model (model.ts), the prompts of prompts.ts and
 * layout decisions (layout.ts).
 */
import React, { useCallback, useEffect, useReducer, useRef, useState } from 'react'
import { Box, useApp, useInput, useStdout, type Key } from 'ink'
import type { ChatDetail, DashboardSnapshot } from '../lib.js'
import { describeError } from '../output/errors.js'
import { usePolling, type PollState } from './use-polling.js'
import { advance, chatDetail, filterChats, filterExpiring, needsAttention, type DashboardModel } from './model.js'
import { PANELS, type PanelId } from './layout.js'
import type { Interventions } from './interventions.js'
import { buildPrompt, type Prompt, type PromptScreen, type Verb } from './prompts.js'
import { keyAction, type KeyCommands, type ReplayControls } from './keys.js'
import { initialState, reduce, type DashboardAction, type DashboardState, type OpenedDetail } from './dashboard-state.js'
import { Header, type Connection } from './components/header.js'
import { Footer, footerLines, type FooterMode } from './components/footer.js'
import { MainPanels, type PanelRows } from './components/main-panels.js'
import { ChatDetailView } from './components/chat-detail.js'
import { HelpView } from './components/help-view.js'

/** What the dashboard reads from and acts through (source.ts; a fake in tests). */
export interface DashboardData {
  url: string
  prefix: string
  layout: string
  read(): Promise<DashboardSnapshot>
  chat(key: string): Promise<ChatDetail>
  commandsTotal(): number
  interventions: Interventions
}

export interface DashboardAppProps {
  source: DashboardData
  intervalMs: number
  readOnly: boolean
  colour: boolean
  /** A fixed size (tests); by default the terminal's, following resizes. */
  size?: { columns: number; rows: number }
  logFiles?: Record<string, string>
  /** Local clock (tests). */
  now?: () => number
  /** `watch --replay`: the player of the recording (space/p pause, . , step, + - speed, [ ] ±10s, g time). */
  player?: ReplayControls
}

export type { ReplayControls }
export { WIDE } from './components/main-panels.js'

interface Refresh {
  model: DashboardModel
  detail: OpenedDetail | null
}

function useTerminalSize(fixed?: { columns: number; rows: number }): { columns: number; rows: number } {
  const { stdout } = useStdout()
  const read = () => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 })
  const [size, setSize] = useState(read)
  useEffect(() => {
    if (fixed) return
    const onResize = () => setSize(read())
    stdout.on('resize', onResize)
    return () => {
      stdout.off('resize', onResize)
    }
  }, [stdout, fixed])
  return fixed ?? size
}

const errLine = (err: unknown) => describeError(err).line

/**
 * The poll reads the dashboard and, while `detailKey` is open, that chat; the model remembers the
 * previous refresh (rates, gone replicas).
 */
function useRefresh(source: DashboardData, detailKey: string | null, o: { intervalMs: number; paused: boolean; now: () => number }) {
  const modelRef = useRef<DashboardModel | null>(null)
  const detailKeyRef = useRef<string | null>(null)
  detailKeyRef.current = detailKey
  const read = useCallback(async (): Promise<Refresh> => {
    const key = detailKeyRef.current
    const [snap, detail] = await Promise.all([
      source.read(),
      key
        ? source.chat(key).then(
            (data) => ({ key, data, error: null }),
            (err: unknown) => ({ key, data: null, error: errLine(err) }),
          )
        : Promise.resolve(null),
    ])
    const model = advance(modelRef.current, snap, { sampledAtMs: o.now(), commandsTotal: source.commandsTotal() })
    modelRef.current = model
    return { model, detail }
  }, [source])
  return usePolling(read, o)
}

/** The rows as shown (the filter applies to chats and expiring leases), and the key of each. */
function visibleRows(model: DashboardModel | null, filter: string): { rows: PanelRows; keys: Record<PanelId, string[]> } {
  const rows = {
    replicas: model?.replicas ?? [],
    providers: model?.providers ?? [],
    chats: filterChats(model?.chats ?? [], filter),
    expiring: filterExpiring(model?.expiring ?? [], filter),
    events: model?.events ?? [],
  }
  const keys: Record<PanelId, string[]> = {
    replicas: rows.replicas.map((r) => r.replicaId),
    providers: rows.providers.map((r) => r.key),
    chats: rows.chats.map((r) => r.key),
    expiring: rows.expiring.map((r) => `${r.kind}:${r.key}`),
    events: rows.events.map((r) => r.id),
  }
  return { rows, keys }
}

/** The header's word for the connection: live, connecting, or down (since when, how many tries, how old the data shown). */
function connectionOf(poll: PollState<Refresh>, localNow: number): Connection {
  if (poll.error) {
    return {
      state: 'down',
      error: errLine(poll.error).replace(/^Redis unreachable( at \S+)?: /, ''),
      downForMs: localNow - (poll.failingSince ?? localNow),
      attempts: poll.failures,
      dataAgeMs: poll.lastOkAt === null ? null : localNow - poll.lastOkAt,
    }
  }
  if (!poll.data) return { state: 'connecting' }
  return { state: 'live', refreshedAgoMs: localNow - (poll.lastOkAt ?? localNow) }
}

/** What the footer shows: the open prompt, the running action, the filter or time being typed, the last message, or the keys. */
function footerOf(s: DashboardState, confirm: Prompt | null, readOnly: boolean): FooterMode {
  if (confirm) return { kind: 'confirm', text: confirm.text, command: confirm.command }
  if (s.busy) return { kind: 'busy', text: s.busy }
  if (s.editingFilter) return { kind: 'filter', text: s.filter }
  if (s.jumpText !== null) return { kind: 'message', text: `jump to (HH:MM:SS UTC, Enter): ${s.jumpText}`, tone: 'info' }
  if (s.message) return { kind: 'message', ...s.message }
  return { kind: 'keys', detail: s.view === 'detail', readOnly }
}

interface ModeContext {
  state: DashboardState
  /** The open prompt as rebuilt from this render's refresh (null: its target is gone). */
  confirm: Prompt | null
  runConfirmed(c: Prompt): void
  dispatch(a: DashboardAction): void
  player: ReplayControls | undefined
  refresh(): void
}

/**
 * The modes that take keys before the key table: an open prompt (y confirms, any other key cancels),
 * the filter or the replay time being typed. False when no mode is on.
 */
function modeKey(input: string, key: Key, m: ModeContext): boolean {
  const { state, dispatch } = m
  if (state.confirmAsk) {
    if ((input === 'y' || input === 'Y') && m.confirm) m.runConfirmed(m.confirm)
    else dispatch({ type: 'close-prompt', message: { text: 'cancelled: nothing done', tone: 'info' } })
  } else if (state.editingFilter) {
    if (key.return) dispatch({ type: 'apply-filter' })
    else if (key.escape) dispatch({ type: 'clear-filter' })
    else if (key.backspace || key.delete) dispatch({ type: 'erase-filter' })
    else if (input && !key.ctrl && !key.meta && !key.tab) dispatch({ type: 'type-filter', input })
  } else if (state.jumpText !== null) {
    if (key.return) {
      const text = state.jumpText
      if (!m.player!.jumpToClock(text)) dispatch({ type: 'say', message: { text: `not a time: ${text} (HH:MM:SS, UTC)`, tone: 'warn' } })
      dispatch({ type: 'end-jump' })
      m.refresh()
    } else if (key.escape) dispatch({ type: 'end-jump' })
    else if (key.backspace || key.delete) dispatch({ type: 'erase-jump' })
    else if (input && !key.ctrl && !key.meta) dispatch({ type: 'type-jump', input })
  } else return false
  return true
}

export function DashboardApp(props: DashboardAppProps): React.ReactElement {
  const { source, readOnly, colour } = props
  const now = props.now ?? Date.now
  const { exit } = useApp()
  const size = useTerminalSize(props.size)
  const [state, dispatch] = useReducer(reduce, undefined, initialState)
  const { view, focus, filter, detailKey } = state

  const openKey = view === 'detail' || (view === 'help' && state.helpFrom === 'detail') ? detailKey : null
  const poll = useRefresh(source, openKey, { intervalMs: props.intervalMs, paused: state.paused, now })
  const model = poll.data?.model ?? null
  const { rows, keys: rowKeys } = visibleRows(model, filter)

  // The selection follows its row (by key) when rows move between refreshes.
  const selectedIndex = (p: PanelId): number | null => {
    const keys = rowKeys[p]
    if (!keys.length) return null
    const s = state.selection[p]
    const byKey = s.key === null ? -1 : keys.indexOf(s.key)
    return byKey >= 0 ? byKey : Math.min(s.index, keys.length - 1)
  }
  const select = (p: PanelId, index: number) => {
    const keys = rowKeys[p]
    if (!keys.length) return
    const i = Math.max(0, Math.min(keys.length - 1, index))
    dispatch({ type: 'select', panel: p, index: i, key: keys[i] ?? null })
  }

  const detailData = poll.data?.detail && poll.data.detail.key === detailKey ? poll.data.detail : null
  const currentDetail = detailData ?? (state.openedDetail?.key === detailKey ? state.openedDetail : null)
  const detail = currentDetail?.data && model ? chatDetail(currentDetail.key, currentDetail.data, model.liveReplicas) : null
  const tickets = detail?.view.tickets ?? []
  const ticketSel = tickets.length ? Math.min(state.ticketIndex, tickets.length - 1) : null

  const openChat = (key: string) => {
    dispatch({ type: 'open-chat', key })
    // Read it now rather than at the next tick.
    source.chat(key).then(
      (data) => dispatch({ type: 'opened', detail: { key, data, error: null } }),
      (err: unknown) => dispatch({ type: 'opened', detail: { key, data: null, error: errLine(err) } }),
    )
  }

  const screen: PromptScreen = {
    view,
    focus,
    rows,
    selected: Object.fromEntries(PANELS.map((p) => [p, selectedIndex(p)])) as PromptScreen['selected'],
    allChats: model?.chats ?? [],
    detail: detail?.view ?? null,
    ticket: ticketSel,
  }
  const ask = (verb: Verb) => buildPrompt(verb, screen, source.interventions)

  const act = (verb: Verb) => {
    if (readOnly) {
      dispatch({ type: 'say', message: { text: `read-only mode (--read-only / BOTMESH_READ_ONLY): ${verb} is disabled`, tone: 'warn' } })
      return
    }
    const c = ask(verb)
    if (typeof c === 'string') dispatch({ type: 'say', message: { text: c, tone: 'warn' } })
    else dispatch({ type: 'ask', verb, target: c.target })
  }

  // The open prompt, rebuilt from this render's refresh: it shows (and acts at) the fence or revision
  // the screen behind it shows, never the one of the refresh when the key was pressed.
  const { confirmAsk } = state
  const rebuilt = confirmAsk ? ask(confirmAsk.verb) : null
  const confirm: Prompt | null = rebuilt && typeof rebuilt !== 'string' && rebuilt.target === confirmAsk!.target ? rebuilt : null
  const confirmGone = confirmAsk !== null && confirm === null
  useEffect(() => {
    if (!confirmGone) return
    const what = typeof rebuilt === 'string' ? rebuilt : `${confirmAsk!.target} is gone`
    dispatch({ type: 'close-prompt', message: { text: `the state changed: ${what}; nothing done`, tone: 'warn' } })
  })

  const runConfirmed = (c: Prompt) => {
    dispatch({ type: 'run', command: c.command })
    c.run()
      .then(
        (o) => dispatch({ type: 'say', message: { text: o.text, tone: o.ok ? 'good' : 'warn' } }),
        (err: unknown) => dispatch({ type: 'say', message: { text: `failed: ${errLine(err)}`, tone: 'bad' } }),
      )
      .finally(() => {
        dispatch({ type: 'done' })
        poll.refresh()
      })
  }

  const commands: KeyCommands = {
    quit: exit,
    openHelp: () => dispatch({ type: 'open-help', from: view === 'detail' ? 'detail' : 'main' }),
    closeHelp: () => dispatch({ type: 'close-help' }),
    togglePause: () => dispatch({ type: 'toggle-pause' }),
    act,
    back: () => dispatch({ type: 'back' }),
    moveTicket: (step) => dispatch({ type: 'ticket', step: step < 0 ? -1 : 1, count: tickets.length }),
    editFilter: () => dispatch({ type: 'edit-filter' }),
    clearFilter: () => dispatch({ type: 'clear-filter' }),
    movePanel: (step) => dispatch({ type: 'focus', panel: PANELS[(PANELS.indexOf(focus) + step + PANELS.length) % PANELS.length]! }),
    moveRow: (step) => select(focus, (selectedIndex(focus) ?? 0) + step),
    openSelected: () => {
      const i = selectedIndex(focus)
      if (focus === 'chats' && i !== null) openChat(rows.chats[i]!.key)
      else if (focus === 'expiring' && i !== null && rows.expiring[i]!.kind === 'chat') openChat(rows.expiring[i]!.key)
      else dispatch({ type: 'say', message: { text: '⏎ opens a chat: select one in CHAT or LEASES BY EXPIRY', tone: 'info' } })
    },
    replay: (drive) => {
      drive(props.player!)
      poll.refresh()
    },
    typeJump: () => dispatch({ type: 'start-jump' }),
  }

  // Keys are handled with what is on screen now: the handler is refreshed at every render, and the
  // one subscription calls the latest (a key that arrives between a render and ink's re-subscription
  // would otherwise act on an older screen).
  const onKey = (input: string, key: Key) => {
    if (modeKey(input, key, { state, confirm, runConfirmed, dispatch, player: props.player, refresh: poll.refresh })) return
    const action = keyAction(input, key, { view, busy: Boolean(state.busy), filter, replay: props.player !== undefined })
    if (!action?.keepsMessage) dispatch({ type: 'say', message: null })
    action?.run(commands, input, key)
  }
  const onKeyRef = useRef(onKey)
  onKeyRef.current = onKey
  useInput(useCallback((input: string, key: Key) => onKeyRef.current(input, key), []))

  // ---------------------------------------------------------------- render
  const width = size.columns
  const footer = footerOf(state, confirm, readOnly)
  // One line less than the terminal: ink redraws in place instead of clearing the screen.
  const bodyHeight = Math.max(1, size.rows - 1 - 2 - footerLines(footer))
  let body: React.ReactElement
  if (view === 'help') {
    body = <HelpView readOnly={readOnly} width={width} height={bodyHeight} logFiles={props.logFiles} />
  } else if (view === 'detail' && detailKey) {
    body = (
      <ChatDetailView
        key_={detailKey}
        view={detail?.view ?? null}
        explanation={detail?.explanation ?? null}
        error={currentDetail?.error ?? null}
        selectedTicket={ticketSel}
        width={width}
        height={bodyHeight}
        colour={colour}
      />
    )
  } else {
    body = (
      <MainPanels
        rows={rows}
        totalChats={model?.chats.length ?? 0}
        filter={filter}
        focus={focus}
        selected={selectedIndex(focus)}
        nowMs={model?.nowMs ?? 0}
        width={width}
        height={bodyHeight}
        colour={colour}
      />
    )
  }

  return (
    <Box flexDirection="column" width={width}>
      <Header
        url={source.url}
        prefix={source.prefix}
        layout={source.layout}
        redisNowMs={model?.nowMs ?? null}
        connection={connectionOf(poll, now())}
        replay={props.player?.describe()}
        commandsPerSec={model?.commandsPerSec ?? null}
        refreshCommands={model?.refreshCommands ?? null}
        intervalMs={props.intervalMs}
        paused={state.paused}
        readOnly={readOnly}
        width={width}
        colour={colour}
        attention={model ? needsAttention(model) : null}
      />
      <Box height={bodyHeight} flexDirection="column" overflow="hidden">
        {body}
      </Box>
      <Footer mode={footer} width={width} colour={colour} />
    </Box>
  )
}
