/**
 * The dashboard's screen state (commands/tui/dashboard-state.ts): what keys and finished interventions
 * do to it, and that a change to nothing leaves the very same state (React skips the render).
 */
import { describe, expect, it } from 'vitest'
import { initialState, reduce, type DashboardAction, type DashboardState } from '../../commands/tui/dashboard-state.js'

const after = (...actions: DashboardAction[]): DashboardState => actions.reduce(reduce, initialState())

describe('dashboard state', () => {
  it('a change to nothing returns the same state', () => {
    const s = initialState()
    expect(reduce(s, { type: 'say', message: null })).toBe(s)
    expect(reduce(s, { type: 'back' })).toBe(s)
    expect(reduce(s, { type: 'done' })).toBe(s)
  })

  it('help goes back to the view it was opened from', () => {
    const s = after({ type: 'open-chat', key: 'chat:42' }, { type: 'open-help', from: 'detail' })
    expect(s.view).toBe('help')
    expect(reduce(s, { type: 'close-help' }).view).toBe('detail')
  })

  it('opening a chat selects its first ticket; the ticket moves within the tickets shown', () => {
    let s = after({ type: 'open-chat', key: 'chat:42' })
    expect([s.view, s.detailKey, s.ticketIndex]).toEqual(['detail', 'chat:42', 0])
    s = reduce(s, { type: 'ticket', step: -1, count: 3 })
    expect(s.ticketIndex).toBe(0)
    for (let i = 0; i < 5; i++) s = reduce(s, { type: 'ticket', step: 1, count: 3 })
    expect(s.ticketIndex).toBe(2)
    expect(reduce(s, { type: 'ticket', step: -1, count: 2 }).ticketIndex).toBe(0) // fewer tickets now: from the last shown
    expect(reduce({ ...s, ticketIndex: 0 }, { type: 'ticket', step: 1, count: 0 }).ticketIndex).toBe(0)
  })

  it('the filter is typed, erased, applied and cleared', () => {
    const typed = after({ type: 'edit-filter' }, ...[...'pod-bx'].map((input) => ({ type: 'type-filter', input }) as const), {
      type: 'erase-filter',
    })
    expect([typed.filter, typed.editingFilter]).toEqual(['pod-b', true])
    const applied = reduce(typed, { type: 'apply-filter' })
    expect([applied.filter, applied.editingFilter]).toEqual(['pod-b', false])
    expect(reduce(applied, { type: 'clear-filter' }).filter).toBe('')
  })

  it('a prompt runs (busy with its command) or closes with a message', () => {
    const asked = after({ type: 'ask', verb: 'yield', target: 'yield provider:wa' })
    const running = reduce(asked, { type: 'run', command: 'provider yield provider:wa' })
    expect([running.confirmAsk, running.busy]).toEqual([null, 'provider yield provider:wa'])
    expect(reduce(running, { type: 'done' }).busy).toBeNull()
    const cancelled = reduce(asked, { type: 'close-prompt', message: { text: 'cancelled: nothing done', tone: 'info' } })
    expect([cancelled.confirmAsk, cancelled.message?.text]).toEqual([null, 'cancelled: nothing done'])
  })

  it('the replay time is typed from empty and ends', () => {
    const s = after({ type: 'start-jump' }, { type: 'type-jump', input: '1' }, { type: 'type-jump', input: '2' }, { type: 'erase-jump' })
    expect(s.jumpText).toBe('1')
    expect(reduce(s, { type: 'end-jump' }).jumpText).toBeNull()
  })
})
