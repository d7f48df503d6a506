/**
 * The dashboard's keys, in one table: the keys, their footer hint and help row, when each applies, and
 * what it does. Key dispatch, the footer and the help screen all read this table, so what a key does
 * and what the screen says of it are written in one place. (The replay keys have neither a hint nor a
 * help row yet, as before the table.)
 *
 * At most one action applies to a key in any state (test/unit/tui-keys.test.ts checks it), so the order
 * of the table is the help screen's. Three modes take keys before the table does: an open confirmation
 * (y confirms, any other key cancels), and the filter or the replay time being typed.
 */
import type { Key } from 'ink'
import { EXTEND_TTL_MS } from './interventions.js'
import type { Verb } from './prompts.js'
import { dur } from './text.js'

export type View = 'main' | 'detail' | 'help'

/** What the replay keys drive (./recording.ts Player). */
export interface ReplayControls {
  describe(): string
  toggle(): void
  step(by: number): void
  faster(factor: number): void
  jumpBy(ms: number): void
  /** Jump to a time of day (UTC) on the recording's day; false when the text is not a time. */
  jumpToClock(text: string): boolean
}

/** What decides which action a key takes. */
export interface KeyState {
  view: View
  /** An intervention is running: only quit, help, pause and the replay keys act meanwhile. */
  busy: boolean
  filter: string
  /** `watch --replay`: the replay keys act (p is the replay's pause). */
  replay: boolean
}

/** What the keys do; the dashboard's root component carries them out. */
export interface KeyCommands {
  quit(): void
  openHelp(): void
  closeHelp(): void
  togglePause(): void
  act(verb: Verb): void
  back(): void
  moveTicket(step: number): void
  editFilter(): void
  clearFilter(): void
  movePanel(step: number): void
  moveRow(step: number): void
  openSelected(): void
  replay(drive: (player: ReplayControls) => void): void
  typeJump(): void
}

export interface KeyAction {
  id: string
  match(input: string, key: Key): boolean
  when(s: KeyState): boolean
  run(c: KeyCommands, input: string, key: Key): void
  /** Its row on the help screen. */
  help?: { keys: string; text: string }
  /** Its hint in the footer (FOOTER says in which view). */
  hint?: string
  /** An operator write: refused in read-only mode, and not hinted in the footer there. */
  write?: boolean
  /** Leaves the last message on the status line (every other key clears it). */
  keepsMessage?: boolean
}

const isQuit = (input: string, key: Key) => input === 'q' || (key.ctrl && input === 'c')
const up = (input: string, key: Key) => key.upArrow || input === 'k'
const down = (input: string, key: Key) => key.downArrow || input === 'j'

const notHelp = (s: KeyState) => s.view !== 'help'
const inMain = (s: KeyState) => s.view === 'main' && !s.busy
const inDetail = (s: KeyState) => s.view === 'detail' && !s.busy
const replaying = (s: KeyState) => s.replay && notHelp(s)

/** An operator write: `label` names it in the footer ("y yield"). */
function intervention(label: string, input: string, verb: Verb, text: string): KeyAction {
  return {
    id: label,
    help: { keys: input, text },
    hint: `${input} ${label}`,
    write: true,
    when: (s) => notHelp(s) && !s.busy,
    match: (i) => i === input,
    run: (c) => c.act(verb),
  }
}

function replayKey(id: string, inputs: string[], drive: (player: ReplayControls) => void): KeyAction {
  return { id, when: replaying, match: (i) => inputs.includes(i), run: (c) => c.replay(drive) }
}

