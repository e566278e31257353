import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Installs the pinned agent CLIs once (reused when present): the real-CLI tests need them.
    globalSetup: ['test/global-setup.ts'],
    // Fails a test whose requests or answers break openapi.json (test/support/openapi-check.ts).
    setupFiles: ['test/support/openapi-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Tests spawn real agent processes; two cores are shared between workers and children.
    maxWorkers: 2,
    // The JSON report is what .ci/run summarises into its closing "N passed, N failed" line. It
    // runs the suite once per Node version and keeps both reports, so it names each pass's file.
    reporters: ['default', ['json', { outputFile: process.env.VITEST_REPORT_FILE || '.vitest-report.json' }]],
  },
});
