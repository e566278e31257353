#!/usr/bin/env node
// agentwire-mirror: follows agentwire daemons into PostgreSQL (docs/mirror.md).
import { main } from '../dist/mirror/cli.js';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`agentwire-mirror: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
