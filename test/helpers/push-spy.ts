/** Counts the wake-ups the shared state publishes to one coordinator (a contract hook of the Redis harnesses). */
import { Redis } from 'ioredis'
import type { Coordinator, KeyLayout } from '../../src/index.js'
import type { PushCounter } from '../contract/turns.contract.js'

/**
 * One plain subscriber per node on the coordinator's wake channel. A message is published on the node
 * of its chat's slot and reaches that node's subscribers before the node answers a later PING; on a
 * cluster it is forwarded to the other nodes as well, so each message is counted once.
 */
export async function pushSpy(nodeUrls: string[], keys: KeyLayout, coordinator: Coordinator): Promise<PushCounter> {
  const seen = new Set<string>()
  const subs = nodeUrls.map((url) => new Redis(url))
  for (const sub of subs) sub.on('message', (_channel: string, message: string) => seen.add(message))
  await Promise.all(subs.map((sub) => sub.subscribe(keys.wakeChannel(coordinator.incarnation))))
  return {
    count: async () => {
      await Promise.all(subs.map((sub) => sub.ping()))
      return seen.size
    },
    stop: async () => {
      await Promise.all(subs.map((sub) => sub.quit()))
    },
  }
}
