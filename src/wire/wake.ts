/** The messages on a replica's wake channel (what grant_next and the admin scripts publish). */
import { parseBoundedJson } from './json.js'
import type { PushedGrant } from './types.js'

/**
 * A wake message: a grant as JSON (`{t, q, f, l, k, p, pi, g, e}`, grant_next), `<ticket>|<raw chat state key>` (poll now: a ticket
 * dropped), `-|<raw chat state key>` (a turn revoked: renew now to learn it) or `-|<raw lead key>` (a lead event).
 */
export function decodeWake(
  keys: { parse(raw: string): { kind: string; id: string } | null },
  message: string,
): { kind: 'chat' | 'lead'; key: string; ticket: number | null; grant?: PushedGrant } | null {
  if (message.startsWith('{')) {
    try {
      const m = parseBoundedJson(message) as {
        t?: string
        q?: string
        f?: string
        l?: number
        k?: string
        p?: string
        pi?: string
        g?: string
        e?: string
      }
      const parsed = keys.parse(String(m.k))
      const ticket = Number(m.t)
      const fence = Number(m.f)
      if (parsed?.kind !== 'chat' || !Number.isInteger(ticket) || !Number.isFinite(fence)) return null
      return {
        kind: 'chat',
        key: parsed.id,
        ticket,
        grant: {
          fence,
          previousHolder: m.p ? { replicaId: m.p, incarnation: m.pi ?? '' } : null,
          leaseMs: Number(m.l) || 0,
          ...(m.q ? { requestId: String(m.q) } : {}),
          ...(m.g && Number.isSafeInteger(Number(m.g)) ? { grantedAt: Number(m.g) } : {}),
          ...(m.e && Number.isSafeInteger(Number(m.e)) ? { enqueuedAt: Number(m.e) } : {}),
        },
      }
    } catch {
      return null
    }
  }
  const bar = message.indexOf('|')
  if (bar < 0) return null
  const parsed = keys.parse(message.slice(bar + 1))
  if (!parsed) return null
  if (parsed.kind === 'chat') {
    if (message.startsWith('-|')) return { kind: 'chat', key: parsed.id, ticket: null } // check what you hold
    const ticket = Number(message.slice(0, bar))
    return Number.isInteger(ticket) ? { kind: 'chat', key: parsed.id, ticket } : null
  }
  if (parsed.kind === 'lead') return { kind: 'lead', key: parsed.id, ticket: null }
  return null
}
