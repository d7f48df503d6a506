// A replica of a chat bot, as small as the campaign needs: it takes each message's turn, reads the
// chat's checkpoint, does its "work", sends one effect (to the harness's fenced sink), writes the
// checkpoint compare-and-set, and releases. It campaigns for an exclusive provider and, while leading,
// sends provider effects. Everything it observes goes to a JSONL history (written synchronously, so a
// SIGKILL loses nothing already recorded). Faults that must happen inside the process (a kill at a
// precise point, a blocked event loop, a jumped wall clock) are commands from the harness over IPC.
import { openSync, writeSync } from 'node:fs'
import { now, sleep } from './clock.mjs'

const cfg = JSON.parse(process.env.CHAOS_WORKER)
const realDateNow = Date.now.bind(Date)
let clockOffset = 0
// The wall clock as the library sees it: jumped by the harness. Leases must not care.
Date.now = () => realDateNow() + clockOffset

const { RedisStore, LeaseLostError, CheckpointConflictError } = await import(cfg.dist)

const fd = openSync(cfg.historyFile, 'a')
let inc = null
const rec = (type, data = {}) => {
  writeSync(fd, JSON.stringify({ t: now(), w: cfg.replicaId, inc, type, ...data }) + '\n')
}

const store = new RedisStore({
  url: cfg.url,
  prefix: cfg.prefix,
  layout: cfg.layout,
  idleKeyTtlMs: cfg.idleKeyTtlMs,
  commandTimeoutMs: cfg.leaseMs,
})
const coordinator = store.coordinator({
  replicaId: cfg.replicaId,
  leaseMs: cfg.leaseMs,
  turnWaitMs: cfg.turnWaitMs,
  maxPollMs: cfg.maxPollMs,
  idleKeyTtlMs: cfg.idleKeyTtlMs,
})
inc = coordinator.incarnation
coordinator.on('coordination:warning', (w) => rec('warning', { code: w.code, message: w.message }))
coordinator.on('coordination:lease-lost', (e) => rec('lost', { key: e.key, kind: e.kind, fence: e.fence, reason: e.reason }))
coordinator.on('coordination:evicted', () => {
  rec('evicted')
  // A runtime whose replica was evicted exits and is restarted by its supervisor (the harness).
  setTimeout(() => process.exit(3), 5)
})

let armed = null // kill point
const killNow = (point) => {
  rec('killpoint', { point })
  process.kill(process.pid, 'SIGKILL')
}
const maybeKill = (point) => {
  if (armed === point) killNow(point)
}

let reqs = 0
const pending = new Map()
function effect(kind, key, fence, msg) {
  const req = ++reqs
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      pending.delete(req)
      resolve(null)
    }, 3000)
    pending.set(req, (accepted) => {
      clearTimeout(timer)
      pending.delete(req)
      resolve(accepted)
    })
    process.send({ type: 'effect', req, kind, key, fence, msg, w: cfg.replicaId, inc })
  })
}

let opIds = 0
/** One checkpoint operation, recorded as call + outcome for the linearizability check. */
async function cpOp(op, chat, extra, fn) {
  const id = `${inc}:${++opIds}`
  rec('cp', { op, chat, id, phase: 'call', ...extra })
  try {
    const r = await fn()
    rec('cp', { op, chat, id, phase: 'ok', ...r.rec })
    return r.value
  } catch (e) {
    const known = e instanceof CheckpointConflictError
    const out = {
      code: e?.code ?? null,
      name: e?.constructor?.name ?? null,
      reason: e?.reason ?? null,
      conflict: e?.conflict ?? null,
      isLeaseLost: e instanceof LeaseLostError,
      current: e?.currentRevision == null ? null : String(e.currentRevision),
      newerFence: e?.currentFence ?? null,
      message: String(e?.message ?? e).slice(0, 200),
    }
    rec('cp', { op, chat, id, phase: known ? 'fail' : 'info', ...out })
    throw e
  }
}

const work = () => sleep(cfg.workMinMs + Math.random() * (cfg.workMaxMs - cfg.workMinMs))
let handledPerChat = new Map()

// The acquisitions waiting now: the harness may abort them all at once (a waiter giving up).
const waits = new Set()
// When the client reaches Redis again after a cut (the checker measures repairs from here).
store.redis.on('ready', () => rec('link-ready'))

