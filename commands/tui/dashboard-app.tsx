/**
 * The dashboard's root: the one component that owns state (polling, selection, filter, views,
 * confirmations) and handles keys. Everything it renders is a presentational component fed with rows
 * from the pure model (model.ts) and layout decisions (layout.ts).
 */
import React, { useCallback, useEffect, useRef, useState } from 'react'
import { Box, useApp, useInput, useStdout, type Key } from 'ink'
import type { ChatDetail, ChatView, DashboardSnapshot, Explanation } from '../lib.js'
import { describeError } from '../output/errors.js'
import { usePolling } from './use-polling.js'
import { advance, chatDetail, filterChats, filterExpiring, needsAttention, type DashboardModel, type Tone } from './model.js'
import { PANELS, allocate, priorityFor, type PanelId } from './layout.js'
import type { Interventions } from './interventions.js'
import { buildPrompt, type Prompt, type PromptScreen, type Verb } from './prompts.js'
import { keyAction, type KeyCommands, type ReplayControls } from './keys.js'
import { Header, type Connection } from './components/header.js'
import { Footer, footerLines, type FooterMode } from './components/footer.js'
import { ReplicasPanel } from './components/replicas-panel.js'
import { ProvidersPanel } from './components/providers-panel.js'
import { ChatsPanel } from './components/chats-panel.js'
import { ExpiringPanel } from './components/expiring-panel.js'
import { EventsPanel } from './components/events-panel.js'
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

/** At least this wide for the two-column layout. */
export const WIDE = 160

interface Refresh {
  model: DashboardModel
  detail: { key: string; data: ChatDetail | null; error: string | null } | null
}

type Selection = Record<PanelId, { index: number; key: string | null }>

const emptySelection = (): Selection => ({
  replicas: { index: 0, key: null },
  providers: { index: 0, key: null },
  chats: { index: 0, key: null },
  expiring: { index: 0, key: null },
  events: { index: 0, key: null },
})

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

