/**
 * The demo's inbound traffic: `rate` messages per second made up by the load balancer (./balancer.ts)
 * and sent to a healthy replica over its IPC channel. A message no replica can take is counted as sent
 * and goes nowhere.
 */
import { LoadBalancer } from './balancer.js'
import type { DemoOptions } from './options.js'
import type { Replica } from './supervisor.js'

/** How often the traffic sends what its rate has accumulated. */
const TICK_MS = 50

export class Traffic {
  readonly balancer: LoadBalancer
  /** Messages made up so far, delivered or not. */
  sent = 0
  private readonly opts: Pick<DemoOptions, 'chats' | 'rate' | 'leaseMs'>
  private readonly replicas: Map<string, Replica>
  private timer: NodeJS.Timeout | null = null

  constructor(opts: Pick<DemoOptions, 'chats' | 'rate' | 'leaseMs'>, replicas: Map<string, Replica>) {
    this.opts = opts
    this.replicas = replicas
    this.balancer = new LoadBalancer(opts.chats)
  }

  start(): void {
    let credit = 0
    this.timer = setInterval(() => {
      credit += (this.opts.rate * TICK_MS) / 1000
      for (; credit >= 1; credit--) this.deliver()
    }, TICK_MS)
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
  }

  /** One message of this chat straight to this replica, past the load balancer (`demo hang`). */
  sendTo(r: Replica, chat: string): void {
    const msg = this.balancer.message(chat)
    this.sent++
    this.send(r, msg)
  }

  /** Healthy for the load balancer: running, and not sitting on messages for longer than a lease. */
  private healthy(): string[] {
    const now = Date.now()
    const ids: string[] = []
    for (const r of this.replicas.values()) {
      if (r.state !== 'running' || !r.child?.connected) continue
      const oldest = r.outstanding[0]
      if (oldest !== undefined && now - oldest > this.opts.leaseMs + 2000) continue // a failing health check
      ids.push(r.id)
    }
    return ids
  }

  private deliver(): void {
    const msg = this.balancer.next()
    const id = this.balancer.route(msg.chat, this.healthy())
    this.sent++
    if (!id) return
    this.send(this.replicas.get(id)!, msg)
  }

  private send(r: Replica, msg: { chat: string; seq: number; text: string }): void {
    r.outstanding.push(Date.now())
    r.child!.send({ type: 'message', ...msg }, undefined, undefined, () => {})
  }
}
