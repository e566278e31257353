// `npm run openapi`: writes the generated document to openapi.json at the repo root.
import { writeFileSync } from 'node:fs';
import { VERSION } from '../version.js';
import { buildOpenApi } from './document.js';

const target = new URL('../../openapi.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(buildOpenApi(VERSION), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
