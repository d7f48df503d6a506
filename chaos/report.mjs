// The campaign's table and the failure report of a run.
import { INVARIANTS } from './checkers.mjs'
import { ALL_FAULTS, pct } from './campaign.mjs'

const ms = (x) => (x === null || x === undefined ? '–' : `${Math.round(x)} ms`)

export function formatTable(s, replayCommand = 'node chaos/run.mjs --replay <seed>') {
  const rows = []
  rows.push(
    `| runs | seed | leaseMs | library | wall time | errors |`,
    `| --- | --- | --- | --- | --- | --- |`,
    `| ${s.runs} | ${s.seed} | ${s.leaseMs} | ${s.library ?? '?'} | ${(s.wallMs / 60000).toFixed(1)} min | ${s.errors} |`,
    '',
  )
  rows.push('| fault | injected |', '| --- | --- |')
  for (const f of ALL_FAULTS) rows.push(`| ${f} | ${s.faults[f] ?? 0} |`)
  rows.push('')
  rows.push(
    '| messages | count |',
    '| --- | --- |',
    `| sent | ${s.messages} |`,
    `| handled (effect accepted, checkpoint written) | ${s.handled} |`,
    `| lost with a killed replica | ${s.lostWithKilled} |`,
    `| failed on a faulted replica / Redis (excused) | ${s.failedExcused} |`,
    `| dropped by an operator's skip | ${s.droppedByOperator} |`,
    `| stale effects refused by the fenced sink | ${s.staleRejected} |`,
    '',
  )
  rows.push('| invariant | violations |', '| --- | --- |')
  for (const i of INVARIANTS) rows.push(`| ${i} | ${s.violations[i]} |`)
  rows.push('')
  rows.push(
    '| measure | value |',
    '| --- | --- |',
    `| chat handoff after a holder was killed: p50 / p99 (n) | ${ms(s.handoffP50)} / ${ms(s.handoffP99)} (${s.handoffs.length}) |`,
    `| a live replica's waiting message granted after a replica with a queued message was killed: p50 / max from the kill (n) | ${ms(s.queuedMoveOnP50)} / ${ms(s.queuedMoveOnMax)} (${s.queuedMoveOns?.length ?? 0}) |`,
    `| new leader after the leader was killed: p50 / p99 (n) | ${ms(s.leaderP50)} / ${ms(s.leaderP99)} (${s.leaderFailovers.length}) |`,
    `| tickets of waits given up while cut off, gone after Redis answered again: p50 / max (n) | ${ms(s.withdrawP50)} / ${ms(s.withdrawMax)} (${s.withdrawRepairs?.length ?? 0}) |`,
    ...Object.entries(s.failoverStats ?? {}).map(
      ([kind, v]) =>
        `| ${kind}: promotion p50 / max, then every waiting chat moved on: p50 / max after it (n) | ${ms(v.promotionP50)} / ${ms(v.promotionMax)}, ${ms(v.moveOnP50)} / ${ms(v.moveOnMax)} (${v.n}) |`,
    ),
    `| overlaps explained by data loss or an operator's revocation (fenced, ended within the bound) | ${s.explainedOverlaps} |`,
    ...[...new Set((s.overlapWindows ?? []).map((w) => w.why))].map((why) => {
      const w = s.overlapWindows.filter((x) => x.why === why).map((x) => x.ms)
      return `| ${why}: double holding (old holder's last assertHeld after the new grant): p50 / max (n) | ${ms(pct(w, 50))} / ${ms(Math.max(...w))} (${w.length}) |`
    }),
    ...(s.resends?.length
      ? [
          `| recent releases sent again per server change: p50 / max (n) | ${pct(s.resends, 50)} / ${Math.max(...s.resends)} (${s.resends.length}) |`,
        ]
      : []),
    ...Object.entries(s.pauseLosses ?? {}).map(
      ([k, v]) =>
        `| ${k}: faults / nothing lost / leases lost while Redis still held them (renewMarginMs) / lost after Redis expired them too | ${v.faults} / ${v.kept} / ${v.margin} / ${v.expired} |`,
    ),
    `| 0.5× pauses and clock jumps checked for spurious loss | ${s.pauseLossChecks} |`,
    `| checkpoint key histories checked linearizable / over budget | ${s.linChecked} / ${s.linUnchecked} |`,
    `| lease losses by reason | ${
      Object.entries(s.losses)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || '–'
    } |`,
    `| warnings | ${
      Object.entries(s.warnings)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || '–'
    } |`,
  )
  if (s.failing.length) {
    rows.push('', `failing seeds: ${s.failing.map((f) => f.seed).join(', ')} (replay one: ${replayCommand})`)
  }
  return rows.join('\n')
}

export function formatFailure(res) {
  const out = [`  seed ${res.seed} plan ${JSON.stringify(res.plan)} history kept in ${res.dir}`]
  if (res.error) out.push(`  error: ${res.error.split('\n').slice(0, 4).join(' | ')}`)
  if (res.faults) out.push(`  faults: ${JSON.stringify(res.faults)}`)
  for (const v of res.violations.slice(0, 5)) {
    out.push(`  ✗ ${v.invariant}: ${v.message}`)
    for (const e of v.window.slice(0, 14)) out.push(`      ${JSON.stringify(e)}`)
  }
  if (res.violations.length > 5) out.push(`  … ${res.violations.length - 5} more`)
  return out.join('\n')
}
