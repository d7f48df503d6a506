/**
 * One replica of the demo bot: a small but real bot runtime on botmesh-coord, and the documented
 * example of how a runtime uses the library. `botmesh-coord demo` starts N of these; you can also run
 * one by hand (it then generates its own traffic):
 *
 *   node dist/commands/demo/replica.js --url redis://127.0.0.1:6379 --prefix demo --replica-id r1
 *
 * What a runtime does, in the order this file shows it:
 *   1. one RedisStore and one coordinator on it (same client, same prefix on every replica);
 *   2. an exclusive transport (`provider:demo`) connected only on the elected replica (campaign);
 *   3. each inbound message: take the chat's turn, adopt another replica's conversation if the chat
 *      comes from elsewhere (checkpoint → resume, handover marker → 'notify'), run one step of the
 *      conversation writing a compare-and-set checkpoint fenced by the turn, release the turn;
 *   4. a periodic job that runs once per period across the replicas, under a fenced lock;
 *   5. an orderly stop on SIGTERM/SIGINT: coordinator.stop() releases everything it holds.
 *
 * Inbound traffic comes from the demo orchestrator over the Node IPC channel — the orchestrator plays
 * the load balancer and decides which replica gets each message. Control messages on the same channel
 * (or SIGUSR1 / SIGUSR2) close and reopen the fake transport. One JSON line per notable thing goes to
 * stdout, which the orchestrator points at this replica's log file.
 *
 * Beside this file: replica-config.ts (the flags), replica-log.ts (the JSON lines and reports),
 * replica-transport.ts (the fake session) and replica-flows.ts (the conversations and the send).
 */
import { flowFor } from './balancer.js'
import { config } from './replica-config.js'
import { FLOWS, fingerprint, send, sent, startAsync, survey, type AsyncRun, type FlowRun } from './replica-flows.js'
import { log, report, setReplicaName } from './replica-log.js'
import { FakeTransport } from './replica-transport.js'
import {
  CheckpointConflictError,
  CoordinationUnavailableError,
  LeaseLostError,
  ProviderNotLeaderError,
  loadWriteSide,
  type Turn,
} from '../lib.js'

const { RedisStore } = await loadWriteSide()

// ------------------------------------------------------------------ 1. the store and the coordinator

const store = new RedisStore({ url: config.url, prefix: config.prefix, layout: config.layout })
const coordinator = store.coordinator({ replicaId: config.replicaId, leaseMs: config.leaseMs })
setReplicaName(coordinator.replicaId)
const me = { replicaId: coordinator.replicaId, incarnation: coordinator.incarnation }

coordinator.on('coordination:leader', (e) => log('leader', { name: e.name, fence: e.fence, previous: e.previousHolder?.replicaId ?? null }))
coordinator.on('coordination:follower', (e) => log('follower', { name: e.name, reason: e.reason }))
coordinator.on('coordination:lease-lost', (e) => {
  log('lease-lost', { key: e.key, kind: e.kind, fence: e.fence, reason: e.reason })
  report({ type: 'lease-lost', key: e.key, kind: e.kind, reason: e.reason })
})
coordinator.on('coordination:handover', (e) => {
  log('handover', { key: e.key, name: e.name, outcome: e.outcome, from: e.from ?? null })
  report({ type: 'handover', key: e.key, name: e.name, outcome: e.outcome, from: e.from ?? null })
})
coordinator.on('coordination:warning', (w: { code: string; message: string }) => log('warning', { code: w.code, message: w.message }))

// ------------------------------------------------------------------ 2. the exclusive transport

// The session itself is FakeTransport (replica-transport.ts); the election that drives it is here.
const transport = new FakeTransport()
const election = coordinator.campaign('provider:demo', {
  onLeader: async (lead) => {
    await transport.connect(lead.fence)
  },
  onFollower: async () => {
    await transport.disconnect() // called BEFORE the lead is released on a yield: no two sessions at once
  },
  providerDownMs: config.providerDownMs,
  sitOutMs: config.sitOutMs,
})
transport.on('close', () => election.reportDown())
transport.on('open', () => election.reportUp())
// election.ready: this replica leads and onLeader has resolved (the session is connected).
election.ready.then(
  () => log('transport', { state: 'ready', fence: election.fence }),
  () => {}, // stopped before it ever led
)

/**
 * Something only the session's holder may send (the digest below): election.assertLeader() throws
 * ProviderNotLeaderError on a standby, and LeaseLostError once the lead's local deadline passed
 * (ProviderNotLeaderError is a LeaseLostError: tested first, to tell a standby's refusal apart).
 */
