// What the tests' exchanges broke in openapi.json (./openapi-check.ts records it), until the setup
// file (./openapi-setup.ts) takes it after each test. Its own module, so that the setup file,
// which every test file loads, does not load the checker and its validators with it.
const recorded: string[] = [];

export function recordViolations(violations: readonly string[]): void {
  recorded.push(...violations);
}

/** The violations recorded since the last call. */
export function takeViolations(): string[] {
  return recorded.splice(0);
}
