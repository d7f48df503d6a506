// Types of ./proxy.mjs (plain JavaScript, so that the campaign runs it without a build).

/** A TCP proxy between one replica and Redis that can cut, stall and slow its connections. */
export declare class ChaosProxy {
  constructor(upstreamPort: number)
  /** Its loopback port, once listening. */
  readonly port: number
  listen(): Promise<ChaosProxy>
  /** Drop every connection now and refuse new ones until restore(). */
  cut(): void
  /** Keep connections open but forward nothing (bytes are held, delivered on restore). */
  stall(): void
  /** Forward requests but drop every reply (the server runs what it is sent; the client hears nothing) until restore(). */
  eatReplies(): void
  /** Delay every chunk by `ms`, each way, in order. */
  slow(ms: number): void
  restore(): void
  /** Point at another server: existing connections are dropped. */
  switchUpstream(port: number): void
  close(): Promise<void>
}
