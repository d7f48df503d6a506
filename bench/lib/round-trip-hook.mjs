// `node --import bench/lib/round-trip-hook.mjs …`: counts the Redis round trips of one process on every
// layout (the relay in scripts/round-trip-relay.mjs sees one server only; a Cluster client opens its
// own connections to every master). Every TCP connection the process opens through net is watched:
// data written after the server last spoke on it starts a burst, and a burst of connection set-up
// commands only (HELLO, CLIENT …, INFO, CLUSTER, …) is not counted, as in the relay. Two figures go to
// the JSON file named by BOTMESH_ROUND_TRIPS_FILE when the process exits:
// - perConnection: the bursts summed over connections (what the relay counts on one server);
// - sequential: the bursts of the process as a whole, a new one starting only once some server
//   answered since the last one began: round trips in the sense of latency, where requests sent to
//   two masters at once count once.
import net from 'node:net'
import { writeFileSync } from 'node:fs'
import { dataBurst } from '../../scripts/round-trip-relay.mjs'

const file = process.env.BOTMESH_ROUND_TRIPS_FILE
if (file) {
  let perConnection = 0
  let sequential = 0
  let answeredSinceLast = true
  const watch = (socket) => {
    let serverSpoke = true
    let burst = ''
    const close = () => {
      if (burst && dataBurst(burst)) perConnection++
      burst = ''
    }
    socket.on('data', () => {
      serverSpoke = true
      answeredSinceLast = true
    })
    socket.on('close', close)
    const write = socket.write
    socket.write = function (chunk, ...rest) {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('latin1')
      if (serverSpoke) {
        close()
        serverSpoke = false
      }
      burst += text
      if (answeredSinceLast && dataBurst(text)) {
        sequential++
        answeredSinceLast = false
      }
      return write.call(this, chunk, ...rest)
    }
    return socket
  }
  for (const name of ['createConnection', 'connect']) {
    const original = net[name]
    net[name] = (...args) => watch(original(...args))
  }
  process.on('exit', () => {
    writeFileSync(file, JSON.stringify({ perConnection, sequential }))
  })
}
