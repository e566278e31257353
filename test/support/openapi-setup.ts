// A vitest setup file (vitest.config.ts): after each test, the exchanges that test made with an
// app or a daemon that does not match the committed openapi.json (test/support/openapi-check.ts)
// fail it, each violation naming the operation and what broke. What arrives between tests (a
// beforeAll's requests, a stream closed after its test) fails the file's afterAll instead.
import { afterAll, afterEach } from 'vitest';
import { takeViolations } from './openapi-violations.js';

function failOnViolations(): void {
  const violations = takeViolations();
  if (violations.length > 0) {
    throw new Error(`${violations.length} exchange(s) break openapi.json (fix the daemon or the document, then npm run openapi):\n- ${[...new Set(violations)].join('\n- ')}`);
  }
}

afterEach(failOnViolations);
afterAll(failOnViolations);
