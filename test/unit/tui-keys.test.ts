/**
 * The dashboard's key-action table (commands/tui/keys.ts): one action at most for any key in any state,
 * which one it is where keys overlap (p, esc, ←, ↑), and the footer and help screen it renders.
 */
import type { Key } from 'ink'
import { describe, expect, it } from 'vitest'
import { KEY_ACTIONS, footerHints, helpRows, keyAction, writeKeys, type KeyState, type View } from '../../commands/tui/keys.js'

const FLAGS = [
  'upArrow',
  'downArrow',
  'leftArrow',
  'rightArrow',
  'pageDown',
  'pageUp',
  'return',
  'escape',
  'tab',
  'backspace',
  'delete',
] as const

function key(o: Partial<Key> = {}): Key {
  const none = Object.fromEntries(
    [...FLAGS, 'home', 'end', 'ctrl', 'shift', 'meta', 'super', 'hyper', 'capsLock', 'numLock'].map((f) => [f, false]),
  )
  return { ...none, ...o } as Key
}

const state = (o: Partial<KeyState> = {}): KeyState => ({ view: 'main', busy: false, filter: '', replay: false, ...o })

/** Every state the table tells apart. */
const STATES: KeyState[] = (['main', 'detail', 'help'] as View[]).flatMap((view) =>
  [false, true].flatMap((busy) => ['', 'pod'].flatMap((filter) => [false, true].map((replay) => ({ view, busy, filter, replay })))),
)

/** Every printable character, with and without ctrl, and each special key alone (tab also with shift). */
const PRESSES: Array<[string, Key]> = [
  ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).flatMap((c): Array<[string, Key]> => [
    [c, key()],
    [c, key({ ctrl: true })],
  ]),
  ...FLAGS.map((f): [string, Key] => ['', key({ [f]: true })]),
  ['', key({ tab: true, shift: true })],
]

const id = (input: string, k: Key, s: Partial<KeyState> = {}) => keyAction(input, k, state(s))?.id

describe('dashboard keys', () => {
  it('at most one action takes a key in any state, so the table order does not decide', () => {
    for (const s of STATES) {
      for (const [input, k] of PRESSES) {
        const taking = KEY_ACTIONS.filter((a) => a.when(s) && a.match(input, k)).map((a) => a.id)
        expect(taking.length, `${JSON.stringify(input)} ${JSON.stringify(s)}: ${taking.join(', ')}`).toBeLessThanOrEqual(1)
      }
    }
  })

  it('picks the action of the state where keys overlap', () => {
    expect(id('p', key())).toBe('pause')
    expect(id('p', key(), { replay: true })).toBe('replay pause')
    expect(id('p', key(), { view: 'help', replay: true })).toBe('close help')
    expect(id('q', key(), { view: 'help' })).toBe('quit')
    expect(id('c', key({ ctrl: true }), { busy: true })).toBe('quit')
    expect(id('', key({ escape: true }))).toBeUndefined()
    expect(id('', key({ escape: true }), { filter: 'pod' })).toBe('clear filter')
    expect(id('', key({ escape: true }), { view: 'detail', filter: 'pod' })).toBe('back')
    expect(id('', key({ leftArrow: true }))).toBe('panel')
    expect(id('', key({ leftArrow: true }), { view: 'detail' })).toBe('back')
    expect(id('k', key())).toBe('row')
    expect(id('k', key(), { view: 'detail' })).toBe('ticket')
    expect(id('y', key(), { view: 'detail' })).toBe('yield')
  })

  it('while an intervention runs, only quit, help, pause and the replay keys act', () => {
    const acting = new Set<string>()
    for (const s of STATES.filter((x) => x.busy && x.view !== 'help'))
      for (const [input, k] of PRESSES) {
        const a = keyAction(input, k, s)
        if (a) acting.add(a.id)
      }
    expect([...acting].filter((a) => !a.startsWith('replay ')).sort()).toEqual(['help', 'pause', 'quit'])
  })

  it('the footer hints each view, without the writes in read-only mode', () => {
    expect(footerHints('main', false)).toBe('tab/←→ panel ↑↓ row ⏎ chat / filter y yield r release p pause ? help q quit')
    expect(footerHints('main', true)).toBe('tab/←→ panel ↑↓ row ⏎ chat / filter p pause ? help q quit')
    expect(footerHints('detail', false)).toBe('esc back ↑↓ ticket r release s skip h marker e extend p pause ? help q quit')
    expect(footerHints('detail', true)).toBe('esc back ↑↓ ticket p pause ? help q quit')
  })

  it('the help screen lists the keys with a help row, in the table order', () => {
    expect(helpRows().map(([k]) => k)).toEqual([
      'tab ← →',
      '↑ ↓ k j pgup pgdn',
      '/',
      'enter',
      'y',
      'r',
      's',
      'h',
      'e',
      'p',
      '?',
      'q ctrl-c',
    ])
    expect(writeKeys()).toEqual(['y', 'r', 's', 'h', 'e'])
  })
})
