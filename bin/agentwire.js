#!/usr/bin/env node
// The `agentwire` command. `npm run build` (npm start does it) compiles src/ to dist/ and bundles
// it into dist/agentwire.mjs, which starts faster and smaller than the module tree (scripts/bundle.js).
import { main } from '../dist/agentwire.mjs';

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exit(1);
});
