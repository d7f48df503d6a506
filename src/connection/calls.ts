/**
 * One call on a client: bounding it in time (withTimeout), knowing whether it may have run twice
 * (connectionCloses), and sending calls made together in few writes: those of one turn of the
 * event loop in one (batchWrites), those of one task a few to a write (batchTaskWrites). Split
 * from connection.ts: what the layers above do around each command.
 */
import type { Redis } from 'ioredis'
import { CoordinationUnavailableError } from '../errors/coordination-unavailable-error.js'
import { isCluster, masters, type RedisClient } from './client.js'

/** Bound a Redis call: one that does not answer within `ms` rejects as CoordinationUnavailableError ('unreachable'). */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  if (!(ms > 0) || !Number.isFinite(ms)) return p
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new CoordinationUnavailableError('unreachable', `Redis did not answer ${what} within ${ms}ms`)), ms)
    p.then(
      (v) => {
        clearTimeout(t)
        resolve(v)
      },
      (e) => {
        clearTimeout(t)
        reject(e)
      },
    )
  })
}

const dropCounters = new WeakMap<RedisClient, { closes: number }>()

/**
 * How many times the client's connection closed so far (any node's, for a Cluster). ioredis sends a
 * command again after it reconnects when the connection closed before its reply came
 * (autoResendUnfulfilledCommands; a Cluster retries one lost with its node): a call that saw this
 * count change may have run in Redis twice.
 */
export function connectionCloses(client: RedisClient): () => number {
  let c = dropCounters.get(client)
  if (!c) {
    const counter = { closes: 0 }
    const bump = () => {
      counter.closes++
    }
    if (isCluster(client)) {
      const watched = new WeakSet<Redis>()
      const watch = (node: Redis) => {
        if (watched.has(node)) return
        watched.add(node)
        node.on('close', bump)
      }
      for (const node of client.nodes()) watch(node)
      client.on('+node', watch)
    } else {
      client.on('close', bump)
    }
    dropCounters.set(client, (c = counter))
  }
  return () => c.closes
}

type Corkable = { cork(): void; uncork(): void; writable: boolean }
const corked = new WeakSet<RedisClient>()

/** Cork the sockets of the client's masters that are open now; returns them (to uncork later). */
function corkMasters(client: RedisClient): Corkable[] {
  const sockets: Corkable[] = []
  for (const node of masters(client)) {
    const stream = (node as unknown as { stream?: Corkable }).stream
    if (stream?.writable && typeof stream.cork === 'function') sockets.push(stream)
  }
  for (const s of sockets) s.cork()
  return sockets
}

/**
 * Commands a client sends in the same turn of the event loop (replies that came in one read and the
 * calls they lead to, a renewal cycle, a command's first reads) leave in one write: its sockets are
 * corked until the loop's check phase. A write per command is a system call, the largest part of a
 * replica's CPU per turn on a busy machine. No command waits for another's reply (unlike ioredis's
 * enableAutoPipelining, which keeps one pipeline in flight per node), and none waits longer than the
 * current turn of the loop. Call it before sending.
 */
export function batchWrites(client: RedisClient): void {
  if (corked.has(client)) return
  const sockets = corkMasters(client)
  if (!sockets.length) return
  corked.add(client)
  setImmediate(() => {
    corked.delete(client)
    for (const s of sockets) s.uncork()
  })
}

/** Commands of one task that leave in one write at most (a larger batch goes in several). */
export const TASK_BATCH = 8
interface TaskBatch {
  sockets: Corkable[]
  sent: number
}
const taskBatches = new WeakMap<RedisClient, TaskBatch>()

/**
 * Commands sent in the same task (one read's replies and the promise continuations they run, a
 * timer's callback and what it awaits at once) leave together, TASK_BATCH to a write: the sockets
 * are corked until the task's microtasks have run (process.nextTick runs after them), so nothing
 * waits for a later turn of the loop, and a long batch leaves in parts as it is made, so Redis
 * starts on the first part while the rest is made.
 */
export function batchTaskWrites(client: RedisClient): void {
  const open = taskBatches.get(client)
  if (open) {
    // Before the 9th, 17th, ... call's command: the ones before it leave, 8 to a write.
    if (open.sent++ % TASK_BATCH === 0) {
      for (const s of open.sockets) {
        s.uncork()
        s.cork()
      }
    }
    return
  }
  const sockets = corkMasters(client)
  if (!sockets.length) return
  taskBatches.set(client, { sockets, sent: 1 })
  queueMicrotask(() =>
    process.nextTick(() => {
      taskBatches.delete(client)
      for (const s of sockets) s.uncork()
    }),
  )
}
