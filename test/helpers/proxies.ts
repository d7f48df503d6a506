/** TCP proxies for tests that lose what crosses the wire. */
import { createServer, connect, type Socket } from 'node:net'

/** A proxy that can swallow Redis's replies and then drop every connection. */
export async function replyEater(upstreamPort: number) {
  const pairs = new Set<{ down: Socket; up: Socket }>()
  let eat = false
  const server = createServer((down) => {
    const up = connect({ port: upstreamPort, host: '127.0.0.1' })
    const pair = { down, up }
    pairs.add(pair)
    const close = () => {
      pairs.delete(pair)
      down.destroy()
      up.destroy()
    }
    down.on('error', close).on('close', close)
    up.on('error', close).on('close', close)
    down.on('data', (b) => up.write(b))
    up.on('data', (b) => {
      if (!eat) down.write(b)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return {
    port: (server.address() as { port: number }).port,
    eatReplies: (on: boolean) => {
      eat = on
    },
    dropAll: () => {
      for (const p of [...pairs]) {
        p.down.destroy()
        p.up.destroy()
      }
    },
    close: async () => {
      for (const p of [...pairs]) p.down.destroy()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}
