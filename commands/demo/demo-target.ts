/**
 * Where the demo runs: its prefix, the Redis it uses (the one named, else a throwaway redis-server of
 * its own) and the context it writes so that the commands it prints reach that Redis. Split from
 * index.ts: the part of starting a demo that decides where, before anything starts.
 */
import type { Command } from 'commander'
import { DEFAULT_URL, maskUrl, type Layout } from '../lib.js'
import { checkPrefix, connectionWords, globalOptions, resolveTarget, type Target } from '../target.js'
import { readConfig, writeConfig } from '../config/contexts.js'
import { CliError } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'
import { findOnPath, probeRedis, startThrowawayRedis, type ThrowawayRedis } from './redis-server.js'

/** The demo's prefix: `demo` unless --prefix / BOTMESH_PREFIX was given, or the prefix of the context --context names. */
export function demoPrefix(cmd: Command): string {
  const source = cmd.getOptionValueSourceWithGlobals('prefix')
  if (source === 'cli' || source === 'env') return checkPrefix(globalOptions(cmd).prefix)
  const ctxSource = cmd.getOptionValueSourceWithGlobals('context')
  if (ctxSource === 'cli' || ctxSource === 'env') return resolveTarget(cmd).prefix
  return 'demo'
}

/** The context the demo writes for its own Redis and prefix, so that printed commands say `--context demo`. */
function demoContextName(prefix: string): string {
  return prefix === 'demo' ? 'demo' : `demo-${prefix.replace(/[^\w.-]/g, '_')}`
}

/**
 * Write (or update) the demo's context in the config file: the URL (without credentials), prefix and
 * layout. The current context is left as it is. Null when it cannot be written, or the URL carries
 * a password (a context stores where a password comes from, never the password).
 */
function writeDemoContext(name: string, url: string, prefix: string, layout: Layout): string | null {
  if (/^[a-z][a-z0-9+.-]*:\/\/[^@/]*@/i.test(url)) return null
  try {
    const config = readConfig()
    config.contexts[name] = { url, prefix, layout }
    writeConfig(config)
    return name
  } catch {
    return null
  }
}

/** The Redis a demo runs on: the target as resolved, the URL used, its layout, and the throwaway server if it started one. */
export interface DemoRedis {
  target: Target
  url: string
  layout: Layout
  throwaway: ThrowawayRedis | null
}

/**
 * Redis: the one --url / REDIS_URL (or --context, or the current context) names, if it answers;
 * with none of them, a throwaway redis-server of its own on a free loopback port — never whatever
 * happens to answer on 127.0.0.1:6379. The password (the URL's, --password-file, REDIS_PASSWORD,
 * the context's) reaches the replicas through their environment only.
 */
export async function demoRedis(cmd: Command, layoutOption: Layout | 'auto', err: (l: string) => void): Promise<DemoRedis> {
  const target = resolveTarget(cmd)
  let url = target.url
  const urlSource = cmd.getOptionValueSourceWithGlobals('url')
  // A demo context (demo, demo-<prefix>) names a throwaway server of an earlier run: start a new one.
  const ownContext = target.context !== null && /^demo(-|$)/.test(target.context) && urlSource !== 'cli' && urlSource !== 'env'
  const explicit = !ownContext && (urlSource === 'cli' || urlSource === 'env' || url !== DEFAULT_URL || target.context !== null)
  let layout: Layout
  let throwaway: ThrowawayRedis | null = null
  if (explicit) {
    const probe = await probeRedis(url)
    if (!('layout' in probe)) {
      throw new CliError(`${probe.error}; without --url / REDIS_URL / --context the demo starts its own redis-server`, probe.code)
    }
    layout = layoutOption === 'standalone' || layoutOption === 'cluster' ? layoutOption : probe.layout
  } else {
    const bin = findOnPath('redis-server')
    if (!bin) {
      throw new CliError(
        'no --url given and no redis-server on PATH to start one for the demo: install Redis (apt-get install -y redis-server, or brew install redis) or point --url at one',
        EXIT.unreachable,
      )
    }
    throwaway = await startThrowawayRedis(bin)
    url = throwaway.url
    layout = 'standalone'
    err(`no --url given: started a redis-server of its own at ${url} (pid ${throwaway.pid}, no persistence); it stops with the demo`)
  }
  return { target, url, layout, throwaway }
}

/**
 * How printed commands reach this Redis as pasted: the context used, else one the demo writes (demo);
 * `--url … --prefix …` when no context could be written.
 */
export function demoConnection(prefix: string, r: DemoRedis): { contextName: string | null; connection: string } {
  let contextName = r.target.context
  if (!contextName || r.throwaway) contextName = writeDemoContext(demoContextName(prefix), maskUrl(r.url), prefix, r.layout)
  const connection = contextName ? `--context ${contextName}` : connectionWords({ url: maskUrl(r.url), prefix, context: null })
  return { contextName, connection }
}
