// The one end-to-end runner every agent's scenarios use (test/agents/<agent>/e2e.test.ts and the
// other *-e2e files): it owns what each test needs around its scenario, a throwaway sandbox (HOME,
// TMPDIR, XDG_* and the work dir, test/support/sandbox.ts), the fake model server
// (test/fake-model/), an in-process app (test/support/helpers.ts's makeApp, working in the sandbox)
// and the session it creates, and closes them after every test: the app, then the fake model, then
// the sandbox. An agent's file says only what is its own: the session's environment, the create
// request's extras, and files its CLI wants in the sandbox.
import { afterEach, beforeEach, expect } from 'vitest';
import type { App, AppDeps } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { PermissionMode } from '../../src/schema/api.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { startFakeModel, type FakeModel, type FakeModelOptions, type Scenario } from '../fake-model/server.js';
import { createMock, getEvents, makeApp, post } from './helpers.js';
import { makeSandbox, type Sandbox } from './sandbox.js';
import { needAgents } from './test-agents.js';
import { INSTALLABLE_AGENTS, type InstallableAgentId } from '../../src/agents/versions.js';

/** The resources of one test, closed after it in this order: app, fake model, sandbox. */
export interface E2EResources {
  /** The app, fake model and sandbox the test made last (throws when it made none). */
  readonly app: App;
  readonly fake: FakeModel;
  readonly sandbox: Sandbox;
  /** A sandbox (makeSandbox) closed after the test. */
  makeSandbox(prefix: string): Sandbox;
  /** A fake model (startFakeModel) closed after the test. */
  startFakeModel(opts: FakeModelOptions): Promise<FakeModel>;
  /** An app (makeApp) closed after the test. */
  makeApp(deps?: AppDeps): Promise<App>;
  /** Forgets the app without closing it (a test that closed it itself). */
  dropApp(): void;
}

/** Registers the afterEach that closes what a test made through the returned object. */
export function e2eResources(): E2EResources {
  let app: App | undefined;
  let fake: FakeModel | undefined;
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await app?.app.close();
    await fake?.close();
    sandbox?.cleanup();
    app = fake = sandbox = undefined;
  });
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`no ${what}: the test has not made one`);
    return value;
  };
  return {
    get app() {
      return need(app, 'app');
    },
    get fake() {
      return need(fake, 'fake model');
    },
    get sandbox() {
      return need(sandbox, 'sandbox');
    },
    makeSandbox(prefix) {
      sandbox = makeSandbox(prefix);
      return sandbox;
    },
    async startFakeModel(opts) {
      fake = await startFakeModel(opts);
      return fake;
    },
    async makeApp(deps = {}) {
      app = await makeApp(deps);
      return app;
    },
    dropApp() {
      app = undefined;
    },
  };
}

export interface AgentE2ESpec {
  /** The create request's `agent`. */
  agent: string;
  /** The session id `start` creates. */
  sid: string;
  /** The sandbox's name prefix (default `<agent>-e2e`). */
  sandboxName?: string;
  /** false: no fake model (an agent whose turns need no model of ours, such as Amp's stand-in). */
  fakeModel?: boolean;
  /** false: the file runs a stand-in, not the pinned CLI, so nothing is installed for it. */
  pinnedCli?: boolean;
  /** Run on the new sandbox before the fake model starts (files the CLI reads at start). */
  prepare?(sandbox: Sandbox): void;
  /** The app's deps besides `baseDir` (the sandbox's work dir). */
  app?(sandbox: Sandbox): AppDeps;
  /** The session's environment, built once the app is made (the fake is undefined without one). */
  env(ctx: { sandbox: Sandbox; fake: FakeModel | undefined }): Record<string, string>;
  /** Added to every create request (a model the agent needs picked, say). */
  body?: Record<string, unknown>;
}

export interface StartOptions {
  /** What the fake model answers (a function of the sandbox for paths inside it). */
  scenario?: Scenario | ((sandbox: Sandbox) => Scenario);
  /** Named scenarios, chosen by the request's scenario header. */
  scenarios?: Record<string, Scenario>;
  /** Sent as the create request's permissionMode; not sent when omitted. */
  permissionMode?: PermissionMode;
  /** Added to the create request (after the spec's body). */
  body?: Record<string, unknown>;
  /** Added to the session's environment (after the spec's env). */
  env?: Record<string, string>;
  /** Added to the app's config (after the spec's). */
  config?: Partial<Config>;
  /** Run on the sandbox after the spec's prepare. */
  prepare?(sandbox: Sandbox): void;
}

export interface Started {
  app: App;
  sandbox: Sandbox;
  /** The fake model (throws on access for a spec without one). */
  fake: FakeModel;
  /** The environment the session was created with. */
  env: Record<string, string>;
}

export interface AgentE2E extends E2EResources {
  /** A sandbox, the fake model, an app in the sandbox and session `sid`, created (asserts 200). */
  start(opts?: StartOptions): Promise<Started>;
  /** Every event of session `sid` so far. */
  events(includeRaw?: boolean): Promise<UniversalEvent[]>;
}

/** The runner for one agent's end-to-end file: call it at the top of the file (it adds an afterEach). */
export function agentE2E(spec: AgentE2ESpec): AgentE2E {
  // The pinned CLI, installed once before the file's tests (test/support/test-agents.ts).
  if (spec.pinnedCli !== false && (INSTALLABLE_AGENTS as readonly string[]).includes(spec.agent)) needAgents([spec.agent as InstallableAgentId]);
  const r = e2eResources();
  async function start(opts: StartOptions = {}): Promise<Started> {
    const sandbox = r.makeSandbox(spec.sandboxName ?? `${spec.agent}-e2e`);
    spec.prepare?.(sandbox);
    opts.prepare?.(sandbox);
    const scenario = typeof opts.scenario === 'function' ? opts.scenario(sandbox) : opts.scenario;
    const fake = spec.fakeModel === false ? undefined : await r.startFakeModel({ scenario, ...(opts.scenarios ? { scenarios: opts.scenarios } : {}) });
    const deps = spec.app?.(sandbox) ?? {};
    const config = deps.config || opts.config ? { ...deps.config, ...opts.config } : undefined;
    const app = await r.makeApp({ baseDir: sandbox.work, ...deps, ...(config ? { config } : {}) });
    const env = { ...spec.env({ sandbox, fake }), ...opts.env };
    const permissionMode = opts.permissionMode ? { permissionMode: opts.permissionMode } : {};
    const res = await post(app, `/v1/sessions/${spec.sid}`, { agent: spec.agent, cwd: sandbox.work, env, ...permissionMode, ...spec.body, ...opts.body });
    expect(res.statusCode, res.body).toBe(200);
    return { app, sandbox, env, get fake() { return r.fake; } };
  }
  return Object.assign(Object.create(r) as E2EResources, {
    start,
    events: (includeRaw = false) => getEvents(r.app, spec.sid, 0, includeRaw),
  }) as AgentE2E;
}

/** The mock's end-to-end files: before each test an app (no sandbox and no fake model: the mock is
 *  its own model) and mock session `sid` created with the defaults; closed after the test. */
export function mockE2E(sid: string): Pick<E2EResources, 'app'> {
  const r = e2eResources();
  beforeEach(async () => {
    await createMock(await r.makeApp(), sid);
  });
  return r;
}
