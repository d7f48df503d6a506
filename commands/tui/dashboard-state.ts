/**
 * What the dashboard's screen is in (view, focus, selection, filter, the open prompt, the status line)
 * and every change a key or a finished intervention makes to it, as one reducer. The I/O those changes
 * go with (reading the opened chat, running an intervention, driving a replay) stays in the component.
 */
import type { ChatDetail } from '../lib.js'
import type { View } from './keys.js'
import type { PanelId } from './layout.js'
import type { Tone } from './model.js'
import type { Verb } from './prompts.js'

export type Selection = Record<PanelId, { index: number; key: string | null }>

/** A chat read whole for the detail view, or why it could not be. */
export interface OpenedDetail {
  key: string
  data: ChatDetail | null
  error: string | null
}

export interface Message {
  text: string
  tone: Tone
}

export interface DashboardState {
  paused: boolean
  focus: PanelId
  /** Each panel's selected row, by index and by key: the selection follows its row when rows move. */
  selection: Selection
  filter: string
  editingFilter: boolean
  view: View
  /** The view the help screen goes back to. */
  helpFrom: 'main' | 'detail'
  /** The chat of the detail view. */
  detailKey: string | null
  ticketIndex: number
  /** The chat as read when it was opened, until the next refresh reads it. */
  openedDetail: OpenedDetail | null
  /** The prompt open: which action, on what. Its text and fence are rebuilt from the latest refresh at each render. */
  confirmAsk: { verb: Verb; target: string } | null
  /** The command of the intervention running. */
  busy: string | null
  message: Message | null
  /** `g` in a replay: the time being typed. */
  jumpText: string | null
}

export type DashboardAction =
  | { type: 'toggle-pause' }
  | { type: 'focus'; panel: PanelId }
  | { type: 'select'; panel: PanelId; index: number; key: string | null }
  | { type: 'open-help'; from: 'main' | 'detail' }
  | { type: 'close-help' }
  | { type: 'open-chat'; key: string }
  | { type: 'opened'; detail: OpenedDetail }
  | { type: 'back' }
  | { type: 'ticket'; step: -1 | 1; count: number }
  | { type: 'edit-filter' }
  | { type: 'type-filter'; input: string }
  | { type: 'erase-filter' }
  | { type: 'apply-filter' }
  | { type: 'clear-filter' }
  | { type: 'ask'; verb: Verb; target: string }
  | { type: 'close-prompt'; message: Message }
  | { type: 'run'; command: string }
  | { type: 'done' }
  | { type: 'say'; message: Message | null }
  | { type: 'start-jump' }
  | { type: 'type-jump'; input: string }
  | { type: 'erase-jump' }
  | { type: 'end-jump' }

export function initialState(): DashboardState {
  const first = { index: 0, key: null }
  return {
    paused: false,
    focus: 'chats',
    selection: { replicas: first, providers: first, chats: first, expiring: first, events: first },
    filter: '',
    editingFilter: false,
    view: 'main',
    helpFrom: 'main',
    detailKey: null,
    ticketIndex: 0,
    openedDetail: null,
    confirmAsk: null,
    busy: null,
    message: null,
    jumpText: null,
  }
}

/** The state with these fields changed; the same object when none changes (React then skips the render). */
function set(s: DashboardState, patch: Partial<DashboardState>): DashboardState {
  const keys = Object.keys(patch) as Array<keyof DashboardState>
  return keys.every((k) => Object.is(s[k], patch[k])) ? s : { ...s, ...patch }
}

export function reduce(s: DashboardState, a: DashboardAction): DashboardState {
  switch (a.type) {
    case 'toggle-pause':
      return set(s, { paused: !s.paused })
    case 'focus':
      return set(s, { focus: a.panel })
    case 'select':
      return set(s, { selection: { ...s.selection, [a.panel]: { index: a.index, key: a.key } } })
    case 'open-help':
      return set(s, { helpFrom: a.from, view: 'help' })
    case 'close-help':
      return set(s, { view: s.helpFrom })
    case 'open-chat':
      return set(s, { detailKey: a.key, ticketIndex: 0, view: 'detail' })
    case 'opened':
      return set(s, { openedDetail: a.detail })
    case 'back':
      return set(s, { view: 'main' })
    case 'ticket': {
      const last = Math.max(0, a.count - 1)
      const t = s.ticketIndex
      return set(s, { ticketIndex: a.step < 0 ? Math.max(0, Math.min(t, a.count - 1) - 1) : Math.min(last, t + 1) })
    }
    case 'edit-filter':
      return set(s, { editingFilter: true })
    case 'type-filter':
      return set(s, { filter: s.filter + a.input })
    case 'erase-filter':
      return set(s, { filter: s.filter.slice(0, -1) })
    case 'apply-filter':
      return set(s, { editingFilter: false })
    case 'clear-filter':
      return set(s, { filter: '', editingFilter: false })
    case 'ask':
      return set(s, { confirmAsk: { verb: a.verb, target: a.target } })
    case 'close-prompt':
      return set(s, { confirmAsk: null, message: a.message })
    case 'run':
      return set(s, { confirmAsk: null, busy: a.command })
    case 'done':
      return set(s, { busy: null })
    case 'say':
      return set(s, { message: a.message })
    case 'start-jump':
      return set(s, { jumpText: '' })
    case 'type-jump':
      return set(s, { jumpText: `${s.jumpText ?? ''}${a.input}` })
    case 'erase-jump':
      return set(s, { jumpText: (s.jumpText ?? '').slice(0, -1) })
    case 'end-jump':
      return set(s, { jumpText: null })
  }
}