async function handle(m) {
  rec('recv', { msg: m.id, chat: m.chat })
  let turn
  const wait = Object.assign(new AbortController(), { since: performance.now() })
  waits.add(wait)
  try {
    turn = await coordinator.acquireTurn(m.chat, { signal: wait.signal })
  } catch (e) {
    rec('fail', {
      msg: m.id,
      chat: m.chat,
      stage: 'acquire',
      code: e?.code,
      reason: e?.reason ?? null,
      message: String(e?.message).slice(0, 160),
    })
    return
  } finally {
    waits.delete(wait)
  }
  rec('grant', {
    msg: m.id,
    chat: m.chat,
    fence: turn.fence,
    ticket: turn.ticket,
    prev: turn.previousHolder?.incarnation ?? null,
    waitedMs: turn.waitedMs,
  })
  let stage = 'read'
  try {
    const cp = await cpOp('read', m.chat, {}, async () => {
      const c = await store.getCheckpoint(m.chat)
      return { value: c, rec: { value: c ? String(c.revision) : null, of: c?.owner?.fence ?? null } }
    })
    stage = 'work'
    await work()
    maybeKill('holding')
    turn.assertHeld()
    rec('assert', { chat: m.chat, fence: turn.fence })
    stage = 'effect'
    const accepted = await effect('chat', m.chat, turn.fence, m.id)
    rec('effect', { msg: m.id, chat: m.chat, fence: turn.fence, accepted })
    if (!accepted) throw new Error(accepted === null ? 'sink did not answer' : 'sink refused a stale fence')
    maybeKill('after-send')
    stage = 'checkpoint'
    turn.assertHeld()
    rec('assert', { chat: m.chat, fence: turn.fence })
    const n = (handledPerChat.get(m.chat) ?? 0) + 1
    handledPerChat.set(m.chat, n)
    const expected = cp ? cp.revision : null
    if (cp && cfg.clearEvery && n % cfg.clearEvery === 0) {
      await cpOp('clear', m.chat, { expected: String(expected), fence: turn.fence }, async () => {
        const ok = await store.clearCheckpointIf(m.chat, expected, { fence: turn.fence })
        return { value: ok, rec: { cleared: ok } }
      })
    } else {
      const state = { n: (cp?.state?.n ?? 0) + 1, last: m.id }
      await cpOp('set', m.chat, { expected: expected === null ? null : String(expected), fence: turn.fence }, async () => {
        const rev = await store.setCheckpointIf(
          m.chat,
          { flow: 'chaos', step: state.n, state, owner: { replicaId: cfg.replicaId, incarnation: inc, fence: turn.fence } },
          expected,
        )
        return { value: rev, rec: { rev: String(rev) } }
      })
    }
    rec('done', { msg: m.id, chat: m.chat, fence: turn.fence })
  } catch (e) {
    rec('fail', {
      msg: m.id,
      chat: m.chat,
      stage,
      code: e?.code ?? null,
      reason: e?.reason ?? null,
      message: String(e?.message).slice(0, 160),
    })
  } finally {
    await turn.release()
    rec('release', { chat: m.chat, fence: turn.fence })
  }
}

// ---- provider leadership: one exclusive transport, effects only while the lead is valid
let election = null
let leadTimer = null
if (cfg.campaign) {
  election = coordinator.campaign(cfg.provider, {
    sitOutMs: cfg.sitOutMs,
    onLeader: (lead) => {
      process.send({ type: 'role', leader: true })
      rec('leader', { name: lead.name, fence: lead.fence, prev: lead.previousHolder?.incarnation ?? null })
    },
    onFollower: ({ reason }) => {
      process.send({ type: 'role', leader: false })
      rec('follower', { name: cfg.provider, reason })
    },
  })
  leadTimer = setInterval(async () => {
    const lead = election.lead
    if (armed === 'leading' && lead) killNow('leading')
    if (!lead) return
    try {
      lead.assertHeld()
    } catch {
      return
    }
    rec('lead-assert', { name: lead.name, fence: lead.fence })
    const accepted = await effect('provider', lead.name, lead.fence, null)
    rec('lead-effect', { name: lead.name, fence: lead.fence, accepted })
  }, cfg.leadEffectMs)
}

// queued: killed while one of its messages waits in a chat's queue
const queuedTimer = setInterval(() => {
  // a wait that has gone on this long is queued behind another turn (a free chat is granted in one round trip)
  const t = performance.now()
  if (armed === 'queued' && [...waits].some((w) => t - w.since > 15)) killNow('queued')
}, 3)

process.on('message', async (m) => {
  switch (m.type) {
    case 'msg':
      void handle(m).finally(() => process.connected && process.send({ type: 'fin', msg: m.id }))
      break
    case 'effect-ack':
      pending.get(m.req)?.(m.accepted)
      break
    case 'arm':
      armed = m.point
      rec('armed', { point: m.point })
      break
    case 'block': {
      rec('block', { ms: m.ms })
      const end = now() + m.ms
      while (now() < end) {
        /* a blocked event loop: no timer, no socket, nothing runs */
      }
      rec('unblock', { ms: m.ms })
      break
    }
    case 'abort-waits':
      rec('abort-waits', { n: waits.size })
      for (const w of [...waits]) w.abort()
      break
    case 'clock':
      clockOffset = m.offsetMs
      rec('clock', { offsetMs: m.offsetMs })
      break
    case 'stop':
      clearInterval(queuedTimer)
      if (leadTimer) clearInterval(leadTimer)
      rec('stopping')
      await coordinator.stop().catch((e) => rec('stop-error', { message: String(e?.message) }))
      await store.close().catch(() => {})
      rec('stopped')
      process.exit(0)
  }
})

try {
  await coordinator.start()
  rec('start', { pid: process.pid })
  process.send({ type: 'ready', inc, pid: process.pid })
} catch (e) {
  rec('start-failed', { message: String(e?.message) })
  process.send({ type: 'start-failed', message: String(e?.message) })
  setTimeout(() => process.exit(2), 5)
}
