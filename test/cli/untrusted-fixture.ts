/**
 * Coordination state full of hostile strings, made by real replicas (the library, never hashes by
 * hand): chat keys, replica ids, lead and lock names, flow and step names, a fingerprint, answers, a
 * handover marker — escape sequences (OSC title and clipboard, clear screen, colours, blink), bidi
 * controls, zero-width characters, C1 controls, emoji, backslashes, 8 KiB strings, and seeded random
 * strings (FUZZ_SEED). Shared by the CLI's and the dashboard's tests of untrusted text.
 */
import { RedisCoordinator, RedisStore, type Election } from '../../src/index.js'
import { untilQueued } from '../helpers/shared-state.js'
import { until } from '../helpers/wait.js'
import { expect } from 'vitest'

const HOSTILE = [
  '\u001b]0;pwned\u0007',
  '\u001b]52;c;cHduZWQ=\u0007',
  '\u001b[2J',
  '\u001b[31m',
  '\u001b[5m',
  '\u009b2J',
  '\u0085',
  '\r',
  '\n',
  '\t',
  '\u0000',
  '\u007f',
  '\u202e',
  '\u2066',
  '\u200b',
  '\ufeff',
  '\u00a0',
  '\u{e0041}',
  '\\',
  '\\x41',
  '%{}:',
  'é',
  '🙂',
  '👨‍👩‍👧',
  '中文',
]

/** A seeded generator (mulberry32): the same strings on every run, reported when a case fails. */
function rng(seed: number) {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Hostile pieces and random code points (controls, C1, bidi, any plane; no lone surrogates). */
function fuzz(next: () => number, n: number): string {
  let s = ''
  for (let i = 0; i < n; i++) {
    const r = next()
    if (r < 0.5) s += HOSTILE[Math.floor(next() * HOSTILE.length)]
    else if (r < 0.7) s += String.fromCharCode(Math.floor(next() * 0xa0))
    else {
      let cp = Math.floor(next() * 0x10ffff)
      if (cp >= 0xd800 && cp <= 0xdfff) cp -= 0x800
      s += String.fromCodePoint(cp)
    }
  }
  return s
}

export const SEED = Number(process.env.FUZZ_SEED ?? 19)
const next = rng(SEED)
export const KEYS = {
  osc: 'chat:\u001b]0;pwned\u0007\u001b[2J',
  bidi: 'chat:\u202eevil\u2066\u200b\ufeff',
  long: `long:${'x'.repeat(8000)}`,
  emoji: 'emoji:👨‍👩‍👧🙂中文é',
  slash: 'back\\slash\\x41',
  fuzz: `fz:${fuzz(next, 12)}`,
}
export const REPLICAS = { a: 'pod\u001b[31m-red\u202e', b: `\u001b]52;c;cHduZWQ=\u0007clip${fuzz(next, 4)}` }
export const FLOW = 'order\u001b[5m'
export const STEP = `addr\u009b2J${fuzz(next, 6)}`

/** Control bytes and invisible characters that must never be printed raw. */
export const FORBIDDEN =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b-\u001a\u001c-\u001f\u007f-\u009f\u00a0\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\u{e0000}-\u{e007f}]/u

/** No raw control byte but \n and \t; with `colour`, every ESC starts an SGR sequence, without it none at all. */
export function assertClean(where: string, text: string, colour = false): void {
  const bad = FORBIDDEN.exec(text)
  expect(
    bad,
    `${where}: raw U+${bad?.[0].codePointAt(0)?.toString(16)} at ${bad?.index} in ${JSON.stringify(text.slice(0, 400))}`,
  ).toBeNull()
  if (colour) {
    // eslint-disable-next-line no-control-regex
    const esc = text.replace(/\u001b\[[0-9;]*m/g, '')
    expect(esc.includes('\u001b'), `${where}: an ESC that is not an SGR colour`).toBe(false)
  } else {
    expect(text.includes('\u001b'), `${where}: an ESC with colours off`).toBe(false)
  }
}

export interface HostileState {
  a: RedisCoordinator
  b: RedisCoordinator
  stop(): Promise<void>
}

export async function hostileState(url: string, prefix: string): Promise<HostileState> {
  const waits: Array<Promise<unknown>> = []
  const store = new RedisStore({ url, prefix })
  const a = new RedisCoordinator({ url, prefix, replicaId: REPLICAS.a, leaseMs: 30_000 })
  const b = new RedisCoordinator({ url, prefix, replicaId: REPLICAS.b, leaseMs: 30_000 })
  await Promise.all([a.start(), b.start()])
  const turns = []
  for (const k of Object.values(KEYS)) turns.push(await a.acquireTurn(k))
  for (const k of [KEYS.osc, KEYS.bidi]) waits.push(b.acquireTurn(k, { waitMs: 120_000 }).catch(() => null))
  const ea: Election = a.campaign(`provider:\u001b]0;lead\u0007${fuzz(next, 3)}`, {})
  await until(() => ea.isLeader, 5000, 'a leading the hostile provider')
  const eb: Election = b.campaign(`provider:\u001b]0;lead\u0007`, {})
  await store.acquireLockFenced(`lock:\u001b[2J\u202e${fuzz(next, 3)}`, 60_000)
  await store.setCheckpointIf(
    KEYS.osc,
    {
      flow: FLOW,
      step: STEP,
      state: { note: '\u001b]0;state\u0007' },
      owner: { replicaId: REPLICAS.a, incarnation: a.incarnation, fence: turns[0]!.fence },
      ephemeral: { ttlMs: 600_000, fingerprint: `fp\u001b[31m${fuzz(next, 2)}` },
      answer: { text: '\u001b[2J\u202eanswer' },
    },
    null,
  )
  await store.setCheckpointIf(KEYS.long, { flow: `f${'y'.repeat(8000)}`, step: 's', state: {} }, null)
  await store.setHandoverMarker(KEYS.bidi, {
    name: `survey\u001b[5m\u202e`,
    replicaId: REPLICAS.b,
    incarnation: b.incarnation,
    ttlMs: 600_000,
    data: { note: '\u001b]0;data\u0007\u202e' },
  })
  await untilQueued(a, KEYS.osc, [REPLICAS.b])
  await store.close()
  return {
    a,
    b,
    async stop() {
      await eb.stop().catch(() => {})
      await ea.stop().catch(() => {})
      await Promise.all([a.stop(), b.stop()].map((p) => p.catch(() => {})))
      await Promise.all(waits)
    },
  }
}
