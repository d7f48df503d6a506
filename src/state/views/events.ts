/**
 * Types of the entries of the event stream `P:events` (docs/redis-layout.md): what replicas log,
 * the operators' audit records, and `corrupt` for an entry the reader could not decode.
 */
export const EVENT_TYPES = [
  'replica-start',
  'replica-stop',
  'leader',
  'follower',
  'lead-released',
  'lease-lost',
  'handover',
  'server-changed',
  'intervention',
  'corrupt',
] as const
export type EventType = (typeof EVENT_TYPES)[number]
