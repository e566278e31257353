#!/usr/bin/env node
// The `agentwire` command. The daemon is compiled to dist/ by `npm run build` (npm start does it).
import { main } from '../dist/main.js';

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exit(1);
});
