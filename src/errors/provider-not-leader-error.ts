import { LeaseLostError } from './lease-lost-error.js'

/**
 * An action that needs the lead of `name` ran on a replica that does not hold it. It is a
 * LeaseLostError (reason `'not-leader'`, its own code `ERR_NOT_LEADER`): whether a frozen leader's
 * send finds its lead past its deadline (LeaseLostError) or already dropped by the library's timers
 * (this error) depends only on which ran first after the freeze, so one `catch` of LeaseLostError
 * handles both.
 */
export class ProviderNotLeaderError extends LeaseLostError {
  readonly lead: string
  constructor(lead: string) {
    super(lead, 'not-leader', `this replica does not lead ${JSON.stringify(lead)}`, 'ERR_NOT_LEADER')
    this.lead = lead
  }
}
