import { defineConfig } from 'vitest/config'
import { SlowFirst } from './test/setup/sequencer.js'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    globalSetup: ['test/setup/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: true,
    // vitest 4: top-level option (poolOptions.forks.* is gone). Three on a 2-core machine: most test
    // files wait on redis-server, the CLI's processes and terminals (with two workers the cores were
    // busy 1.3 of 2 on average); three took the suite from 458 s to 345 s here.
    maxWorkers: 3,
    sequence: { sequencer: SlowFirst },
  },
})
