/**
 * The demo's balancer: healthy traffic never moves an async conversation (the survey) to another
 * replica — such a move is a `notify` handover, a customer told the conversation was interrupted.
 * The checkpointed flows still spill, so turns are taken across replicas and those conversations resume.
 */
import { describe, expect, it } from 'vitest'
import { LoadBalancer, flowFor, pinned } from '../../commands/demo/balancer.js'

describe('demo load balancer', () => {
  it('keeps every survey chat on its replica while the replicas are healthy; other flows spill', () => {
    const lb = new LoadBalancer(30)
    const healthy = ['pod-a', 'pod-b', 'pod-c']
    const home = new Map<string, string>()
    let moved = { survey: 0, other: 0 }
    for (let i = 0; i < 20_000; i++) {
      const { chat } = lb.next()
      const to = lb.route(chat, healthy)!
      const first = home.get(chat) ?? (home.set(chat, to), to)
      if (to !== first) moved = pinned(chat) ? { ...moved, survey: moved.survey + 1 } : { ...moved, other: moved.other + 1 }
    }
    expect(flowFor('chat:2')).toBe('survey')
    expect(moved.survey).toBe(0)
    expect(moved.other).toBeGreaterThan(100)
  })

  it('a survey chat re-hashes onto the others when its replica is gone (the real handover)', () => {
    const lb = new LoadBalancer(30)
    const chat = 'chat:2'
    const home = lb.route(chat, ['pod-a', 'pod-b', 'pod-c'])!
    const others = ['pod-a', 'pod-b', 'pod-c'].filter((r) => r !== home)
    expect(others).toContain(lb.route(chat, others))
  })
})
