/** What `doctor` and the dashboard single out among the rows: queued tickets nobody will take, and leases held by the gone or the late. */
import type { ChatSnapshot, ReplicaSnapshot } from '../decode.js'
import { liveness } from '../health/liveness.js'
import { ticketState, type TicketState } from '../health/tickets.js'
import type { LeaseRow } from './lease.js'

export interface StaleTicketRow {
  key: string
  ticket: number
  replicaId: string
  incarnation: string
  state: Exclude<TicketState, 'alive'>
  waitedMs: number
}

/** Queued tickets of replicas that are gone, restarted or stopped polling (doctor, dashboard). */
export function staleTickets(chats: ChatSnapshot[], replicas: ReplicaSnapshot[], nowMs: number): StaleTicketRow[] {
  const live = liveness(replicas, nowMs)
  const out: StaleTicketRow[] = []
  for (const c of chats) {
    for (const t of c.tickets) {
      const state = ticketState(t, live, nowMs)
      if (state !== 'alive')
        out.push({
          key: c.key,
          ticket: t.ticket,
          replicaId: t.replicaId,
          incarnation: t.incarnation,
          state,
          waitedMs: nowMs - t.enqueuedAtMs,
        })
    }
  }
  return out
}

/** Leases of every kind whose holder no longer beats but Redis still honours (zombie holders). */
export function zombieLeases(rows: LeaseRow[]): LeaseRow[] {
  return rows.filter((r) => r.state === 'dead' || r.state === 'stale')
}

/** Leases whose holder beats but is late to renew them: frozen or partitioned (doctor, exporter). */
export function lateLeases(rows: LeaseRow[]): LeaseRow[] {
  return rows.filter((r) => r.state === 'late')
}
