// agentwire-client: the public surface. Everything here runs in Node ≥ 20 and in browsers.
export { createClient, CREATE_TIMEOUT_MS, INSTALL_TIMEOUT_MS, type AgentwireClient } from './client.js';
export { Session, type ForkedSession, type SendOptions } from './session.js';
export { AgentwireError, type ClientErrorCode, type ErrorCode } from './errors.js';
export { DEFAULT_TIMEOUT_MS, type ClientOptions, type FetchLike } from './transport.js';
export { type EventsOptions, type ReconnectInfo } from './event-stream.js';
export { DEFAULT_IDLE_TIMEOUT_MS } from './resuming-sse.js';
export { type FeedOptions, type FeedPageOptions } from './feed-stream.js';
export { RECONNECT_DEFAULTS, type ReconnectOptions } from './backoff.js';
export { finalText, type TurnOptions, type TurnResult } from './turn.js';
export { type StreamOptions } from './sandbox-stream.js';
export type * from './types.js';
export type { components, operations, paths } from './openapi.js';
