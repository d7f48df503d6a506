import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function readVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'botmesh-coord' && pkg.version) return pkg.version
    } catch {
      // keep walking up
    }
    dir = dirname(dir)
  }
  return '0.0.0'
}

/** The package version: heartbeat records carry it, so operators see mixed deployments. */
export const PACKAGE_VERSION = readVersion()
