// One replica of the turns benchmark, in its own process (forked with IPC by sections/turns.js).
// Keeps `inflight` messages in flight (closed loop): for each, take the chat's turn, work W ms
// (a timer: handlers wait on I/O), release. Records for every message, on the machine-wide
// monotonic clock: [chat, seq, arrival, grant, releaseStart, releaseEnd, fence].
import { setTimeout as sleep } from 'node:timers/promises'
import { installCommandCounter, resetCommandCounts, commandCounts } from '../lib/count-commands.js'
import { mulberry32, sharedNow } from '../lib/stats.js'
import { createAdapter } from './adapters.js'

installCommandCounter()

const FIELDS = 7

/** Which chat a message goes to. */
export function chatPicker(pattern, chats, rand) {
  if (pattern === 'hot1') return () => 0
  if (pattern === 'hot10') {
    const hot = Math.max(1, Math.round(chats / 10))
    return () => (rand() < 0.9 || hot === chats ? Math.floor(rand() * hot) : hot + Math.floor(rand() * (chats - hot)))
  }
  return () => Math.floor(rand() * chats)
}

async function runLoop(adapter, cfg, keyOf, quota, stopAt, pick) {
  const records = []
  const errors = []
  const seqs = new Map()
  let issued = 0
  const slot = async () => {
    while (issued < quota && sharedNow() < stopAt) {
      issued++
      const chat = pick()
      const seq = (seqs.get(chat) ?? 0) + 1
      seqs.set(chat, seq)
      const arrival = sharedNow()
      let h
      try {
        h = await adapter.acquire(keyOf(chat))
      } catch (e) {
        errors.push(String(e?.message ?? e).slice(0, 200))
        continue
      }
      const grant = sharedNow()
      if (cfg.workMs > 0) await sleep(cfg.workMs)
      const relStart = sharedNow()
      try {
        await h.release()
      } catch (e) {
        errors.push(`release: ${String(e?.message ?? e).slice(0, 200)}`)
      }
      records.push(chat, seq, arrival, grant, relStart, sharedNow(), h.fence)
    }
  }
  await Promise.all(Array.from({ length: cfg.inflight }, slot))
  return { records, errors }
}

let adapter = null

process.on('message', async (msg) => {
  try {
    if (msg.type === 'setup') {
      const cfg = msg.cfg
      adapter = await createAdapter(cfg.adapter, cfg)
      // Warm up (JIT, script cache, connections) on chats the measured run never uses.
      const warmRand = mulberry32(cfg.seed + 7)
      await runLoop(
        adapter,
        { ...cfg, workMs: 0 },
        (c) => `warm:${cfg.replica}:${c}`,
        cfg.warmup,
        Infinity,
        () => Math.floor(warmRand() * 50),
      )
      process.send({ type: 'ready' })
    } else if (msg.type === 'go') {
      const cfg = msg.cfg
      resetCommandCounts()
      const cpu0 = process.cpuUsage()
      const pick = chatPicker(cfg.pattern, cfg.chats, mulberry32(cfg.seed))
      const { records, errors } = await runLoop(adapter, cfg, (c) => `chat:${c}`, cfg.messages, sharedNow() + cfg.maxSeconds * 1000, pick)
      const cpu = process.cpuUsage(cpu0)
      process.send({
        type: 'done',
        cpuUs: cpu.user + cpu.system,
        records,
        fields: FIELDS,
        errors: errors.slice(0, 20),
        errorCount: errors.length,
        commands: commandCounts(),
      })
    } else if (msg.type === 'close') {
      await Promise.race([adapter?.close(), sleep(5000)])
      process.exit(0)
    }
  } catch (e) {
    process.send({ type: 'error', error: String(e?.stack ?? e) })
    process.exit(1)
  }
})
process.on('disconnect', () => process.exit(0))
