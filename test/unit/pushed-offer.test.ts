/**
 * When a pushed offer is used without the poll that takes it up (docs/turns.md, step 4a): only when it
 * is a grant of the ticket our take queued, seen on the server we know, and made after a call of ours
 * was answered on that server's clock; and for no longer than Redis runs it from that call or our own lease.
 */
import { describe, expect, it } from 'vitest'
import { monotonicNow } from '../../src/clock.js'
import { offerUse, ServerClock, type OfferContext } from '../../src/coordinator/pushed-offer.js'
import type { PushedGrant } from '../../src/wire/types.js'

/** A waiter whose latest call answered before the grant was sent `ago` ms ago (and an older one 50 ms before it). */
function setup(ago = 0) {
  const sentAt = monotonicNow() - ago
  const clock = new ServerClock()
  clock.note(sentAt - 50, 4_990_000, 3) // an older call
  clock.note(sentAt, 5_000_000, 3) // the latest answered before the grant
  clock.note(sentAt + 1, 5_000_500, 2) // another server's (an older generation): never a bound here
  const ctx = (over: Partial<OfferContext> = {}): OfferContext => ({
    requestId: '7',
    takenAt: 4_980,
    seenHere: true,
    generation: 3,
    clock,
    revokedSince: () => false,
    leaseMs: 3000,
    renewMarginMs: 100,
    ...over,
  })
  const grant = (over: Partial<PushedGrant> = {}): PushedGrant => ({
    fence: 42,
    previousHolder: null,
    leaseMs: 1000,
    requestId: '7',
    grantedAt: 5_000_001,
    enqueuedAt: 4_980,
    receivedIn: 3,
    receivedAt: sentAt + 5,
    ...over,
  })
  return { sentAt, clock, ctx, grant }
}

describe('offerUse', () => {
  it('uses an offer of our ticket from the latest call answered before it, for what Redis had left of it then, less the margin', () => {
    const { sentAt, ctx, grant } = setup()
    // Granted 10 ms after that call ran, for 2,990 ms: 3,000 ms from the call; taken up when a lease granted then would be renewed.
    const use = offerUse(grant({ grantedAt: 5_010_000, leaseMs: 2990 }), ctx())
    expect(use).toMatchObject({ since: sentAt, deadline: sentAt + 2900 })
    expect(use!.takeUpAt - sentAt).toBeCloseTo(1000, 6)
    // Granted between the two calls of this server: bounded by the older one.
    expect(offerUse(grant({ grantedAt: 4_995_000 }), ctx())).toMatchObject({ since: sentAt - 50, deadline: sentAt - 50 + 900 + 5 })
  })

  it('takes a short offer up at once: less than two thirds of our lease (less the margin) left', () => {
    const { sentAt, ctx, grant } = setup()
    const use = offerUse(grant(), ctx()) // a third of a lease (an older script's offer)
    expect(use).toMatchObject({ since: sentAt, deadline: sentAt + 900 })
    expect(use!.takeUpAt).toBeLessThanOrEqual(monotonicNow())
  })

  it('holds an offer longer than its own lease (an operator granted it) for its own lease only', () => {
    const { sentAt, ctx, grant } = setup()
    const use = offerUse(grant({ leaseMs: 5000 }), ctx())
    expect(use).toMatchObject({ deadline: sentAt + 2900 })
    expect(use!.takeUpAt - sentAt).toBeCloseTo(1000, 6)
  })

  it('asks Redis instead for a push of another take, one it cannot place after a call of its, from another server, or too late', () => {
    const { sentAt, ctx, grant } = setup()
    const refused: Array<[string, ReturnType<typeof offerUse>]> = [
      ['no grant time (an older script)', offerUse(grant({ grantedAt: undefined }), ctx())],
      ['no take time (an older script)', offerUse(grant({ enqueuedAt: undefined }), ctx())],
      ['another take of the same acquisition (the state was lost between)', offerUse(grant({ enqueuedAt: 4_981 }), ctx())],
      ['our take not known (sent again)', offerUse(grant(), ctx({ takenAt: null }))],
      ['another acquisition', offerUse(grant({ requestId: '8' }), ctx())],
      ['our ticket not seen on this server', offerUse(grant(), ctx({ seenHere: false }))],
      ['received while we knew another server', offerUse(grant({ receivedIn: 2 }), ctx())],
      ['received during an identity check', offerUse(grant({ receivedIn: -1 }), ctx())],
      ['granted before any call we know was answered', offerUse(grant({ grantedAt: 4_990_000 }), ctx())],
      ['only another generation answered before it', offerUse(grant(), ctx({ generation: 4 }))],
      ['received before the bounding call was sent', offerUse(grant({ receivedAt: sentAt - 1 }), ctx())],
      ['an operator revoked a turn of ours since', offerUse(grant(), ctx({ revokedSince: () => true }))],
      ['shorter than the margin', offerUse(grant({ leaseMs: 80 }), ctx())],
    ]
    expect(refused.filter(([, use]) => use !== null).map(([why]) => why)).toEqual([])
  })

  it('is too late to use once three quarters of it have passed since the bounding call; before that, a short one is taken up at once', () => {
    const old = setup(700)
    expect(offerUse(old.grant(), old.ctx())).toBeNull()
    const late = setup(600) // past half of the 900 usable, not past three quarters
    const use = offerUse(late.grant(), late.ctx())
    expect(use).toMatchObject({ since: late.sentAt, deadline: late.sentAt + 900 })
    expect(use!.takeUpAt).toBeGreaterThanOrEqual(late.sentAt + 600)
  })

  it('is too late to use once the bounding call is older than a late renewal (the turn would not read held)', () => {
    const { ctx, grant } = setup(1600) // a lease of 3,000: late past half a lease (1,500)
    expect(offerUse(grant({ grantedAt: 5_010_000, leaseMs: 2990 }), ctx())).toBeNull() // 2,900 usable: not three quarters gone
    const fresh = setup(1400)
    expect(offerUse(fresh.grant({ grantedAt: 5_010_000, leaseMs: 2990 }), fresh.ctx())).toMatchObject({ deadline: fresh.sentAt + 2900 })
  })
})
