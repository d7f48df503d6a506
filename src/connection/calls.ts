/**
 * One call on a client: bounding it in time (withTimeout), knowing whether it may have run twice
 * (connectionCloses), and sending the calls of one turn of the event loop in one write
 * (batchWrites). Split from connection.ts: what the layers above do around each command.
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
  const sockets: Corkable[] = []
  for (const node of masters(client)) {
    const stream = (node as unknown as { stream?: Corkable }).stream
    if (stream?.writable && typeof stream.cork === 'function') sockets.push(stream)
  }
  if (!sockets.length) return
  for (const s of sockets) s.cork()
  corked.add(client)
  setImmediate(() => {
    corked.delete(client)
    for (const s of sockets) s.uncork()
  })
}
