/**
 * The demo's load balancer: it makes up inbound traffic and decides which replica gets each message.
 *
 * - Traffic: `rate` messages per second over `chats` chats (chat:1 … chat:C); the first tenth of the
 *   chats (at least one) are hot and get half of all messages. A seeded generator, so a run is
 *   repeatable.
 * - Routing: session affinity by chat (rendezvous hashing over the healthy replicas), as most load
 *   balancers in front of webhooks do; 5% of messages of the checkpointed flows (order, faq) spill to
 *   another replica, so turns really are taken across replicas and those conversations resume there.
 *   The async flow (survey) never spills while its replica is healthy: it cannot move, and a message
 *   of it on another replica is a `notify` handover — a customer told "our conversation was
 *   interrupted". A deployment that runs async flows pins their chats the same way. When a replica
 *   dies or is frozen, its chats re-hash onto the others — which is when conversations are handed
 *   over, and the only time the demo shows `notify`.
 */
import { createHash } from 'node:crypto'

/** mulberry32: small, seeded, good enough for traffic. */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Which flow a chat of the demo runs (every third chat runs the async survey). */
export function flowFor(chat: string): 'order' | 'faq' | 'survey' {
  const n = Number(/(\d+)$/.exec(chat)?.[1] ?? createHash('md5').update(chat).digest()[0])
  return (['order', 'faq', 'survey'] as const)[n % 3]!
}

/** An async conversation cannot move between replicas: its chat stays on its replica while that one is healthy. */
export const pinned = (chat: string): boolean => flowFor(chat) === 'survey'

function score(chat: string, replica: string): number {
  return createHash('md5').update(`${chat}\u0000${replica}`).digest().readUInt32BE(0)
}

export class LoadBalancer {
  readonly hot: number
  private readonly random: () => number
  private seq = 0

  constructor(
    readonly chats: number,
    seed = 42,
    readonly spill = 0.05,
  ) {
    this.hot = Math.max(1, Math.round(chats / 10))
    this.random = seeded(seed)
  }

  /** The next inbound message: which chat, a sequence number and a text. */
  next(): { chat: string; seq: number; text: string } {
    const n = this.random() < 0.5 ? 1 + Math.floor(this.random() * this.hot) : 1 + Math.floor(this.random() * this.chats)
    const seq = ++this.seq
    return { chat: `chat:${n}`, seq, text: `answer ${seq}` }
  }

  /** A message of this chat (demo hang sends one to the replica it hangs). */
  message(chat: string): { chat: string; seq: number; text: string } {
    const seq = ++this.seq
    return { chat, seq, text: `answer ${seq}` }
  }

  /** The replica that gets a message of this chat, among the healthy ones (null: none is healthy). */
  route(chat: string, healthy: string[]): string | null {
    if (healthy.length === 0) return null
    if (healthy.length > 1 && !pinned(chat) && this.random() < this.spill) return healthy[Math.floor(this.random() * healthy.length)]!
    let best = healthy[0]!
    let bestScore = -1
    for (const r of healthy) {
      const s = score(chat, r)
      if (s > bestScore) [best, bestScore] = [r, s]
    }
    return best
  }
}
