// Opening an ACP connection, shared by sessions (driver.ts) and the models/modes queries
// (offerings.ts): spawn the agent with the JSON-RPC 2.0 peer, `initialize`, then open a session:
//
//   new      session/new {cwd, mcpServers}
//   resume   the daemon's nativeSessionId: session/resume where the agent announced
//            sessionCapabilities.resume (no replay), else session/load where it announced
//            loadSession (the agent replays the conversation as session/update notifications
//            before it answers; the daemon has that history already, so the replay is dropped:
//            `replaying` is true meanwhile), else the start fails: the agent cannot continue it.
//
// We advertise no client capabilities (no fs, no terminal): agents read and write files and run
// commands with their own tools, so nothing of the host is served through the daemon and every
// command's output reaches us in the agent's own tool updates.
import { ChildProcess, type SpawnOptions } from '../../process/spawn.js';
import { JsonRpcPeer, type PeerHandlers } from '../json-rpc.js';
import { InitializeResult, NewSessionResult, SessionSetup } from './native.js';
import { VERSION } from '../../version.js';

export const PROTOCOL_VERSION = 1;
export const CLIENT_CAPABILITIES = { fs: { readTextFile: false, writeTextFile: false }, terminal: false };
export const CLIENT_INFO = { name: 'agentwire', title: 'agentwire', version: VERSION };

export async function spawnAcp(options: SpawnOptions, handlers: PeerHandlers): Promise<{ peer: JsonRpcPeer; child: ChildProcess }> {
  return JsonRpcPeer.spawn(options, handlers, { jsonrpc: true });
}

export async function initialize(rpc: JsonRpcPeer, timeoutMs: number): Promise<InitializeResult> {
  const answer = await rpc.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: CLIENT_CAPABILITIES, clientInfo: CLIENT_INFO }, timeoutMs);
  const init = InitializeResult.safeParse(answer);
  if (!init.success) throw new Error(`initialize answered an unexpected shape: ${JSON.stringify(answer).slice(0, 200)}`);
  if (init.data.protocolVersion !== PROTOCOL_VERSION) {
    throw new Error(`the agent speaks ACP protocol version ${init.data.protocolVersion}; agentwire speaks ${PROTOCOL_VERSION}`);
  }
  return init.data;
}

export interface OpenRequest {
  cwd: string;
  mcpServers: Record<string, unknown>[];
  nativeSessionId?: string | undefined;
}

export interface OpenedSession {
  sessionId: string;
  setup: SessionSetup;
  how: 'new' | 'resume' | 'load' | 'fork';
}

export async function openSession(rpc: JsonRpcPeer, init: InitializeResult, request: OpenRequest, timeoutMs: number, replaying: (on: boolean) => void): Promise<OpenedSession> {
  const { cwd, mcpServers, nativeSessionId } = request;
  if (!nativeSessionId) {
    const answer = NewSessionResult.safeParse(await rpc.request('session/new', { cwd, mcpServers }, timeoutMs));
    if (!answer.success) throw new Error('session/new answered without a sessionId');
    return { sessionId: answer.data.sessionId, setup: answer.data, how: 'new' };
  }
  const caps = init.agentCapabilities;
  const params = { sessionId: nativeSessionId, cwd, mcpServers };
  if (caps?.sessionCapabilities?.resume != null) {
    return { sessionId: nativeSessionId, setup: setupOf(await rpc.request('session/resume', params, timeoutMs)), how: 'resume' };
  }
  if (caps?.loadSession) {
    replaying(true);
    try {
      return { sessionId: nativeSessionId, setup: setupOf(await rpc.request('session/load', params, timeoutMs)), how: 'load' };
    } finally {
      replaying(false);
    }
  }
  throw new Error('the agent announced neither loadSession nor session resume, so it cannot continue an earlier session');
}

const setupOf = (answer: unknown): SessionSetup => {
  const parsed = SessionSetup.safeParse(answer ?? {});
  return parsed.success ? parsed.data : {};
};
