/**
 * When a pushed offer is used without the poll that takes it up (docs/turns.md, step 4a): only when it
 * is a grant of the ticket our take queued, seen on the server we know, and made after a call of ours
 * was answered on that server's clock; and for no longer than Redis runs it or a third of our own lease.
 */
import { describe, expect, it } from 'vitest'
import { monotonicNow } from '../../src/clock.js'
import { offerUse, ServerClock, type OfferContext } from '../../src/coordinator/pushed-offer.js'
import type { PushedGrant } from '../../src/wire/types.js'

function setup() {
  const sentAt = monotonicNow()
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
    ...over,
  })
  return { sentAt, clock, ctx, grant }
}

describe('offerUse', () => {
  it('uses an offer of our ticket from the latest call answered before it: its length less the margin, taken up halfway', () => {
    const { sentAt, ctx, grant } = setup()
    expect(offerUse(grant(), sentAt + 5, ctx())).toEqual({ since: sentAt, deadline: sentAt + 900, takeUpAt: sentAt + 450 })
    // Granted between the two calls of this server: bounded by the older one.
    expect(offerUse(grant({ grantedAt: 4_995_000 }), sentAt + 5, ctx())).toMatchObject({ since: sentAt - 50 })
  })

  it('holds an offer longer than a third of its own lease (an operator granted it) for a third of its own lease only', () => {
    const { sentAt, ctx, grant } = setup()
    expect(offerUse(grant({ leaseMs: 5000 }), sentAt + 5, ctx())).toMatchObject({ deadline: sentAt + 900 })
  })

  it('asks Redis instead for a push of another take, one it cannot place after a call of its, from another server, or too late', () => {
    const { sentAt, ctx, grant } = setup()
    const refused: Array<[string, ReturnType<typeof offerUse>]> = [
      ['no grant time (an older script)', offerUse(grant({ grantedAt: undefined }), sentAt + 5, ctx())],
      ['no take time (an older script)', offerUse(grant({ enqueuedAt: undefined }), sentAt + 5, ctx())],
      ['another take of the same acquisition (the state was lost between)', offerUse(grant({ enqueuedAt: 4_981 }), sentAt + 5, ctx())],
      ['our take not known (sent again)', offerUse(grant(), sentAt + 5, ctx({ takenAt: null }))],
      ['another acquisition', offerUse(grant({ requestId: '8' }), sentAt + 5, ctx())],
      ['our ticket not seen on this server', offerUse(grant(), sentAt + 5, ctx({ seenHere: false }))],
      ['received while we knew another server', offerUse(grant({ receivedIn: 2 }), sentAt + 5, ctx())],
      ['received during an identity check', offerUse(grant({ receivedIn: -1 }), sentAt + 5, ctx())],
      ['granted before any call we know was answered', offerUse(grant({ grantedAt: 4_990_000 }), sentAt + 5, ctx())],
      ['only another generation answered before it', offerUse(grant(), sentAt + 5, ctx({ generation: 4 }))],
      ['received before the bounding call was sent', offerUse(grant(), sentAt - 1, ctx())],
      ['an operator revoked a turn of ours since', offerUse(grant(), sentAt + 5, ctx({ revokedSince: () => true }))],
      ['shorter than the margin', offerUse(grant({ leaseMs: 80 }), sentAt + 5, ctx())],
    ]
    expect(refused.filter(([, use]) => use !== null).map(([why]) => why)).toEqual([])
  })

  it('is too late to use once three quarters of it have passed since the bounding call; past half, it is taken up at once', () => {
    const sentAt = monotonicNow() - 700
    const clock = new ServerClock()
    clock.note(sentAt, 5_000_000, 3)
    const use = offerUse(
      { fence: 1, previousHolder: null, leaseMs: 1000, requestId: '7', grantedAt: 5_000_001, enqueuedAt: 4_980, receivedIn: 3 },
      sentAt + 5,
      {
        requestId: '7',
        takenAt: 4_980,
        seenHere: true,
        generation: 3,
        clock,
        revokedSince: () => false,
        leaseMs: 3000,
        renewMarginMs: 100,
      },
    )
    expect(use).toBeNull()
    const later = new ServerClock()
    later.note(sentAt + 100, 5_000_000, 3) // 600 ms ago: past half of the 900 usable, not past three quarters
    const late = offerUse(
      { fence: 1, previousHolder: null, leaseMs: 1000, requestId: '7', grantedAt: 5_000_001, enqueuedAt: 4_980, receivedIn: 3 },
      sentAt + 105,
      {
        requestId: '7',
        takenAt: 4_980,
        seenHere: true,
        generation: 3,
        clock: later,
        revokedSince: () => false,
        leaseMs: 3000,
        renewMarginMs: 100,
      },
    )
    expect(late).toMatchObject({ since: sentAt + 100, deadline: sentAt + 1000 })
    expect(late!.takeUpAt).toBeGreaterThanOrEqual(sentAt + 700)
  })
})
