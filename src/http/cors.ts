// CORS is off unless origins are configured. Credentials are allowed only for explicit origins: a
// wildcard origin with credentials would let any page use a logged-in browser's access.
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

export async function installCors(app: FastifyInstance, config: Config): Promise<void> {
  if (config.corsOrigins.length === 0) return;
  const wildcard = config.corsOrigins.includes('*');
  await app.register(cors, {
    origin: wildcard ? '*' : config.corsOrigins,
    methods: config.corsMethods,
    allowedHeaders: config.corsHeaders,
    credentials: !wildcard,
    maxAge: 600,
    // Preflights end in the CORS hook, before auth: browsers never send credentials on them.
    hook: 'onRequest',
  });
}
