// The table: every API route the daemon serves, each declared once in the file of its area, in the
// order the OpenAPI document lists them. buildApp registers it, src/openapi/document.ts writes the
// document from it, the tests enumerate it. The inspector's static files are not API routes
// (inspector.ts).
import { acpRoutes } from './acp.js';
import { agentRoutes } from './agents.js';
import { eventRoutes } from './events.js';
import { feedRoutes } from './feed.js';
import { daemonRoutes } from './health.js';
import { hitlRoutes } from './hitl.js';
import { metricsRoutes } from './metrics.js';
import type { Route } from './route.js';
import { queueRoutes } from './queue.js';
import { streamRoutes } from './sandbox-stream.js';
import { sessionRoutes } from './sessions.js';

export const ROUTES: readonly Route[] = [...daemonRoutes, ...metricsRoutes, ...sessionRoutes, ...queueRoutes, ...eventRoutes, ...feedRoutes, ...hitlRoutes, ...agentRoutes, ...acpRoutes, ...streamRoutes];
