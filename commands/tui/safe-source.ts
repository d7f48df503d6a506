/**
 * The dashboard's view of its source: every string it reads from Redis (keys, replica ids, hosts,
 * flow names, event details, error lines) is shown escaped (../output/safe-text.ts) before the model
 * or any panel sees it, so nothing the dashboard draws can carry a raw control or bidi character.
 * Keys come back from the panels in that shown form; they are turned back into the exact key before
 * a read or an intervention, and the CLI line an intervention records is the one an operator types.
 */
import { fromVisible, safeCopy, terminalSafe } from '../output/safe-text.js'
import type { DashboardSource } from './source.js'

/** Errors quote keys: their message is shown escaped too. */
function safeError(err: unknown): never {
  if (err instanceof Error) err.message = terminalSafe(err.message, false)
  throw err
}

export function safeSource(source: DashboardSource): DashboardSource {
  const i = source.interventions
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
    interventions: {
      yieldProvider: (name, o) => i.yieldProvider(fromVisible(name), o).then((r) => safeCopy(r), safeError),
      releaseChat: (key, o) =>
        i
          .releaseChat(fromVisible(key), { ...o, ifIncarnation: o.ifIncarnation === null ? null : fromVisible(o.ifIncarnation) })
          .then((r) => safeCopy(r), safeError),
      skipTicket: (key, ticket, o) =>
        i.skipTicket(fromVisible(key), ticket, { ...o, ifIncarnation: fromVisible(o.ifIncarnation) }).then((r) => safeCopy(r), safeError),
    },
    close: () => source.close(),
  }
}
