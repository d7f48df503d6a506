/**
 * The CLI's table printer: the same text as the cli-table3 layout it replaced (on colour codes, wide
 * characters, numbers, ragged rows, cells on several lines), and linear in its rows.
 */
import { describe, expect, it } from 'vitest'
import Table from 'cli-table3'
import { table } from '../../commands/output/table.js'

/** The printer as it was: cli-table3, borderless. */
function cliTable3(head: string[], rows: Array<Array<string | number>>): string {
  const none = Object.fromEntries(
    ['top', 'top-mid', 'top-left', 'top-right', 'bottom', 'bottom-mid', 'bottom-left', 'bottom-right']
      .concat(['left', 'left-mid', 'mid', 'mid-mid', 'right', 'right-mid', 'middle'])
      .map((k) => [k, '']),
  )
  const t = new Table({ head, style: { head: [], border: [], compact: true, 'padding-left': 0, 'padding-right': 2 }, chars: none })
  for (const r of rows) t.push(r.map((c) => String(c)))
  return t
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
}

describe('table', () => {
  it('prints what cli-table3 printed', () => {
    const red = (s: string) => `\u001b[31m${s}\u001b[39m`
    const cases: Array<[string[], Array<Array<string | number>>]> = [
      [['A', 'B'], []],
      [
        ['KEY', 'HOLDER', 'FENCE'],
        [
          ['chat:42', 'pod-a', 1795982440397002],
          ['chat:7', '', 12],
        ],
      ],
      [
        ['X', red('STATE')],
        [
          [red('dead'), 'ok'],
          ['漢字の鍵', '🙂'],
          ['', ''],
        ],
      ],
      [
        ['ONE', 'TWO', 'THREE'],
        [['a'], ['b', 'c'], ['d', 'e', 'f']],
      ],
      [
        ['A', 'B'],
        [
          ['two\nlines', 'x'],
          ['y', 'three\nli\nnes'],
        ],
      ],
      [['TICKET', 'REPLICA'], Array.from({ length: 50 }, (_, i) => [i, `pod-${'x'.repeat(i % 7)}`])],
    ]
    for (const [head, rows] of cases) expect(table(head, rows)).toBe(cliTable3(head, rows))
  })

  it('prints 100,000 rows (quadratic, this was minutes)', () => {
    const rows = Array.from({ length: 100_000 }, (_, i) => [i, 'pod-b', 'cc3e5a16', 'alive', '4.1s', '9.9s'])
    const out = table(['TICKET', 'REPLICA', 'INCARNATION', 'STATE', 'WAITED', 'DEADLINE'], rows)
    expect(out.split('\n')).toHaveLength(100_001)
  }, 30_000)
})
