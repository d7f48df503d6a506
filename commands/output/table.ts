import Table from 'cli-table3'

/** A borderless table for people (cli-table3), headers dimmed by the caller's colour. */
export function table(head: string[], rows: Array<Array<string | number>>): string {
  const t = new Table({
    head,
    style: { head: [], border: [], compact: true, 'padding-left': 0, 'padding-right': 2 },
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '',
    },
  })
  for (const r of rows) t.push(r.map((c) => String(c)))
  return t
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
}
