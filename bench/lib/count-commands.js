// Client-side count of the commands this process sends to Redis (= round trips, unpipelined), by
// name: every ioredis client in the process, including the ones the library and the peers create
// (duplicates for pub/sub too), goes through Redis.prototype.sendCommand.
import { Redis } from 'ioredis'

const counts = new Map()
let installed = false

export function installCommandCounter() {
  if (installed) return
  installed = true
  const orig = Redis.prototype.sendCommand
  Redis.prototype.sendCommand = function (command, stream) {
    const name = String(command?.name ?? '?').toLowerCase()
    counts.set(name, (counts.get(name) ?? 0) + 1)
    return orig.call(this, command, stream)
  }
}

export function resetCommandCounts() {
  counts.clear()
}

export function commandCounts() {
  return Object.fromEntries(counts)
}
