/**
 * Names as `-o name` prints them (`chat/chat:42`, `provider/provider:whatsapp`, `lock/invoice:run`,
 * `replica/pod-a`, `checkpoint/chat:9`…) are accepted back as arguments: the `kind/` head is dropped
 * where the kind is one the command takes, and a name of another kind is a usage error that says
 * which command takes it. A head that is no kind of ours (`foo/bar`) is part of the name. A key that
 * itself starts with a kind and a slash is written with its kind in front (`chat/chat/10`).
 */
import { InvalidArgumentError } from 'commander'

/** Every kind a listing's `-o name` prints, with a (read-only where there is one) command line that takes such a name. */
const KINDS = {
  chat: (k: string) => `chat inspect ${k}`,
  checkpoint: (k: string) => `checkpoint inspect ${k}`,
  handover: (k: string) => `handover inspect ${k}`,
  provider: (k: string) => `provider status ${k}`,
  scheduler: (k: string) => `provider status ${k}`,
  lead: (k: string) => `provider status ${k}`,
  lock: (k: string) => `lock release ${k} --dry-run`,
  replica: (k: string) => `replicas ls --replica ${k}`,
  event: () => 'events',
  context: (k: string) => `config use-context ${k}`,
} as const
export type NameKind = keyof typeof KINDS

/** The kinds of each argument. */
export const NAME_KINDS = {
  /** A chat key in a read command: a chat's checkpoint and handover marker are named by the same key. */
  chatRead: ['chat', 'checkpoint', 'handover'],
  /** A chat key in a command that changes the turn. */
  chat: ['chat'],
  checkpoint: ['checkpoint', 'chat'],
  handover: ['handover', 'chat'],
  lead: ['provider', 'scheduler', 'lead'],
  lock: ['lock'],
  replica: ['replica'],
} as const satisfies Record<string, readonly NameKind[]>

/** `value` without its `kind/` head when the kind is one of `kinds`; a usage error when it names another kind. */
export function fromName(value: string, kinds: readonly NameKind[], what: string): string {
  const slash = value.indexOf('/')
  if (slash <= 0) return value
  const head = value.slice(0, slash)
  if (!Object.prototype.hasOwnProperty.call(KINDS, head)) return value
  const rest = value.slice(slash + 1)
  if ((kinds as readonly string[]).includes(head)) return rest
  throw new InvalidArgumentError(
    `${value} names a ${head}, not ${what}: try botmesh-coord ${KINDS[head as NameKind](rest)} (a name that itself starts with "${head}/": ${kinds[0]}/${value})`,
  )
}

/** A commander argument parser for `fromName`. */
export const nameArg =
  (kinds: readonly NameKind[], what: string) =>
  (value: string): string =>
    fromName(value, kinds, what)
