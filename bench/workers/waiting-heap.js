// What a waiting message costs a replica in memory (forked with --expose-gc by sections/openloop.js):
// one coordinator holds `chats` chats, another queues `messages` acquisitions on them; once every one
// waits, the heap after a full collection, less the heap before they came, per waiting message. The
// garbage collector's time under a backlog grows with it.
import { Redis } from 'ioredis'
import { KeyLayout, RedisCoordinator } from '../../dist/src/index.js'

const { url, prefix, chats, messages } = JSON.parse(process.argv[2])
const settle = async (ms) => {
  await new Promise((r) => setTimeout(r, ms))
  globalThis.gc()
  await new Promise((r) => setTimeout(r, 50))
  globalThis.gc()
  return process.memoryUsage().heapUsed
}
const quiet = (c) => (c.on('coordination:warning', () => {}), c)
const holder = quiet(new RedisCoordinator({ url, prefix, leaseMs: 60_000, replicaId: 'heap-holder' }))
const waiter = quiet(new RedisCoordinator({ url, prefix, leaseMs: 60_000, replicaId: 'heap-waiter', turnWaitMs: 600_000 }))
await holder.start()
await waiter.start()
const held = []
for (let i = 0; i < chats; i++) held.push(await holder.acquireTurn(`heap:${i}`))
// Warm the waiter's code paths (a take, a wait, a hand-off) before measuring.
await Promise.all(Array.from({ length: 200 }, (_, i) => waiter.acquireTurn(`warm:${i % 20}`).then((t) => t.release())))
const before = await settle(300)
const waits = Array.from({ length: messages }, (_, i) => waiter.acquireTurn(`heap:${i % chats}`).then((t) => t.release()))
// Every message has its ticket in its chat's queue (a replica takes its tickets of one chat one
// after another): then they all wait as a backlog does.
const redis = new Redis(url)
const keys = new KeyLayout(prefix, 'standalone')
const queues = held.map((_, i) => keys.chat(`heap:${i}`).queue)
const queued = async () => (await Promise.all(queues.map((q) => redis.zcard(q)))).reduce((a, b) => a + b, 0)
const started = performance.now()
while ((await queued()) < messages) {
  if (performance.now() - started > 60_000) throw new Error('the messages did not all queue within 60 s')
  await new Promise((r) => setTimeout(r, 100))
}
redis.disconnect()
const after = await settle(1000)
const waiting = waiter.metrics.waitingNow
for (const t of held) await t.release()
await Promise.all(waits)
await waiter.stop()
await holder.stop()
process.send({ messages: waiting, bytesPerMessage: Math.round((after - before) / waiting) })