function sendOverTransport(what: string): 'sent' | 'not-leader' | 'lead-lost' {
  try {
    election.assertLeader()
  } catch (err) {
    if (err instanceof ProviderNotLeaderError) return 'not-leader'
    if (err instanceof LeaseLostError) return 'lead-lost'
    throw err
  }
  log('transport', { state: transport.state, sent: what, fence: election.fence })
  return 'sent'
}

// ------------------------------------------------------------------ 3. conversations

// The flows, the survey and the outbound send are in replica-flows.ts; here, what this replica holds.

/** Conversations this replica holds in memory, by chat. Dropped when another replica served the chat since. */
const conversations = new Map<string, FlowRun | AsyncRun>()

/** Which conversation a chat starts when idle: a fixed mix, so every kind is always in the traffic. */

/** Some work inside a step (a `.do()`), abandoned the moment the turn is lost. */
async function work(turn: Turn, ms: number): Promise<void> {
  await new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms)
    turn.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true })
  })
  turn.assertHeld()
}

// ------------------------------------------------------------------ 3b. one inbound message

interface Inbound {
  chat: string
  seq: number
  text: string
}

/**
 * The chat came from elsewhere (another replica, or an earlier incarnation of this one): take over
 * its conversation. Returns the conversation to continue, null to start fresh, or 'consumed' when a
 * fallback already answered the message.
 */
async function adopt(turn: Turn, chat: string): Promise<FlowRun | 'consumed' | null> {
  // An async conversation cannot move: apply its fallback once (take = read and delete in one step).
  const marker = await store.takeHandoverMarker(chat)
  if (marker) {
    send(turn, 'Sorry, our conversation was interrupted. Please start again.')
    coordinator.reportHandover({ key: chat, name: marker.name, outcome: 'notify', from: marker.replicaId })
    return 'consumed'
  }
  const cp = await store.getCheckpoint(chat)
  if (!cp) return null
  const flow = FLOWS[cp.flow]
  const step = flow ? flow.questions.indexOf(String(cp.step)) : -1
  if (!flow || step < 0 || (cp.ephemeral && cp.ephemeral.fingerprint !== fingerprint(flow))) {
    // A flow changed under a rolling deploy: do not resume it at the wrong step.
    await store.clearCheckpointIf(chat, cp.revision, { fence: turn.fence })
    coordinator.reportHandover({ key: chat, name: cp.flow, outcome: 'changed', from: cp.owner?.replicaId ?? null })
    return null
  }
  if (cp.owner?.incarnation !== me.incarnation) {
    coordinator.reportHandover({ key: chat, name: cp.flow, outcome: 'resumed', from: cp.owner?.replicaId ?? null })
  }
  return { kind: 'flow', flow, step, state: (cp.state ?? {}) as FlowRun['state'], revision: cp.revision }
}

/** Write the flow's checkpoint: compare-and-set on the revision, fenced by the turn. */
async function checkpoint(turn: Turn, chat: string, run: FlowRun): Promise<void> {
  run.revision = await store.setCheckpointIf(
    chat,
    {
      flow: run.flow.name,
      step: run.flow.questions[run.step]!,
      state: run.state,
      owner: { ...me, fence: turn.fence },
      ...(run.flow.persistent ? {} : { ephemeral: { ttlMs: config.ephemeralTtlMs, fingerprint: fingerprint(run.flow) } }),
    },
    run.revision,
  )
}

/** One step of a flow: the message answers the question it waits on; ask the next one or finish. */
async function stepFlow(turn: Turn, chat: string, run: FlowRun, msg: Inbound): Promise<string> {
  run.state[`a${run.step}`] = msg.text
  await work(turn, 20 + (msg.seq % 5) * 20)
  if (run.step + 1 < run.flow.questions.length) {
    run.step++
    send(turn, run.flow.questions[run.step]!)
    await checkpoint(turn, chat, run)
    return run.flow.questions[run.step]!
  }
  send(turn, 'All done, thank you!')
  conversations.delete(chat)
  // Fenced like the writes: false when a newer owner's row is there, or this turn was taken away.
  if (run.revision !== null) await store.clearCheckpointIf(chat, run.revision, { fence: turn.fence })
  return 'done'
}

