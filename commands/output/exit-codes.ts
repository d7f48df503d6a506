/** Documented exit codes of botmesh-coord (README: "Exit codes"). */
export const EXIT = {
  ok: 0,
  /** doctor found something unsafe; a write command found the state changed since you looked (--if-fence). */
  unsafe: 1,
  usage: 2,
  notFound: 3,
  unreachable: 4,
  auth: 5,
  /** the state changed since the operator looked (--if-fence / --if-incarnation): nothing was done */
  conflict: 6,
  /** refused: read-only mode, no confirmation, not a terminal without --yes */
  refused: 7,
  /** a corrupt value, or a schema newer than this release */
  corrupt: 8,
  /** an intervention was sent and Redis did not answer in time: it may have been applied or not (the line says how to check) */
  unknown: 9,
  internal: 70,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]