export const KEY_ACTIONS: readonly KeyAction[] = [
  {
    id: 'panel',
    help: { keys: 'tab ← →', text: 'move between panels (shift-tab: back)' },
    hint: 'tab/←→ panel',
    when: inMain,
    match: (_, k) => k.tab || k.rightArrow || k.leftArrow,
    run: (c, _, k) => c.movePanel(k.tab ? (k.shift ? -1 : 1) : k.rightArrow ? 1 : -1),
  },
  {
    id: 'row',
    help: { keys: '↑ ↓ k j pgup pgdn', text: 'move between rows' },
    hint: '↑↓ row',
    when: inMain,
    match: (i, k) => up(i, k) || down(i, k) || k.pageUp || k.pageDown,
    run: (c, i, k) => c.moveRow(up(i, k) ? -1 : down(i, k) ? 1 : k.pageUp ? -10 : 10),
  },
  {
    id: 'filter',
    help: { keys: '/', text: 'filter chats and leases by key or replica (esc clears)' },
    hint: '/ filter',
    when: inMain,
    match: (i) => i === '/',
    run: (c) => c.editFilter(),
  },
  {
    id: 'open',
    help: { keys: 'enter', text: 'open the chat: `chat inspect --explain` (esc back)' },
    hint: '⏎ chat',
    when: inMain,
    match: (_, k) => k.return,
    run: (c) => c.openSelected(),
  },
  {
    id: 'back',
    hint: 'esc back',
    when: inDetail,
    match: (_, k) => k.escape || k.backspace || k.delete || k.leftArrow,
    run: (c) => c.back(),
  },
  {
    id: 'ticket',
    hint: '↑↓ ticket',
    when: inDetail,
    match: (i, k) => up(i, k) || down(i, k),
    run: (c, i, k) => c.moveTicket(up(i, k) ? -1 : 1),
  },
  intervention('yield', 'y', 'yield', 'yield the provider: `provider yield <name> --if-fence`'),
  intervention('release', 'r', 'release', 'release the chat: `chat release <key> --if-fence`'),
  intervention('skip', 's', 'skip', 'in a chat, skip the ticket: `chat skip <key> <t> --if-fence`'),
  intervention('marker', 'h', 'handover rm', 'in a chat, remove its handover marker: `handover rm <key> --if-incarnation`'),
  intervention(
    'extend',
    'e',
    'checkpoint extend',
    `in a chat, extend its ephemeral checkpoint to ${dur(EXTEND_TTL_MS)}: \`checkpoint extend <key> --ttl ${dur(EXTEND_TTL_MS)} --if-revision\``,
  ),
  {
    id: 'pause',
    help: { keys: 'p', text: 'pause / resume refreshing' },
    hint: 'p pause',
    when: (s) => notHelp(s) && !s.replay,
    match: (i) => i === 'p',
    run: (c) => c.togglePause(),
  },
  {
    id: 'help',
    help: { keys: '?', text: 'this help (any key closes it)' },
    hint: '? help',
    when: notHelp,
    match: (i) => i === '?',
    run: (c) => c.openHelp(),
  },
  {
    id: 'quit',
    help: { keys: 'q ctrl-c', text: 'quit' },
    hint: 'q quit',
    keepsMessage: true,
    when: () => true,
    match: isQuit,
    run: (c) => c.quit(),
  },
  { id: 'close help', when: (s) => s.view === 'help', match: (i, k) => !isQuit(i, k), run: (c) => c.closeHelp() },
  { id: 'clear filter', when: (s) => inMain(s) && s.filter !== '', match: (_, k) => k.escape, run: (c) => c.clearFilter() },
  replayKey('replay pause', [' ', 'p'], (p) => p.toggle()),
  replayKey('replay step', ['.'], (p) => p.step(1)),
  replayKey('replay step back', [','], (p) => p.step(-1)),
  replayKey('replay faster', ['+'], (p) => p.faster(2)),
  replayKey('replay slower', ['-'], (p) => p.faster(0.5)),
  replayKey('replay forward', [']'], (p) => p.jumpBy(10_000)),
  replayKey('replay back', ['['], (p) => p.jumpBy(-10_000)),
  { id: 'replay jump', when: replaying, match: (i) => i === 'g', run: (c) => c.typeJump() },
]

/** The action this key takes in this state, if any. */
export function keyAction(input: string, key: Key, state: KeyState): KeyAction | undefined {
  return KEY_ACTIONS.find((a) => a.when(state) && a.match(input, key))
}

/** The footer's hints of each view, in the order they are shown. */
const FOOTER: Record<'main' | 'detail', string[]> = {
  main: ['panel', 'row', 'open', 'filter', 'yield', 'release', 'pause', 'help', 'quit'],
  detail: ['back', 'ticket', 'release', 'skip', 'marker', 'extend', 'pause', 'help', 'quit'],
}

/** The footer's line of key hints. */
export function footerHints(view: 'main' | 'detail', readOnly: boolean): string {
  return FOOTER[view]
    .map((id) => KEY_ACTIONS.find((a) => a.id === id)!)
    .filter((a) => !(readOnly && a.write))
    .map((a) => a.hint)
    .join(' ')
}

/** The help screen's rows: keys, then what they do. */
export function helpRows(): Array<[string, string]> {
  return KEY_ACTIONS.flatMap((a) => (a.help ? [[a.help.keys, a.help.text] as [string, string]] : []))
}

/** The keys of the operator writes, as the help screen names them: ['y', 'r', …]. */
export function writeKeys(): string[] {
  return KEY_ACTIONS.flatMap((a) => (a.write && a.help ? [a.help.keys] : []))
}
