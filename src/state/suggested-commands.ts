/**
 * The command lines the library suggests to an operator (a finding's `fix`, a diagnosis), spelled
 * once: a rename of a CLI command or flag is one edit here, and every suggestion pinned to the fence
 * seen pins it the same way. Keys are quoted for a POSIX shell, so a suggestion can be pasted as is.
 */
import type { LeaseKindLabel } from './decode.js'

/** Quote a key for a shell command line when it needs it. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`
}

/** ` --if-fence N`, or nothing when no fence was seen: an intervention changes nothing once the grant moved on. */
function fencePin(fence: number | null): string {
  return fence !== null ? ` --if-fence ${fence}` : ''
}

/**
 * The intervention that takes a held lease away, pinned to the fence seen: if the grant moved on
 * meanwhile (another operator, an expiry), it changes nothing and says who holds it now.
 */
export function pinnedRevoke(kind: LeaseKindLabel, key: string, fence: number | null): string {
  const pin = fencePin(fence)
  if (kind === 'chat') return `botmesh-coord chat release ${shellWord(key)}${pin}`
  if (kind === 'lock') return `botmesh-coord lock release ${shellWord(key)}${pin}`
  return `botmesh-coord provider yield ${shellWord(key)} --force${pin}`
}

/** Drop one queued ticket of a chat, pinned to the chat's fence (the ticket number alone cannot tell a new grant). */
export function chatSkipCommand(key: string, ticket: number, fence: number | null): string {
  return `botmesh-coord chat skip ${shellWord(key)} ${ticket}${fencePin(fence)}`
}

/** Every replica, the gone and evicted ones too: where to look at a holder that stopped renewing. */
export const REPLICAS_ALL_COMMAND = 'botmesh-coord replicas ls --all'

/** The deployment's checks (maxmemory-policy, persistence, …). */
export const DOCTOR_COMMAND = 'botmesh-coord doctor'
