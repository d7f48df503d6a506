/** Redis URLs: the default, and the form that is safe to print. No I/O here. */
import { DEFAULTS } from './defaults.js'

export const DEFAULT_URL = DEFAULTS.url

/** A URL with its password replaced: safe to print, log, or put in an error. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString().replace(/\/$/, '')
  } catch {
    return url.replace(/\/\/([^@/]*)@/, '//***@')
  }
}
