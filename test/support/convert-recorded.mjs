// Shared by test/agents/<agent>/fixtures/from-recorded.mjs: turns each recorded/<scenario>.jsonl into a
// golden-walker case <scenario>.jsonl beside it. Received lines are kept verbatim; each
// {"$sent": …} line becomes what `daemonAction` makes of it (a {"$daemon": …} line) or is dropped.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * @param {string} here the agent's fixture folder
 * @param {(sent: any) => object | null} daemonAction
 */
export function convertRecorded(here, daemonAction) {
  const recorded = join(here, 'recorded');
  for (const file of readdirSync(recorded).filter((f) => f.endsWith('.jsonl')).sort()) {
    const out = [];
    for (const line of readFileSync(join(recorded, file), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const parsed = JSON.parse(line);
      if (!parsed || typeof parsed !== 'object' || !('$sent' in parsed)) {
        out.push(line);
        continue;
      }
      const action = daemonAction(parsed.$sent);
      if (action) out.push(JSON.stringify(action));
    }
    writeFileSync(join(here, file), `${out.join('\n')}\n`);
    console.log(`${file}: ${out.length} lines`);
  }
}
