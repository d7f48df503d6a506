// One replica of the open-loop benchmark, in its own process (forked with IPC by sections/openloop.js).
// Handles each message of its schedule at its arrival time, whatever is in flight (no in-flight
// window): take the chat's turn, run the handler (a timer of the message's own handler time: handlers
// wait on I/O), release. Arrival is the scheduled time on the machine-wide monotonic clock, so a late
// timer of this process counts in the wait. Past `cap` outstanding messages a message is dropped by
// the harness (counted apart from errors). Records, as the turns worker does:
// [chat, seq, arrival, grant, releaseStart, releaseEnd, fence].
import { setTimeout as sleep } from 'node:timers/promises'
import { installCommandCounter, resetCommandCounts, commandCounts } from '../lib/count-commands.js'
import { mulberry32, sharedNow } from '../lib/stats.js'
import { createAdapter } from './adapters.js'

installCommandCounter()

const FIELDS = 7

let adapter = null

async function warmup(cfg) {
  const rand = mulberry32(cfg.seed + 7)
  for (let i = 0; i < cfg.warmup; i++) {
    const h = await adapter.acquire(`warm:${cfg.replica}:${Math.floor(rand() * 50)}`)
    await h.release()
  }
}

/** s: { t0, times (ms after t0), chats, handlerMs }; resolves once every message is done or at the drain limit. */
function run(cfg, s) {
  return new Promise((resolve) => {
    const records = []
    const errors = []
    const seqs = new Map()
    const pending = new Map() // index -> { arrival, grant }
    const lags = []
    let outstanding = 0
    let drops = 0
    let errorCount = 0
    let next = 0
    let finished = false
    const n = s.times.length
    const stopAt = s.t0 + (n ? s.times[n - 1] : 0) + cfg.drainMs
    const finish = (timedOut) => {
      if (finished) return
      finished = true
      const t = sharedNow()
      // Not released when the run stopped: their waits so far (a lower bound when not yet granted).
      const unfinished = [...pending.values()].map((p) => [p.arrival, p.grant ?? -1])
      resolve({ records, errors: errors.slice(0, 20), errorCount, drops, unfinished, stoppedAt: t, timedOut, lags })
    }
    const fire = (i) => {
      const arrival = s.t0 + s.times[i]
      if (lags.length < 20000 || i % 10 === 0) lags.push(sharedNow() - arrival)
      if (outstanding >= cfg.cap) {
        drops++
        return
      }
      outstanding++
      const chat = s.chats[i]
      const seq = (seqs.get(chat) ?? 0) + 1
      seqs.set(chat, seq)
      const p = { arrival, grant: null }
      pending.set(i, p)
      adapter.acquire(`chat:${chat}`).then(
        async (h) => {
          p.grant = sharedNow()
          await sleep(s.handlerMs[i])
          const relStart = sharedNow()
          try {
            await h.release()
          } catch (e) {
            errorCount++
            errors.push(`release: ${String(e?.message ?? e).slice(0, 200)}`)
          }
          if (finished) return
          records.push(chat, seq, arrival, p.grant, relStart, sharedNow(), h.fence)
          pending.delete(i)
          if (--outstanding === 0 && next >= n) finish(false)
        },
        (e) => {
          if (finished) return
          errorCount++
          errors.push(String(e?.message ?? e).slice(0, 200))
          pending.delete(i)
          if (--outstanding === 0 && next >= n) finish(false)
        },
      )
    }
    const tick = () => {
      if (finished) return
      const t = sharedNow() - s.t0
      while (next < n && s.times[next] <= t) fire(next++)
      if (next >= n) {
        if (outstanding === 0) return finish(false)
        return void setTimeout(() => finish(true), Math.max(0, stopAt - sharedNow()))
      }
      setTimeout(tick, Math.max(0, Math.min(s.times[next] - t - 0.5, 20)))
    }
    setTimeout(tick, Math.max(0, s.t0 - sharedNow() - 1))
  })
}

process.on('message', async (msg) => {
  try {
    if (msg.type === 'setup') {
      adapter = await createAdapter(msg.cfg.adapter, msg.cfg)
      await warmup(msg.cfg)
      process.send({ type: 'ready' })
    } else if (msg.type === 'go') {
      resetCommandCounts()
      const cpu0 = process.cpuUsage()
      const out = await run(msg.cfg, msg.schedule)
      const cpu = process.cpuUsage(cpu0)
      process.send({ type: 'done', cpuUs: cpu.user + cpu.system, fields: FIELDS, commands: commandCounts(), ...out })
    } else if (msg.type === 'close') {
      await Promise.race([adapter?.close(), sleep(3000)])
      process.exit(0)
    }
  } catch (e) {
    process.send({ type: 'error', error: String(e?.stack ?? e) })
    process.exit(1)
  }
})
process.on('disconnect', () => process.exit(0))