/** Enter the chat's conversation with this message. */
async function enter(turn: Turn, chat: string): Promise<{ flow: string; step: string }> {
  const kind = flowFor(chat)
  if (kind === 'survey') {
    const run = startAsync('survey', survey)
    conversations.set(chat, run)
    return { flow: 'survey', step: await continueAsync(turn, chat, run, '') }
  }
  const flow = FLOWS[kind]!
  const run: FlowRun = { kind: 'flow', flow, step: 0, state: {}, revision: null }
  conversations.set(chat, run)
  send(turn, flow.questions[0]!)
  // With coordination a flow is checkpointed as soon as it is entered: even its first question survives a move.
  await checkpoint(turn, chat, run)
  return { flow: flow.name, step: flow.questions[0]! }
}

async function continueAsync(turn: Turn, chat: string, run: AsyncRun, text: string): Promise<string> {
  await run.deliver(text, turn)
  turn.assertHeld()
  if (run.done) {
    conversations.delete(chat)
    if (run.markerSet) await store.clearHandoverMarker(chat, { incarnation: me.incarnation }) // the second write
    return 'done'
  }
  if (!run.markerSet) {
    // The first write: it waits now, and only this process can continue it.
    await store.setHandoverMarker(chat, { name: run.name, ...me, ttlMs: config.markerTtlMs })
    run.markerSet = true
  }
  return 'waiting'
}

const counters = { handled: 0, failed: 0 }

/**
 * `demo hang r1 [chat]`: the next message this replica handles (of that chat, or of any) hangs while
 * it holds the turn — a handler awaiting an API that never answers. The coordinator still renews the
 * turn, so it never clears itself; it ends only when the turn is lost (an operator's `chat release`
 * revokes it: turn.signal aborts).
 */
let hangNext: string | null = null
function hang(turn: Turn, chat: string): Promise<never> {
  log('hang', { chat, fence: turn.fence, ticket: turn.ticket })
  report({ type: 'hung', chat, fence: turn.fence })
  return new Promise<never>((_resolve, reject) => {
    const lost = () => reject(new LeaseLostError(chat, 'revoked'))
    if (turn.signal.aborted) lost()
    else turn.signal.addEventListener('abort', lost, { once: true })
  })
}

async function handle(msg: Inbound): Promise<void> {
  const { chat } = msg
  let turn: Turn
  try {
    turn = await coordinator.acquireTurn(chat, { waitMs: config.turnWaitMs })
  } catch (err) {
    counters.failed++
    log('no-turn', { chat, seq: msg.seq, reason: err instanceof CoordinationUnavailableError ? err.reason : String(err) })
    report({ type: 'handled', chat, seq: msg.seq, ok: false })
    return
  }
  try {
    if (hangNext !== null && (hangNext === '*' || hangNext === chat)) {
      hangNext = null
      await hang(turn, chat)
    }
    let outcome: { flow: string; step: string } | null = null
    if (turn.previousHolder?.incarnation !== me.incarnation) {
      // Someone else held this chat since we last did: what we hold in memory for it is stale.
      conversations.delete(chat)
      const adopted = await adopt(turn, chat)
      if (adopted === 'consumed') outcome = { flow: 'fallback', step: 'notify' }
      else if (adopted) conversations.set(chat, adopted)
    }
    if (!outcome) {
      const current = conversations.get(chat)
      if (!current) outcome = await enter(turn, chat)
      else if (current.kind === 'flow') outcome = { flow: current.flow.name, step: await stepFlow(turn, chat, current, msg) }
      else outcome = { flow: current.name, step: await continueAsync(turn, chat, current, msg.text) }
    }
    counters.handled++
    log('message', { chat, seq: msg.seq, fence: turn.fence, ticket: turn.ticket, waitedMs: Math.round(turn.waitedMs), ...outcome })
    report({ type: 'handled', chat, seq: msg.seq, ok: true, fence: turn.fence })
  } catch (err) {
    counters.failed++
    conversations.delete(chat) // a lost turn drops the in-memory conversation; the checkpoint stays for the new owner
    if (err instanceof CheckpointConflictError) log('superseded', { chat, seq: msg.seq, fence: turn.fence, conflict: err.conflict })
    else if (err instanceof LeaseLostError) log('turn-lost', { chat, seq: msg.seq, fence: turn.fence, reason: err.reason })
    else log('error', { chat, seq: msg.seq, error: err instanceof Error ? err.message : String(err) })
    report({ type: 'handled', chat, seq: msg.seq, ok: false })
  } finally {
    await turn.release()
  }
}

