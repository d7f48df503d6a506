// A TCP proxy between one replica and Redis that can cut, stall and slow its connections, and switch
// its upstream (a failover: the replica's address for Redis stays the same, the server behind it changes).
import { createServer, connect } from 'node:net'

export class ChaosProxy {
  constructor(upstreamPort) {
    this.upstreamPort = upstreamPort
    this.mode = 'ok' // 'ok' | 'cut' | 'stall'
    this.delayMs = 0
    this.pairs = new Set()
    this.server = createServer((c) => this.accept(c))
  }

  listen() {
    return new Promise((res, rej) => {
      this.server.once('error', rej)
      this.server.listen({ port: 0, host: '127.0.0.1' }, () => {
        this.port = this.server.address().port
        res(this)
      })
    })
  }

  accept(down) {
    down.setNoDelay(true)
    if (this.mode === 'cut') {
      down.destroy()
      return
    }
    const up = connect({ port: this.upstreamPort, host: '127.0.0.1' })
    up.setNoDelay(true)
    const pair = { down, up, held: [] }
    this.pairs.add(pair)
    const close = () => {
      this.pairs.delete(pair)
      down.destroy()
      up.destroy()
    }
    down.on('error', close).on('close', close)
    up.on('error', close).on('close', close)
    down.on('data', (b) => this.forward(pair, up, b))
    up.on('data', (b) => this.forward(pair, down, b))
  }

  forward(pair, to, buf) {
    if (this.mode === 'eat') {
      if (to !== pair.down) to.write(buf) // requests go through, replies are lost
      return
    }
    if (this.mode === 'stall') {
      pair.held.push([to, buf])
      return
    }
    if (this.delayMs > 0) {
      // Delay each chunk by delayMs, in order (a chunk never overtakes an earlier one).
      const at = performance.now() + this.delayMs
      const q = (pair.q ??= [])
      q.push([to, buf, at])
      if (!pair.timer) this.drain(pair)
      return
    }
    if (pair.q?.length) {
      pair.q.push([to, buf, 0])
      return
    }
    to.write(buf)
  }

  drain(pair) {
    pair.timer = null
    const q = pair.q
    while (q.length && q[0][2] <= performance.now()) {
      const [to, buf] = q.shift()
      if (!to.destroyed) to.write(buf)
    }
    if (q.length) pair.timer = setTimeout(() => this.drain(pair), Math.max(1, q[0][2] - performance.now()))
  }

  /** Drop every connection now and refuse new ones until restore(). */
  cut() {
    this.mode = 'cut'
    for (const p of [...this.pairs]) {
      p.down.destroy()
      p.up.destroy()
    }
    this.pairs.clear()
  }

  /** Keep connections open but forward nothing (bytes are held, delivered on restore). */
  stall() {
    this.mode = 'stall'
  }

  /** Forward requests but drop every reply (the server runs what it is sent; the client hears nothing) until restore(). */
  eatReplies() {
    this.mode = 'eat'
  }

  slow(ms) {
    this.delayMs = ms
  }

  restore() {
    const wasStall = this.mode === 'stall'
    this.mode = 'ok'
    this.delayMs = 0
    if (wasStall) {
      for (const p of this.pairs) {
        for (const [to, buf] of p.held.splice(0)) if (!to.destroyed) to.write(buf)
      }
    }
  }

  /** Point at another server: existing connections are dropped (the client reconnects to the new one). */
  switchUpstream(port) {
    this.upstreamPort = port
    for (const p of [...this.pairs]) {
      p.down.destroy()
      p.up.destroy()
    }
    this.pairs.clear()
  }

  close() {
    for (const p of [...this.pairs]) {
      p.down.destroy()
      p.up.destroy()
    }
    this.pairs.clear()
    return new Promise((r) => this.server.close(() => r()))
  }
}
