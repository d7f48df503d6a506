/** Decoded state for the dashboard's tests: small builders of DashboardSnapshot parts. */
import type { ChatDetail, DashboardChat, DashboardSnapshot, LeadSnapshot, ReplicaSnapshot } from '../../src/index.js'

export const NOW = 1_800_000_000_000

export function replica(id: string, o: Partial<ReplicaSnapshot> & { turnsGranted?: number; beatAgo?: number } = {}): ReplicaSnapshot {
  const beat = o.beatAtMs ?? NOW - (o.beatAgo ?? 1000)
  return {
    replicaId: id,
    incarnation: o.incarnation ?? `${id}-inc-0123456789`,
    info: { host: 'host', pid: 100, version: '0.1.0', startedAt: NOW - 60_000, leaseMs: 15_000 },
    stats: { turnsGranted: o.turnsGranted ?? 0, waitingNow: 0, waitP99Ms: 12, leasesLost: 0, leadsHeld: 0, turnsHeld: 1, ...o.stats },
    leases: { held: [], waiting: [], more: 0 },
    beatAtMs: beat,
    expiresAtMs: beat + 15_000,
    clockSkewMs: 0,
    evictedIncarnation: null,
  }
}

export function lead(key: string, holder: string | null, o: Partial<LeadSnapshot> = {}): LeadSnapshot {
  return {
    key,
    fence: 1_700_000_000_000_001,
    holder: holder
      ? {
          replicaId: holder,
          incarnation: `${holder}-inc-0123456789`,
          expiresAtMs: NOW + 9000,
          sinceMs: NOW - 60_000,
          lastRenewalMs: NOW - 1000,
        }
      : null,
    previousHolder: null,
    lastHolder: null,
    releasedAtMs: null,
    lastHandoverMs: null,
    yieldRequest: null,
    candidates: [],
    ...o,
  }
}

export function chat(key: string, holder: string | null, waiting: string[] = [], o: Partial<DashboardChat> = {}): DashboardChat {
  return {
    chat: {
      key,
      fence: 1_700_000_000_000_042,
      holder: holder
        ? {
            replicaId: holder,
            incarnation: `${holder}-inc-0123456789`,
            ticket: 1,
            expiresAtMs: NOW + 8000,
            grantedAtMs: NOW - 3000,
            lastRenewalMs: NOW - 1000,
            waitedMs: 5,
          }
        : null,
      previousHolder: null,
      lastHolder: null,
      lastTicket: 1 + waiting.length,
      skippedTickets: 0,
      tickets: waiting.map((id, i) => ({
        ticket: 2 + i,
        replicaId: id,
        incarnation: `${id}-inc-0123456789`,
        deadlineMs: NOW + 10_000,
        enqueuedAtMs: NOW - 2000,
      })),
    },
    checkpoint: null,
    stuck: [],
    queueLength: waiting.length,
    oldestWaitMs: waiting.length ? 2000 : null,
    ...o,
  }
}

export function snapshot(o: Partial<DashboardSnapshot> = {}): DashboardSnapshot {
  return {
    nowMs: NOW,
    replicas: [replica('pod-a'), replica('pod-b')],
    providers: [
      lead('provider:wa', 'pod-a', { candidates: [{ replicaId: 'pod-b', incarnation: 'pod-b-inc-0123456789', deadlineMs: NOW + 5000 }] }),
    ],
    chats: [chat('chat:42', 'pod-a', ['pod-b'])],
    expiring: [
      { kind: 'chat', key: 'chat:42', replicaId: 'pod-a', fence: 1_700_000_000_000_042, expiresInMs: 8000 },
      { kind: 'lead', key: 'provider:wa', replicaId: 'pod-a', fence: 1_700_000_000_000_001, expiresInMs: 9000 },
    ],
    events: [
      {
        id: `${NOW - 5000}-0`,
        event: { type: 'leader', replicaId: 'pod-a', name: 'provider:wa', fence: 1_700_000_000_000_001, previous: null },
      },
    ],
    commands: 9,
    corrupt: [],
    ...o,
  }
}

export function chatDetail(snap: DashboardSnapshot, key: string): ChatDetail {
  const c = snap.chats.find((x) => x.chat.key === key)
  return { chat: c?.chat ?? null, checkpoint: null, checkpointTtlMs: null, handover: null, nowMs: snap.nowMs }
}

/** ink-testing-library frames without colours. */
export function strip(frame: string | undefined): string {
  // eslint-disable-next-line no-control-regex
  return (frame ?? '').replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '')
}
