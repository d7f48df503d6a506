import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * The slowest test files (30–90 s each on a 2-core machine), slowest first. They start first, so that
 * the workers end together: on a fresh clone vitest has no timings yet and orders files by size,
 * which can leave a 90 s file for last with one core idle.
 */
const SLOW = [
  'test/chaos-smoke.test.ts',
  'test/cli/snapshot-replay.test.ts',
  'test/cli/read-commands.test.ts',
  'test/cli/help-completion.test.ts',
  'test/ha/sentinel.test.ts',
  'test/cli/untrusted-text.test.ts',
  'test/docs/command-lines.test.ts',
  'test/cli/operator-grade.test.ts',
  'test/cli/write-commands.test.ts',
  'test/bench-smoke.test.ts',
  'test/cli/demo.test.ts',
]

export class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (f: TestSpecification) => {
      const i = SLOW.findIndex((s) => f.moduleId.endsWith(s))
      return i < 0 ? SLOW.length : i
    }
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f)
  }
}
