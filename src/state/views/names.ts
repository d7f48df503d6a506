/** How the CLI resolves the lead name an operator types (`provider status whatsapp`) to the names in Redis. */

/** `whatsapp` → `provider:whatsapp`; a name that already starts with `provider:` is kept. */
export function providerLeadName(name: string): string {
  return name.startsWith('provider:') ? name : `provider:${name}`
}

/**
 * The lead names an operator may mean, most likely first: a name with a colon is exact
 * (`scheduler:report`, `provider:whatsapp`); a bare `whatsapp` means `provider:whatsapp`, or a lead
 * called exactly `whatsapp` (a tryLead name without a colon) — so every lead name is reachable.
 */
export function leadNameCandidates(name: string): string[] {
  return name.includes(':') ? [name] : [providerLeadName(name), name]
}
