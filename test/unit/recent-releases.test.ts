/**
 * The releases kept for a resend after a server change: a copy of what each names (not the lease),
 * capped at RECENT_RELEASES_CAP (the oldest dropped first, and counted), only those of the last
 * leaseMs, and on a Cluster only those the change reaches (the others kept for a later change).
 * On the in-memory hub: the list is the coordinator's own, whatever the backend.
 */
import { describe, expect, it } from 'vitest'
import { LeaseTable, RECENT_RELEASES_CAP } from '../../src/coordinator/lease-table.js'
import { MemoryBackend, MemoryCoordinationHub } from '../../src/testing/memory-hub.js'
import type { CoordinatorContext } from '../../src/coordinator/context.js'

function table(leaseMs = 60_000): LeaseTable {
  const core: CoordinatorContext = {
    backend: new MemoryBackend(new MemoryCoordinationHub()),
    replicaId: 'r',
    incarnation: 'i',
    leaseMs,
    minPollMs: 5,
    maxPollMs: 100,
    renewMarginMs: 100,
    state: 'running',
    stats: { turnsGranted: 0, leasesLost: 0, turnsShed: 0 },
    emit: () => {},
    logEvent: () => {},
    reportError: () => {},
  }
  return new LeaseTable(core)
}

describe('recent releases', () => {
  it('past the cap the oldest go, counted; a resend sends the newest and resets the count', async () => {
    const t = table()
    const extra = 37
    for (let i = 0; i < RECENT_RELEASES_CAP + extra; i++) await t.withdrawTicket(`chat:${i}`, i + 1, `req-${i}`)
    const sent: string[] = []
    const first = t.resendRecentReleases((target) => (sent.push(target.key), true))
    await first.done
    expect(first).toMatchObject({ count: RECENT_RELEASES_CAP, overCap: extra })
    expect(sent[0]).toBe(`chat:${extra}`)
    expect(sent.at(-1)).toBe(`chat:${RECENT_RELEASES_CAP + extra - 1}`)
    // The resend's own releases are the recent ones now, under the cap.
    const second = t.resendRecentReleases()
    await second.done
    expect(second).toMatchObject({ count: RECENT_RELEASES_CAP, overCap: 0 })
  })

  it('a change that reaches some releases sends those and keeps the others', async () => {
    const t = table()
    for (let i = 0; i < 10; i++) await t.withdrawTicket(`chat:${i}`, i + 1, `req-${i}`)
    const odd = (target: { key: string }) => Number(target.key.split(':')[1]) % 2 === 1
    const r = t.resendRecentReleases(odd)
    await r.done
    expect(r.count).toBe(5)
    // Kept: the 5 even ones, plus the 5 odd ones just sent again.
    expect(t.resendRecentReleases().count).toBe(10)
  })

  it('only the releases of the last leaseMs', async () => {
    const t = table(300)
    await t.withdrawTicket('chat:old', 1, 'req-old')
    await new Promise((r) => setTimeout(r, 350)) // the subject is time: the release is older than leaseMs
    await t.withdrawTicket('chat:new', 2, 'req-new')
    const keys: string[] = []
    await t.resendRecentReleases((target) => (keys.push(target.key), true)).done
    expect(keys).toEqual(['chat:new'])
  })
})