/** Messages of one chat are handled one after another here too (the runtime's per-chat queue). */
const chains = new Map<string, Promise<void>>()
let inFlight = 0
function receive(msg: Inbound): void {
  if (stopping) return
  inFlight++
  const next = (chains.get(msg.chat) ?? Promise.resolve()).then(() => handle(msg)).finally(() => inFlight--)
  chains.set(msg.chat, next)
  void next.finally(() => {
    if (chains.get(msg.chat) === next) chains.delete(msg.chat)
  })
}

// ------------------------------------------------------------------ 4. a periodic job under a fenced lock

/**
 * Runs once per period across all replicas: whoever takes `job:digest` first runs it, and leaves the
 * lock to expire at the end of the period so nobody runs it again in the same period. The fence grows
 * with every acquisition: a store that keeps the highest fence it saw refuses a late, frozen writer.
 */
let jobLock: { token: string; fence: number } | null = null
async function digestJob(): Promise<void> {
  try {
    const lock = await store.acquireLockFenced('job:digest', Math.max(1000, config.jobEveryMs - 500))
    if (!lock) return
    jobLock = lock
    await new Promise((r) => setTimeout(r, 200)) // the work
    // Before publishing, check the lock is still ours (renewing it) — the fence travels with the result.
    const stillHeld = await store.renewLock('job:digest', lock.token, Math.max(1000, config.jobEveryMs - 500))
    // Published over the exclusive session: only where it is connected (a standby says so instead).
    const transportSend = stillHeld ? sendOverTransport('digest') : 'lock-lost'
    log('digest', { fence: lock.fence, published: stillHeld, transport: transportSend, handled: counters.handled, sent })
  } catch (err) {
    log('digest-error', { error: err instanceof Error ? err.message : String(err) })
  }
}

// ------------------------------------------------------------------ 5. control and an orderly stop

let stopping = false
async function shutdown(why: string): Promise<void> {
  if (stopping) return
  stopping = true
  log('stopping', { why })
  clearInterval(jobTimer)
  if (ownTraffic) clearInterval(ownTraffic)
  await election.stop() // step down first (the transport disconnects) and stop standing while we drain
  const deadline = Date.now() + 3000
  while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  if (jobLock) await store.releaseLock('job:digest', jobLock.token).catch(() => false)
  await coordinator.stop() // steps down (onFollower 'stopped'), releases turns and leads, removes the heartbeat
  await store.close()
  log('stopped', { handled: counters.handled, failed: counters.failed })
  if (process.connected) process.disconnect()
  process.exit(0)
}

process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGUSR1', () => transport.close())
process.on('SIGUSR2', () => transport.reopen())

type Control =
  | { type: 'message'; chat: string; seq: number; text: string }
  | { type: 'transport'; open: boolean }
  | { type: 'hang'; chat: string | null }
  | { type: 'stop' }

process.on('message', (m: Control) => {
  if (m.type === 'message') receive(m)
  else if (m.type === 'hang') hangNext = m.chat ?? '*'
  else if (m.type === 'transport') {
    if (m.open) transport.reopen()
    else transport.close()
  } else if (m.type === 'stop') void shutdown('orchestrator')
})
// The orchestrator went away (killed): no load balancer, no reason to run; stop in order.
process.on('disconnect', () => void shutdown('orchestrator gone'))

// ------------------------------------------------------------------ start

let ownTraffic: NodeJS.Timeout | null = null
let jobTimer: NodeJS.Timeout | undefined = undefined
try {
  await coordinator.start()
} catch (err) {
  log('start-failed', { error: err instanceof Error ? err.message : String(err) })
  process.exit(4)
}
log('started', { incarnation: me.incarnation, pid: process.pid, leaseMs: config.leaseMs, prefix: config.prefix })
report({
  type: 'ready',
  replicaId: me.replicaId,
  incarnation: me.incarnation,
  pid: process.pid,
  fingerprints: Object.fromEntries(Object.values(FLOWS).map((f) => [f.name, fingerprint(f)])),
})
jobTimer = setInterval(() => void digestJob(), config.jobEveryMs)
void digestJob()

if (!process.send) {
  // Run by hand: no load balancer in front, so make up traffic (chat:1 and chat:2 are hot).
  let seq = 0
  ownTraffic = setInterval(
    () => {
      const n = Math.random() < 0.4 ? 1 + (seq % 2) : 1 + Math.floor(Math.random() * config.chats)
      receive({ chat: `chat:${n}`, seq: ++seq, text: `m${seq}` })
    },
    Math.max(10, Math.round(1000 / Math.max(0.1, config.rate))),
  )
}
