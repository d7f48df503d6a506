import { defineConfig } from 'vitest/config'

// The unit lane (`npm run test:unit`): the tests of pure modules, with no redis-server started. The
// whole suite (`npm test`) runs them too, beside the ones that need Redis.
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/unit/**/*.test.tsx'],
    testTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
  },
})
