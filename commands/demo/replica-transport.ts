/**
 * The demo replica's fake exclusive transport (the session only the elected replica may hold).
 * Split from replica.ts; the election that drives it stays there.
 */
import { EventEmitter } from 'node:events'
import { config } from './replica-config.js'
import { log } from './replica-log.js'

/**
 * A fake exclusive session (think: one WhatsApp Web login). It may be connected on one replica only,
 * so it connects in onLeader and disconnects in onFollower. `close()` plays a dropped session whose
 * reconnection gave up: the transport stays 'closed', the election hears reportDown(), and after
 * providerDownMs the leader yields so a standby can connect. `reopen()` plays a reconnection.
 */
export class FakeTransport extends EventEmitter {
  state: 'disconnected' | 'open' | 'closed' = 'disconnected'
  fence: number | null = null

  async connect(fence: number): Promise<void> {
    await new Promise((r) => setTimeout(r, 50)) // the handshake
    this.fence = fence // a real provider would hand the fence to the server, to refuse a stale session
    this.state = 'open'
    log('transport', { state: 'open', fence })
    this.emit('open')
  }

  async disconnect(): Promise<void> {
    if (this.state === 'disconnected') return
    this.state = 'disconnected'
    this.fence = null
    log('transport', { state: 'disconnected' })
  }

  close(): void {
    if (this.state !== 'open') return void log('transport', { state: this.state, note: 'close ignored: not connected here' })
    this.state = 'closed'
    log('transport', { state: 'closed', note: `leader yields in ${config.providerDownMs}ms unless it reopens` })
    this.emit('close')
  }

  reopen(): void {
    if (this.state !== 'closed') return
    this.state = 'open'
    log('transport', { state: 'open', note: 'reconnected' })
    this.emit('open')
  }
}
