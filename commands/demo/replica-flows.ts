/**
 * The demo replica's conversations: the checkpointed flows (order, faq), the survey written as async
 * code that cannot move, and the fake outbound send they answer through. Split from replica.ts,
 * which takes the turns and decides which conversation a message continues.
 */
import { createHash } from 'node:crypto'
import { type Json, type Turn } from '../lib.js'
import { config } from './replica-config.js'
import { log } from './replica-log.js'

/**
 * A flow: a fixed list of questions; each inbound message answers the one the flow waits on.
 * `persistent` flows always checkpoint; the others are forwarded with an ephemeral checkpoint
 * (handover `flows: 'forward'`): it expires ephemeralTtlMs after its last write and carries the flow's
 * fingerprint, so a replica running a changed flow does not resume it at the wrong step.
 */
export interface Flow {
  name: string
  persistent: boolean
  questions: string[]
}

export const FLOWS: Record<string, Flow> = {
  order: { name: 'order', persistent: true, questions: ['What would you like?', 'How many?', 'Delivery address?', 'Confirm (yes/no)?'] },
  faq: { name: 'faq', persistent: false, questions: ['Which topic?', 'Did that answer help?'] },
}

export function fingerprint(flow: Flow): string {
  return createHash('sha256')
    .update(JSON.stringify([config.deployed[flow.name] ?? config.flowVersion, flow]))
    .digest('hex')
    .slice(0, 12)
}

/** A flow this replica runs for a chat: where it waits, its state, and the checkpoint revision to chain on. */
export interface FlowRun {
  kind: 'flow'
  flow: Flow
  /** Index of the question the flow waits on. */
  step: number
  state: { [k: string]: Json }
  revision: number | null
}

/**
 * An async conversation: its stack and closures cannot be serialized, so only this replica can go on
 * with it. While it waits it leaves a handover marker; a replica that gets the chat instead takes the
 * marker and applies the 'notify' fallback.
 */
export interface AsyncRun {
  kind: 'async'
  name: string
  /** Deliver the next message; resolves once the conversation waits again or has ended. */
  deliver(text: string, turn: Turn): Promise<void>
  done: boolean
  markerSet: boolean
}

/** The survey, written as plain async code: `ask` sends a question and waits for the next message. */
export async function survey(ask: (q: string) => Promise<string>, say: (text: string) => void): Promise<void> {
  const score = await ask('How would you rate us, 1 to 5?')
  const comment = await ask(`You gave us ${score}. Anything to add?`)
  say(`Thank you! (${score}, ${comment.length} characters)`)
}

export function startAsync(name: string, fn: typeof survey): AsyncRun {
  let turn: Turn | null = null
  let resume: ((text: string) => void) | null = null
  let settled: (() => void) | null = null
  const say = (text: string) => send(turn!, text)
  const ask = (q: string) =>
    new Promise<string>((resolve) => {
      say(q)
      resume = resolve
      settled?.() // the conversation waits again: the handler may release the turn
    })
  const run: AsyncRun = {
    kind: 'async',
    name,
    done: false,
    markerSet: false,
    deliver(text, t) {
      turn = t
      return new Promise<void>((resolve) => {
        settled = resolve
        if (resume) {
          const r = resume
          resume = null
          r(text)
        } else {
          fn(ask, say)
            .catch((err: unknown) => log('conversation-error', { name, error: String(err) }))
            .finally(() => {
              run.done = true
              settled?.()
            })
        }
      })
    },
  }
  return run
}

/** The fake outbound send: only while the turn is held (a frozen replica must not answer out of order). */
export let sent = 0
export function send(turn: Turn, _text: string): void {
  turn.assertHeld()
  sent++ // a real provider would send `_text` here, passing turn.fence along
}
