// Mirrors a fleet of daemons into PostgreSQL with agentwire-client/mirror, prints its stats every
// two seconds, and on Ctrl-C stops (writing what was read) and shows what the tables hold.
//
//   npm start                              # a daemon on http://127.0.0.1:2468 (another terminal)
//   npm run build -w client                # the client's dist/, which this import resolves to
//   AGENTWIRE_MIRROR_DATABASE_URL=postgres://me@127.0.0.1/agentwire node examples/mirror-fleet.mjs
//
// AGENTWIRE_DAEMONS lists the daemons as id=baseUrl,id=baseUrl (default local=http://127.0.0.1:2468);
// a daemon's token comes from AGENTWIRE_MIRROR_TOKEN_<ID> (the id in upper case, other characters
// as _), else AGENTWIRE_MIRROR_TOKEN; the database password from PGPASSWORD or ~/.pgpass.
// docs/mirror.md has the tables and more queries.
import pg from 'pg';
import { mirror } from 'agentwire-client/mirror';

const connectionString = process.env.AGENTWIRE_MIRROR_DATABASE_URL;
if (!connectionString) throw new Error('set AGENTWIRE_MIRROR_DATABASE_URL to a PostgreSQL database the mirror may create its tables in');
const daemons = (process.env.AGENTWIRE_DAEMONS ?? 'local=http://127.0.0.1:2468').split(',').map((spec) => {
  const [id, baseUrl] = spec.split(/=(.*)/s);
  const token = process.env[`AGENTWIRE_MIRROR_TOKEN_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`] ?? process.env.AGENTWIRE_MIRROR_TOKEN;
  return { id, baseUrl, token };
});

const m = await mirror({ connectionString, daemons, log: (entry) => console.log(JSON.stringify(entry)) });
console.log(`mirroring ${daemons.map((d) => d.id).join(', ')}; Ctrl-C stops`);
const timer = setInterval(() => {
  const { eventsWritten, daemons: each } = m.stats();
  console.log(`${eventsWritten} events written; ${each.map((d) => `${d.id}: ${d.up ? 'up' : 'down'}, ${d.sessions} sessions, cursor ${d.cursor}`).join('; ')}`);
}, 2000);

process.once('SIGINT', async () => {
  clearInterval(timer);
  await m.stop();
  const db = new pg.Client({ connectionString });
  await db.connect();
  const sessions = await db.query('SELECT daemon_id, status, count(*)::int AS sessions FROM agentwire_sessions GROUP BY daemon_id, status ORDER BY 1, 2');
  console.table(sessions.rows);
  // The last session's finished messages, as text.
  const last = await db.query('SELECT daemon_id, session_id FROM agentwire_sessions ORDER BY updated_at DESC LIMIT 1');
  if (last.rows[0]) {
    const { daemon_id, session_id } = last.rows[0];
    const transcript = await db.query(
      `SELECT e.sequence, e.event #>> '{data,item,role}' AS role, string_agg(part->>'text', '' ORDER BY n) AS text
       FROM agentwire_events e, jsonb_array_elements(e.event #> '{data,item,content}') WITH ORDINALITY AS c(part, n)
       WHERE e.daemon_id = $1 AND e.session_id = $2 AND e.type = 'item.completed'
         AND e.event #>> '{data,item,kind}' = 'message' AND part->>'type' = 'text'
       GROUP BY e.sequence, role ORDER BY e.sequence`,
      [daemon_id, session_id],
    );
    console.log(`${daemon_id}/${session_id}:`);
    for (const row of transcript.rows) console.log(`  ${row.role}: ${row.text}`);
  }
  await db.end();
});
