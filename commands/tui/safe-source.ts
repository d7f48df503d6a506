/**
 * The dashboard's view of its source: every string it reads from Redis (keys, replica ids, hosts,
 * flow names, event details, error lines) is shown escaped (../output/safe-text.ts) before the model
 * or any panel sees it, so nothing the dashboard draws can carry a raw control or bidi character.
 * Keys come back from the panels in that shown form; they are turned back into the exact key before
 * a read or an intervention, and the CLI line an intervention records is the one an operator types.
 */
import { fromVisible, safeCopy, terminalSafe } from '../output/safe-text.js'
import type { DashboardSource } from './source.js'
import type { Interventions } from './interventions.js'

/** Errors quote keys: their message is shown escaped too. */
function safeError(err: unknown): never {
  if (err instanceof Error) err.message = terminalSafe(err.message, false)
  throw err
}

/**
 * An intervention's arguments as the panels give them (shown form) back to the exact values: every
 * string, and every string option but `command` (the CLI line recorded in the audit stays as shown).
 */
function exactArgs(args: unknown[]): unknown[] {
  return args.map((a) => {
    if (typeof a === 'string') return fromVisible(a)
    if (a && typeof a === 'object' && !Array.isArray(a)) {
      return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, typeof v === 'string' && k !== 'command' ? fromVisible(v) : v]))
    }
    return a
  })
}

/** Every intervention, whatever the dashboard adds: exact arguments in, outcome text shown escaped. */
function safeInterventions(i: Interventions): Interventions {
  const out: Record<string, unknown> = {}
  for (const [name, f] of Object.entries(i) as Array<[string, (...a: unknown[]) => Promise<unknown>]>) {
    out[name] = (...args: unknown[]) => f.apply(i, exactArgs(args)).then((r) => safeCopy(r), safeError)
  }
  return out as unknown as Interventions
}

export function safeSource(source: DashboardSource): DashboardSource {
  return {
    get url() {
      return source.url
    },
    prefix: source.prefix,
    layout: source.layout,
    read: () => source.read().then((snap) => safeCopy(snap), safeError),
    chat: (key) => source.chat(fromVisible(key)).then((d) => safeCopy(d), safeError),
    commandsTotal: () => source.commandsTotal(),
    status: () => source.status(),
    interventions: safeInterventions(source.interventions),
    close: () => source.close(),
  }
}
