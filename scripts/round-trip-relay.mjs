// A TCP relay in front of one Redis that counts a client's round trips: data from the client after
// the server last spoke (or first) starts one. Bursts made only of connection set-up and tear-down
// commands (HELLO, CLIENT …, INFO, QUIT, SELECT, AUTH, …) are not counted. Used by the benchmark's
// operator section and the CLI's tests. Plain ESM JavaScript; types: round-trip-relay.d.mts.
import { createConnection, createServer } from 'node:net'

const SET_UP = /^(client|hello|info|quit|cluster|readonly|ping|select|auth|command)$/

/** Whether a burst of RESP commands a client sent (latin1 text) holds a command besides connection set-up. */
export function dataBurst(burst) {
  const names = [...burst.matchAll(/\*\d+\r\n\$\d+\r\n([A-Za-z]+)/g)].map((m) => m[1].toLowerCase())
  return names.some((n) => !SET_UP.test(n))
}

/** Start a relay to `url` (redis://host:port); `url` of the result is the relay's. */
export async function roundTripRelay(url) {
  const target = new URL(url)
  let roundTrips = 0
  const server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) })
    let serverSpoke = true
    let burst = ''
    const closeBurst = () => {
      if (dataBurst(burst)) roundTrips++
      burst = ''
    }
    client.on('data', (d) => {
      if (serverSpoke && burst) closeBurst()
      serverSpoke = false
      burst += d.toString('latin1')
      upstream.write(d)
    })
    upstream.on('data', (d) => {
      serverSpoke = true
      client.write(d)
    })
    const end = () => {
      if (burst) closeBurst()
      client.destroy()
      upstream.destroy()
    }
    for (const s of [client, upstream]) s.on('close', end).on('error', end)
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const relayUrl = new URL(url)
  relayUrl.hostname = '127.0.0.1'
  relayUrl.port = String(server.address().port)
  return {
    url: relayUrl.toString().replace(/\/$/, ''),
    roundTrips: () => roundTrips,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
