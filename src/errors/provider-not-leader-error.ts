import { CoordinationError } from './coordination-error.js'

/** An action that needs the lead of `name` ran on a replica that does not hold it. */
export class ProviderNotLeaderError extends CoordinationError {
  readonly lead: string
  constructor(lead: string) {
    super('ERR_NOT_LEADER', `this replica does not lead ${JSON.stringify(lead)}`)
    this.lead = lead
  }
}
