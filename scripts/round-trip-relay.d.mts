// Types of ./round-trip-relay.mjs (plain JavaScript, so that bench/ runs it without a build).
export interface RoundTripRelay {
  /** redis://127.0.0.1:<relay port> (with the original's user, password and database) */
  readonly url: string
  /** Round trips counted so far (connection set-up and tear-down bursts left out). */
  roundTrips(): number
  close(): Promise<void>
}
export declare function roundTripRelay(url: string): Promise<RoundTripRelay>
/** Whether a burst of RESP commands a client sent (latin1 text) holds a command besides connection set-up. */
export declare function dataBurst(burst: string): boolean