export function DashboardApp(props: DashboardAppProps): React.ReactElement {
  const { source, readOnly, colour } = props
  const now = props.now ?? Date.now
  const { exit } = useApp()
  const size = useTerminalSize(props.size)

  const [paused, setPaused] = useState(false)
  const [focus, setFocus] = useState<PanelId>('chats')
  const [selection, setSelection] = useState<Selection>(emptySelection)
  const [filter, setFilter] = useState('')
  const [editingFilter, setEditingFilter] = useState(false)
  const [view, setView] = useState<'main' | 'detail' | 'help'>('main')
  const [helpFrom, setHelpFrom] = useState<'main' | 'detail'>('main')
  const [detailKey, setDetailKey] = useState<string | null>(null)
  const [ticketIndex, setTicketIndex] = useState(0)
  /** The prompt open: which action, on what. Its text and fence are rebuilt from the latest refresh at each render. */
  const [confirmAsk, setConfirmAsk] = useState<{ verb: Verb; target: string } | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [message, setMessage] = useState<{ text: string; tone: Tone } | null>(null)
  /** `g` in a replay: the time being typed. */
  const [jumpText, setJumpText] = useState<string | null>(null)

  // The poll reads the dashboard and, in the detail view, the open chat; the model remembers the
  // previous refresh (rates, gone replicas).
  const modelRef = useRef<DashboardModel | null>(null)
  const detailKeyRef = useRef<string | null>(null)
  detailKeyRef.current = view === 'detail' || (view === 'help' && helpFrom === 'detail') ? detailKey : null
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
    const model = advance(modelRef.current, snap, { sampledAtMs: now(), commandsTotal: source.commandsTotal() })
    modelRef.current = model
    return { model, detail }
  }, [source])
  const poll = usePolling(read, { intervalMs: props.intervalMs, paused, now })
  const model = poll.data?.model ?? null

  // Rows as shown (the filter applies to chats and expiring leases).
  const rows = {
    replicas: model?.replicas ?? [],
    providers: model?.providers ?? [],
    chats: filterChats(model?.chats ?? [], filter),
    expiring: filterExpiring(model?.expiring ?? [], filter),
    events: model?.events ?? [],
  }
  const rowKeys: Record<PanelId, string[]> = {
    replicas: rows.replicas.map((r) => r.replicaId),
    providers: rows.providers.map((r) => r.key),
    chats: rows.chats.map((r) => r.key),
    expiring: rows.expiring.map((r) => `${r.kind}:${r.key}`),
    events: rows.events.map((r) => r.id),
  }
  // The selection follows its row (by key) when rows move between refreshes.
  const selectedIndex = (p: PanelId): number | null => {
    const keys = rowKeys[p]
    if (!keys.length) return null
    const s = selection[p]
    const byKey = s.key === null ? -1 : keys.indexOf(s.key)
    return byKey >= 0 ? byKey : Math.min(s.index, keys.length - 1)
  }
  const select = (p: PanelId, index: number) => {
    const keys = rowKeys[p]
    if (!keys.length) return
    const i = Math.max(0, Math.min(keys.length - 1, index))
    setSelection((s) => ({ ...s, [p]: { index: i, key: keys[i] ?? null } }))
  }

  const detailData = poll.data?.detail && poll.data.detail.key === detailKey ? poll.data.detail : null
  const [openedDetail, setOpenedDetail] = useState<Refresh['detail']>(null)
  const currentDetail = detailData ?? (openedDetail?.key === detailKey ? openedDetail : null)
  let detail: { view: ChatView; explanation: Explanation } | null = null
  if (currentDetail?.data && model) detail = chatDetail(currentDetail.key, currentDetail.data, model.liveReplicas)
  const tickets = detail?.view.tickets ?? []
  const ticketSel = tickets.length ? Math.min(ticketIndex, tickets.length - 1) : null

  const openChat = (key: string) => {
    setDetailKey(key)
    setTicketIndex(0)
    setView('detail')
    // Read it now rather than at the next tick.
    source.chat(key).then(
      (data) => setOpenedDetail({ key, data, error: null }),
      (err: unknown) => setOpenedDetail({ key, data: null, error: errLine(err) }),
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
      setMessage({ text: `read-only mode (--read-only / BOTMESH_READ_ONLY): ${verb} is disabled`, tone: 'warn' })
      return
    }
    const c = ask(verb)
    if (typeof c === 'string') setMessage({ text: c, tone: 'warn' })
    else setConfirmAsk({ verb, target: c.target })
  }

  // The open prompt, rebuilt from this render's refresh: it shows (and acts at) the fence or revision
  // the screen behind it shows, never the one of the refresh when the key was pressed.
  const rebuilt = confirmAsk ? ask(confirmAsk.verb) : null
  const confirm: Prompt | null = rebuilt && typeof rebuilt !== 'string' && rebuilt.target === confirmAsk!.target ? rebuilt : null
  const confirmGone = confirmAsk !== null && confirm === null
  useEffect(() => {
    if (!confirmGone) return
    setConfirmAsk(null)
    setMessage({
      text: `the state changed: ${typeof rebuilt === 'string' ? rebuilt : `${confirmAsk!.target} is gone`}; nothing done`,
      tone: 'warn',
    })
  })

  const runConfirmed = (c: Prompt) => {
    setConfirmAsk(null)
    setBusy(c.command)
    c.run()
      .then(
        (o) => setMessage({ text: o.text, tone: o.ok ? 'good' : 'warn' }),
        (err: unknown) => setMessage({ text: `failed: ${errLine(err)}`, tone: 'bad' }),
      )
      .finally(() => {
        setBusy(null)
        poll.refresh()
      })
  }

  const commands: KeyCommands = {
    quit: exit,
    openHelp: () => {
      setHelpFrom(view as 'main' | 'detail')
      setView('help')
    },
    closeHelp: () => setView(helpFrom),
    togglePause: () => setPaused((x) => !x),
    act,
    back: () => setView('main'),
    moveTicket: (step) =>
      setTicketIndex((t) =>
        step < 0 ? Math.max(0, Math.min(t, tickets.length - 1) - 1) : Math.min(Math.max(0, tickets.length - 1), t + 1),
      ),
    editFilter: () => setEditingFilter(true),
    clearFilter: () => setFilter(''),
    movePanel: (step) => {
      const i = PANELS.indexOf(focus)
      setFocus(PANELS[(i + step + PANELS.length) % PANELS.length]!)
    },
    moveRow: (step) => select(focus, (selectedIndex(focus) ?? 0) + step),
    openSelected: () => {
      const i = selectedIndex(focus)
      if (focus === 'chats' && i !== null) openChat(rows.chats[i]!.key)
      else if (focus === 'expiring' && i !== null && rows.expiring[i]!.kind === 'chat') openChat(rows.expiring[i]!.key)
      else setMessage({ text: '⏎ opens a chat: select one in CHAT or LEASES BY EXPIRY', tone: 'info' })
    },
    replay: (drive) => {
      drive(props.player!)
      poll.refresh()
    },
    typeJump: () => setJumpText(''),
  }

  // Keys are handled with what is on screen now: the handler is refreshed at every render, and the
  // one subscription calls the latest (a key that arrives between a render and ink's re-subscription
  // would otherwise act on an older screen).
  const onKey = (input: string, key: Key) => {
    if (confirmAsk) {
      if ((input === 'y' || input === 'Y') && confirm) runConfirmed(confirm)
      else {
        setConfirmAsk(null)
        setMessage({ text: 'cancelled: nothing done', tone: 'info' })
      }
      return
    }
    if (editingFilter) {
      if (key.return) setEditingFilter(false)
      else if (key.escape) {
        setFilter('')
        setEditingFilter(false)
      } else if (key.backspace || key.delete) setFilter((f) => f.slice(0, -1))
      else if (input && !key.ctrl && !key.meta && !key.tab) setFilter((f) => f + input)
      return
    }
    if (jumpText !== null) {
      if (key.return) {
        if (!props.player!.jumpToClock(jumpText)) setMessage({ text: `not a time: ${jumpText} (HH:MM:SS, UTC)`, tone: 'warn' })
        setJumpText(null)
        poll.refresh()
      } else if (key.escape) setJumpText(null)
      else if (key.backspace || key.delete) setJumpText((t) => (t ?? '').slice(0, -1))
      else if (input && !key.ctrl && !key.meta) setJumpText((t) => `${t ?? ''}${input}`)
      return
    }
    const action = keyAction(input, key, { view, busy: busy !== null, filter, replay: props.player !== undefined })
    if (!action?.keepsMessage) setMessage(null)
    action?.run(commands, input, key)
  }
  const onKeyRef = useRef(onKey)
  onKeyRef.current = onKey
  useInput(useCallback((input: string, key: Key) => onKeyRef.current(input, key), []))

  // ---------------------------------------------------------------- render
  const width = size.columns
  // One line less than the terminal: ink redraws in place instead of clearing the screen.
  const localNow = now()
  let connection: Connection
  if (poll.error) {
    connection = {
      state: 'down',
      error: errLine(poll.error).replace(/^Redis unreachable( at \S+)?: /, ''),
      downForMs: localNow - (poll.failingSince ?? localNow),
      attempts: poll.failures,
      dataAgeMs: poll.lastOkAt === null ? null : localNow - poll.lastOkAt,
    }
  } else if (!model) connection = { state: 'connecting' }
  else connection = { state: 'live', refreshedAgoMs: localNow - (poll.lastOkAt ?? localNow) }

  const footer: FooterMode = confirm
    ? { kind: 'confirm', text: confirm.text, command: confirm.command }
    : busy
      ? { kind: 'busy', text: busy }
      : editingFilter
        ? { kind: 'filter', text: filter }
        : jumpText !== null
          ? { kind: 'message', text: `jump to (HH:MM:SS UTC, Enter): ${jumpText}`, tone: 'info' }
          : message
            ? { kind: 'message', ...message }
            : { kind: 'keys', detail: view === 'detail', readOnly }

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
    const need = (id: PanelId, n: number, base: number) => ({ id, need: 1 + Math.max(1, n), base: 1 + Math.min(Math.max(1, n), base) })
    const panel = (id: PanelId, w: number, h: number): React.ReactElement | null => {
      const common = { width: w, height: h, selected: focus === id ? selectedIndex(id) : null, focused: focus === id, colour }
      switch (id) {
        case 'replicas':
          return <ReplicasPanel key={id} rows={rows.replicas} {...common} />
        case 'providers':
          return <ProvidersPanel key={id} rows={rows.providers} {...common} />
        case 'chats':
          return <ChatsPanel key={id} rows={rows.chats} total={model?.chats.length ?? 0} filter={filter} {...common} />
        case 'expiring':
          return <ExpiringPanel key={id} rows={rows.expiring} filter={filter} {...common} />
        case 'events':
          return <EventsPanel key={id} rows={rows.events} nowMs={model?.nowMs ?? 0} {...common} />
      }
    }
    const needs = {
      replicas: need('replicas', rows.replicas.length, 6),
      providers: need('providers', rows.providers.length, 3),
      chats: need('chats', rows.chats.length, 5),
      expiring: need('expiring', rows.expiring.length, 3),
      events: need('events', rows.events.length, 2),
    }
    const column = (ids: PanelId[], w: number) => {
      const h = allocate(
        ids.map((id) => needs[id]),
        priorityFor(focus).filter((id) => ids.includes(id)),
        bodyHeight,
      )
      return (
        <Box flexDirection="column" width={w}>
          {ids.map((id) => panel(id, w, h[id]))}
        </Box>
      )
    }
    if (width >= WIDE) {
      const left = Math.floor(width * 0.55)
      body = (
        <Box flexDirection="row" width={width}>
          {column(['replicas', 'chats'], left)}
          <Box width={1} />
          {column(['providers', 'expiring', 'events'], width - left - 1)}
        </Box>
      )
    } else body = column(['replicas', 'providers', 'chats', 'expiring', 'events'], width)
  }

  return (
    <Box flexDirection="column" width={width}>
      <Header
        url={source.url}
        prefix={source.prefix}
        layout={source.layout}
        redisNowMs={model?.nowMs ?? null}
        connection={connection}
        replay={props.player?.describe()}
        commandsPerSec={model?.commandsPerSec ?? null}
        refreshCommands={model?.refreshCommands ?? null}
        intervalMs={props.intervalMs}
        paused={paused}
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
