// The malformed-request corpus for bad-input.test.ts. Each row names one way a client (or an
// attacker) can get a request wrong and the exact problem the daemon must answer with.
//
// Sessions the rows address (set up by the test): `live` (idle, one event), `perm` (waiting on
// permission {perm}), `quest` (waiting on question {question}) and `gone` (ended while permission
// {gonePerm} was pending). Rows never change their state, so the order of rows does not matter.

export interface Row {
  name: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'HEAD' | 'TRACE' | 'CONNECT' | 'PROPFIND' | 'SEARCH';
  /** {perm}, {question} and {gonePerm} are replaced with the ids the agent chose. */
  url: string;
  headers?: Record<string, string>;
  /** A string or Buffer is sent as is (as application/json unless headers say otherwise). */
  body?: string | Buffer | object;
  /** `allow`: the Allow header a 405 must carry. */
  expect: { status: number; code: string; errorPath?: string; allow?: string };
}

const BODY_LIMIT = 16 * 1024; // the test app's bodyLimitBytes

/** Every route that reads a JSON body, with a body that would be accepted there. */
const BODY_ROUTES: { route: string; url: string; valid: Record<string, unknown> }[] = [
  { route: 'create', url: '/v1/sessions/never', valid: { agent: 'mock' } },
  { route: 'create (generated id)', url: '/v1/sessions', valid: { agent: 'mock' } },
  { route: 'message', url: '/v1/sessions/live/messages', valid: { message: 'hi' } },
  { route: 'message stream', url: '/v1/sessions/live/messages/stream', valid: { message: 'hi' } },
  { route: 'permission reply', url: '/v1/sessions/perm/permissions/{perm}/reply', valid: { reply: 'once' } },
  { route: 'question reply', url: '/v1/sessions/quest/questions/{question}/reply', valid: { answers: [['red']] } },
];

/** An array nested `depth` levels deep (counting the outermost). */
const nest = (depth: number): unknown => (depth <= 1 ? [] : [nest(depth - 1)]);

const BROKEN_JSON: [string, string][] = [
  ['truncated', '{"message":"hi'],
  ['trailing comma', '{"message":"hi",}'],
  ['NaN', '{"message":NaN}'],
  ['single quotes', "{'message':'hi'}"],
  ['a comment', '{"message":"hi" /* why */}'],
  ['binary', '\u0000\u0001\u00ff{'],
];

const NOT_OBJECTS: [string, string][] = [
  ['an array', '[]'],
  ['a string', '"hello"'],
  ['a number', '42'],
  ['null', 'null'],
];

const bodyRows: Row[] = BODY_ROUTES.flatMap(({ route, url, valid }) => [
  ...BROKEN_JSON.map(([what, body]): Row => ({ name: `${route}: ${what} JSON`, url, body, expect: { status: 400, code: 'malformed_json' } })),
  ...NOT_OBJECTS.map(([what, body]): Row => ({ name: `${route}: ${what} body`, url, body, expect: { status: 400, code: 'invalid_request', errorPath: 'body' } })),
  { name: `${route}: no body`, url, expect: { status: 400, code: 'invalid_request' } },
  { name: `${route}: body over the limit`, url, body: { ...valid, pad: 'x'.repeat(BODY_LIMIT) }, expect: { status: 413, code: 'body_too_large' } },
  // Deep enough to overflow the stack of anything recursive, and still under the body limit.
  { name: `${route}: JSON nested 8000 deep`, url, body: `${'['.repeat(8000)}${']'.repeat(8000)}`, expect: { status: 400, code: 'invalid_request' } },
  { name: `${route}: JSON nested 65 deep in a field`, url, body: { ...valid, extra: nest(65) }, expect: { status: 400, code: 'invalid_request' } },
  { name: `${route}: unterminated JSON nested 3000 deep`, url, body: '{"a":'.repeat(3000), expect: { status: 400, code: 'invalid_request' } },
]);

/** Bodiless POSTs still parse a JSON body when one is sent. `gone` makes a slip harmless. */
const bodilessRows: Row[] = [
  { name: 'interrupt: broken JSON', url: '/v1/sessions/live/interrupt', body: '{bad', expect: { status: 400, code: 'malformed_json' } },
  { name: 'terminate: broken JSON', url: '/v1/sessions/gone/terminate', body: '{"a":', expect: { status: 400, code: 'malformed_json' } },
  { name: 'reject: broken JSON', url: '/v1/sessions/quest/questions/{question}/reject', body: '[1,', expect: { status: 400, code: 'malformed_json' } },
  { name: 'interrupt: body over the limit', url: '/v1/sessions/live/interrupt', body: { pad: 'x'.repeat(BODY_LIMIT) }, expect: { status: 413, code: 'body_too_large' } },
  { name: 'interrupt: text/plain', url: '/v1/sessions/live/interrupt', headers: { 'content-type': 'text/plain' }, body: 'stop', expect: { status: 415, code: 'unsupported_media_type' } },
  // A body on a route that takes none is refused like an unknown field; had it passed, `live`
  // would answer 409, `gone` 204/409 and `nope` 404.
  { name: 'interrupt: a JSON body', url: '/v1/sessions/live/interrupt', body: { force: true }, expect: { status: 400, code: 'invalid_request', errorPath: 'body' } },
  { name: 'interrupt: a JSON array body', url: '/v1/sessions/live/interrupt', body: '[]', expect: { status: 400, code: 'invalid_request', errorPath: 'body' } },
  { name: 'interrupt: a JSON null body', url: '/v1/sessions/live/interrupt', body: 'null', expect: { status: 400, code: 'invalid_request', errorPath: 'body' } },
  { name: 'terminate: a JSON body', url: '/v1/sessions/gone/terminate', body: { reason: 'done' }, expect: { status: 400, code: 'invalid_request', errorPath: 'body' } },
  { name: 'terminate: a JSON string body', url: '/v1/sessions/gone/terminate', body: '"now"', expect: { status: 400, code: 'invalid_request', errorPath: 'body' } },
  { name: 'question reject: a JSON body', url: '/v1/sessions/gone/questions/q_1/reject', body: { why: 'no' }, expect: { status: 400, code: 'invalid_request', errorPath: 'body' } },
  { name: 'delete: a JSON body', method: 'DELETE', url: '/v1/sessions/nope', body: { force: true }, expect: { status: 400, code: 'invalid_request', errorPath: 'body' } },
];

/** One wrong value per field, on a session id that must never come to exist. */
const createField = (field: string, value: unknown, why = 'wrong type'): Row => ({
  name: `create: ${field} ${why}`,
  url: '/v1/sessions/never',
  body: { agent: 'mock', [field]: value },
  expect: { status: 400, code: 'invalid_request', errorPath: field === 'agent' ? 'body.agent' : `body.${field}` },
});
const createRows: Row[] = [
  { name: 'create: agent missing', url: '/v1/sessions/never', body: {}, expect: { status: 400, code: 'invalid_request', errorPath: 'body.agent' } },
  createField('agent', 1),
  createField('agent', null, 'null'),
  createField('agent', 'gpt', 'unknown'),
  createField('agent', 'MOCK', 'wrong case'),
  createField('agentMode', 1),
  createField('agentMode', '', 'empty'),
  createField('permissionMode', 'yolo', 'unknown'),
  createField('permissionMode', true),
  createField('model', 5),
  createField('model', '', 'empty'),
  createField('variant', []),
  createField('agentVersion', {}),
  createField('title', 5),
  createField('title', 'x'.repeat(501), 'too long'),
  createField('cwd', 5),
  createField('cwd', '', 'empty'),
  createField('env', 'A=1'),
  createField('env', ['A=1'], 'array'),
  { ...createField('env', { A: 1 }, 'number value'), expect: { status: 400, code: 'invalid_request', errorPath: 'body.env.A' } },
  createField('mcp', 'server'),
  createField('mcp', [], 'array'),
  createField('permissionPolicy', 'maybe', 'unknown'),
  createField('hitlTimeoutMs', '5', 'string'),
  createField('hitlTimeoutMs', -1, 'negative'),
  { name: 'create: unknown field', url: '/v1/sessions/never', body: { agent: 'mock', agnet: 'mock' }, expect: { status: 400, code: 'invalid_request', errorPath: 'body' } },
  { name: 'create: __proto__ field', url: '/v1/sessions/never', body: '{"agent":"mock","__proto__":{"x":1}}', expect: { status: 400, code: 'invalid_request' } },
  { name: 'create: cwd that does not exist', url: '/v1/sessions/never', body: { agent: 'mock', cwd: 'no/such/dir' }, expect: { status: 400, code: 'invalid_cwd' } },
  // NUL cannot reach argv or the environment (exec refuses it): refused up front, not at spawn.
  { name: 'create: cwd with a NUL byte', url: '/v1/sessions/never', body: { agent: 'mock', cwd: 'a\u0000b' }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.cwd' } },
  { name: 'create: model with a NUL byte', url: '/v1/sessions/never', body: { agent: 'mock', model: 'a\u0000b' }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.model' } },
  { name: 'create: variant with a NUL byte', url: '/v1/sessions/never', body: { agent: 'mock', variant: 'a\u0000b' }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.variant' } },
  { name: 'create: env value with a NUL byte', url: '/v1/sessions/never', body: { agent: 'mock', env: { A: 'a\u0000b' } }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.env.A' } },
  { name: 'create: env name with "="', url: '/v1/sessions/never', body: { agent: 'mock', env: { 'A=B': 'x' } }, expect: { status: 400, code: 'invalid_request' } },
  { name: 'create: empty env name', url: '/v1/sessions/never', body: { agent: 'mock', env: { '': 'x' } }, expect: { status: 400, code: 'invalid_request' } },
  { name: 'create: model over 4096 characters', url: '/v1/sessions/never', body: { agent: 'mock', model: 'm'.repeat(4097) }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.model' } },
];

const messageRows: Row[] = [
  ...[1, null, [], {}, true].map((message): Row => ({ name: `message: message ${JSON.stringify(message)}`, url: '/v1/sessions/live/messages', body: { message }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.message' } })),
  { name: 'message: message missing', url: '/v1/sessions/live/messages', body: { text: 'hi' }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.message' } },
  { name: 'message: empty message', url: '/v1/sessions/live/messages', body: { message: '' }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.message' } },
  { name: 'message: attachments not an array', url: '/v1/sessions/live/messages', body: { message: 'hi', attachments: 'a.txt' }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.attachments' } },
  { name: 'message: attachment not an object', url: '/v1/sessions/live/messages', body: { message: 'hi', attachments: [1] }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.attachments.0' } },
  { name: 'message: attachment without path', url: '/v1/sessions/live/messages', body: { message: 'hi', attachments: [{}] }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.attachments.0.path' } },
  { name: 'message: attachment path empty', url: '/v1/sessions/live/messages', body: { message: 'hi', attachments: [{ path: '' }] }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.attachments.0.path' } },
  { name: 'message: attachment mime a number', url: '/v1/sessions/live/messages', body: { message: 'hi', attachments: [{ path: 'a', mime: 1 }] }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.attachments.0.mime' } },
  { name: 'message: 65 attachments', url: '/v1/sessions/live/messages', body: { message: 'hi', attachments: Array.from({ length: 65 }, () => ({ path: 'a' })) }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.attachments' } },
  { name: 'message: to an ended session', url: '/v1/sessions/gone/messages', body: { message: 'hi' }, expect: { status: 409, code: 'session_ended' } },
  { name: 'message stream: to an ended session', url: '/v1/sessions/gone/messages/stream', body: { message: 'hi' }, expect: { status: 409, code: 'session_ended' } },
  { name: 'message: while waiting on a permission', url: '/v1/sessions/perm/messages', body: { message: 'hi' }, expect: { status: 409, code: 'turn_in_progress' } },
  { name: 'interrupt: ended session', url: '/v1/sessions/gone/interrupt', expect: { status: 409, code: 'session_ended' } },
  { name: 'interrupt: nothing running', url: '/v1/sessions/live/interrupt', expect: { status: 409, code: 'no_turn_running' } },
  // Checked against `gone`: a lenient schema lets these through to the 409.
  { name: 'message: unknown field', url: '/v1/sessions/gone/messages', body: { message: 'hi', mesage: 'typo' }, expect: { status: 400, code: 'invalid_request' } },
  { name: 'message: unknown attachment field', url: '/v1/sessions/gone/messages', body: { message: 'hi', attachments: [{ path: 'a', size: 1 }] }, expect: { status: 400, code: 'invalid_request' } },
  { name: 'message: __proto__ field', url: '/v1/sessions/gone/messages', body: '{"message":"hi","__proto__":{"polluted":true}}', expect: { status: 400, code: 'invalid_request' } },
];

const replyRows: Row[] = [
  ...['maybe', 1, null, ['once'], 'ONCE'].map((reply): Row => ({ name: `permission reply: reply ${JSON.stringify(reply)}`, url: '/v1/sessions/perm/permissions/{perm}/reply', body: { reply }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.reply' } })),
  { name: 'permission reply: reply missing', url: '/v1/sessions/perm/permissions/{perm}/reply', body: { answer: 'once' }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.reply' } },
  ...(['red', ['red'], [[1]], [['red', null]], null, {}] as unknown[]).map((answers): Row => ({ name: `question reply: answers ${JSON.stringify(answers)}`, url: '/v1/sessions/quest/questions/{question}/reply', body: { answers }, expect: { status: 400, code: 'invalid_request' } })),
  { name: 'question reply: answers missing', url: '/v1/sessions/quest/questions/{question}/reply', body: { answer: [['red']] }, expect: { status: 400, code: 'invalid_request', errorPath: 'body.answers' } },
  { name: 'question reply to a permission id', url: '/v1/sessions/perm/questions/{perm}/reply', body: { answers: [['red']] }, expect: { status: 404, code: 'question_not_found' } },
  { name: 'question reject of a permission id', url: '/v1/sessions/perm/questions/{perm}/reject', expect: { status: 404, code: 'question_not_found' } },
  { name: 'permission reply to a question id', url: '/v1/sessions/quest/permissions/{question}/reply', body: { reply: 'once' }, expect: { status: 404, code: 'permission_not_found' } },
  { name: "permission reply to another session's permission", url: '/v1/sessions/quest/permissions/{perm}/reply', body: { reply: 'once' }, expect: { status: 404, code: 'permission_not_found' } },
  { name: 'permission reply: unknown id', url: '/v1/sessions/perm/permissions/perm_nope/reply', body: { reply: 'once' }, expect: { status: 404, code: 'permission_not_found' } },
  { name: 'permission reply: ended session', url: '/v1/sessions/gone/permissions/{gonePerm}/reply', body: { reply: 'once' }, expect: { status: 409, code: 'session_ended' } },
  { name: 'question reply: ended session', url: '/v1/sessions/gone/questions/q_1/reply', body: { answers: [['red']] }, expect: { status: 409, code: 'session_ended' } },
  { name: 'question reject: ended session', url: '/v1/sessions/gone/questions/q_1/reject', expect: { status: 409, code: 'session_ended' } },
  { name: 'permission reply: unknown field', url: '/v1/sessions/live/permissions/perm_nope/reply', body: { reply: 'once', remember: true }, expect: { status: 400, code: 'invalid_request' } },
  { name: 'question reply: unknown field', url: '/v1/sessions/live/questions/q_nope/reply', body: { answers: [['red']], why: 'x' }, expect: { status: 400, code: 'invalid_request' } },
];

const json = { 'content-type': 'application/json' };
const BAD_IDS: [string, string][] = [
  ['path traversal', '..%2F..%2Fetc'],
  ['encoded slash', 'a%2Fb'],
  ['NUL byte', 'a%00b'],
  ['space', 'a%20b'],
  ['unicode', '%C3%A9t%C3%A9'],
  ['emoji', '%F0%9F%98%80'],
  ['leading dot', '.hidden'],
  ['leading dash', '-rf'],
  ['empty', ''],
];
const idRows: Row[] = [
  ...BAD_IDS.map(([what, id]): Row => ({ name: `create: session id ${what}`, url: `/v1/sessions/${id}`, body: { agent: 'mock' }, expect: { status: 400, code: 'invalid_request', errorPath: 'path.id' } })),
  // Elsewhere an id that cannot exist is simply not found: nothing is created or touched.
  ...BAD_IDS.filter(([, id]) => id !== '').flatMap(([what, id]): Row[] => [
    { name: `get: session id ${what}`, method: 'GET', url: `/v1/sessions/${id}`, expect: { status: 404, code: 'session_not_found' } },
    { name: `events: session id ${what}`, method: 'GET', url: `/v1/sessions/${id}/events`, expect: { status: 404, code: 'session_not_found' } },
    { name: `message: session id ${what}`, url: `/v1/sessions/${id}/messages`, body: { message: 'hi' }, expect: { status: 404, code: 'session_not_found' } },
    { name: `delete: session id ${what}`, method: 'DELETE', url: `/v1/sessions/${id}`, expect: { status: 404, code: 'session_not_found' } },
  ]),
  { name: 'sse: unknown session', method: 'GET', url: '/v1/sessions/nope/events/sse', expect: { status: 404, code: 'session_not_found' } },
  { name: 'terminate: unknown session', url: '/v1/sessions/nope/terminate', expect: { status: 404, code: 'session_not_found' } },
  { name: 'permission reply: unknown session', url: '/v1/sessions/nope/permissions/{perm}/reply', body: { reply: 'once' }, expect: { status: 404, code: 'session_not_found' } },
  { name: 'create: session id of 129 characters', url: `/v1/sessions/${'a'.repeat(129)}`, body: { agent: 'mock' }, expect: { status: 400, code: 'invalid_request' } },
  { name: 'events: session id of 300 characters', method: 'GET', url: `/v1/sessions/${'a'.repeat(300)}/events`, expect: { status: 400, code: 'invalid_request' } },
  { name: 'create: broken percent-encoding', url: '/v1/sessions/%', body: { agent: 'mock' }, expect: { status: 400, code: 'invalid_request' } },
  { name: 'events: invalid UTF-8 escape', method: 'GET', url: '/v1/sessions/%E0%A4%A/events', expect: { status: 400, code: 'invalid_request' } },
];

const mediaRows: Row[] = [
  ['text/plain', 'message=hi'],
  ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--x--'],
  ['application/x-www-form-urlencoded', 'message=hi'],
  ['application/xml', '<message>hi</message>'],
  ['application/jsonx', '{"message":"hi"}'],
  ['application/problem+json', '{"message":"hi"}'],
  ['', '{"message":"hi"}'],
].map(([type, body]): Row => ({ name: `message as '${type}'`, url: '/v1/sessions/live/messages', headers: { 'content-type': type! }, body: body!, expect: { status: 415, code: 'unsupported_media_type' } }));
mediaRows.push(
  { name: 'message without a content type', url: '/v1/sessions/live/messages', headers: {}, body: '{"message":"hi"}', expect: { status: 415, code: 'unsupported_media_type' } },
  { name: 'huge text/plain body (415 before 413)', url: '/v1/sessions/live/messages', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(2 * BODY_LIMIT), expect: { status: 415, code: 'unsupported_media_type' } },
  { name: 'UTF-16 body declared as charset=utf-16', url: '/v1/sessions/live/messages', headers: { 'content-type': 'application/json; charset=utf-16' }, body: Buffer.from('{"message":"hi"}', 'utf16le'), expect: { status: 400, code: 'malformed_json' } },
  { name: 'Content-Length shorter than the body', url: '/v1/sessions/live/messages', headers: { ...json, 'content-length': '5' }, body: '{"message":"hi"}', expect: { status: 400, code: 'invalid_request' } },
);

const get = (name: string, url: string, code: string, headers?: Record<string, string>): Row => ({
  name,
  method: 'GET',
  url,
  ...(headers ? { headers } : {}),
  expect: { status: 400, code },
});
const manyParams = Array.from({ length: 5000 }, (_, i) => `p${i}=${i}`).join('&');
const cursorRows: Row[] = [
  ...['abc', '-1', '1.5', '1,2', 'NaN', 'Infinity'].map((id) => get(`sse: Last-Event-ID '${id}'`, '/v1/sessions/live/events/sse', 'invalid_request', { 'last-event-id': id })),
  get('sse: Last-Event-ID past the end', '/v1/sessions/live/events/sse', 'offset_ahead', { 'last-event-id': '2' }),
  get('sse: Last-Event-ID huge', '/v1/sessions/live/events/sse', 'invalid_request', { 'last-event-id': '9'.repeat(30) }),
  get('sse: Last-Event-ID in hex', '/v1/sessions/live/events/sse', 'invalid_request', { 'last-event-id': '0x10' }),
  get('sse: offset=abc', '/v1/sessions/live/events/sse?offset=abc', 'invalid_request'),
  get('sse: offset=-1', '/v1/sessions/live/events/sse?offset=-1', 'invalid_request'),
  get('sse: include_raw=maybe', '/v1/sessions/live/events/sse?include_raw=maybe', 'invalid_request'),
  get('poll: offset=-1', '/v1/sessions/live/events?offset=-1', 'invalid_request'),
  get('poll: offset=abc', '/v1/sessions/live/events?offset=abc', 'invalid_request'),
  get('poll: offset=1.5', '/v1/sessions/live/events?offset=1.5', 'invalid_request'),
  get('poll: offset given twice', '/v1/sessions/live/events?offset=0&offset=1', 'invalid_request'),
  get('poll: offset past the end', '/v1/sessions/live/events?offset=99999', 'offset_ahead'),
  get('poll: limit=0', '/v1/sessions/live/events?limit=0', 'invalid_request'),
  get('poll: limit=10001', '/v1/sessions/live/events?limit=10001', 'invalid_request'),
  get('poll: limit=-5', '/v1/sessions/live/events?limit=-5', 'invalid_request'),
  get('poll: limit=abc', '/v1/sessions/live/events?limit=abc', 'invalid_request'),
  get('poll: limit empty', '/v1/sessions/live/events?limit=', 'invalid_request'),
  get('poll: include_raw=yes', '/v1/sessions/live/events?include_raw=yes', 'invalid_request'),
  get('poll: includeRaw=2', '/v1/sessions/live/events?includeRaw=2', 'invalid_request'),
  get('poll: 5000 query params and a bad limit', `/v1/sessions/live/events?${manyParams}&limit=0`, 'invalid_request'),
  get('poll: a 200 kB query value and a bad offset', `/v1/sessions/live/events?x=${'a'.repeat(200_000)}&offset=-1`, 'invalid_request'),
  { name: 'stream: abort_on_disconnect=perhaps', url: '/v1/sessions/live/messages/stream?abort_on_disconnect=perhaps', body: { message: 'hi' }, expect: { status: 400, code: 'invalid_request' } },
];

/** Unknown query parameters are refused like unknown body fields (a typo is not a default). */
const unknownQuery = (name: string, method: Row['method'], url: string, errorPath: string, body?: object): Row => ({
  name,
  method,
  url,
  ...(body ? { body } : {}),
  expect: { status: 400, code: 'invalid_request', errorPath },
});
const queryRows: Row[] = [
  unknownQuery('poll: ?ofset=', 'GET', '/v1/sessions/live/events?ofset=1', 'query'),
  unknownQuery('poll: ?include-raw=', 'GET', '/v1/sessions/live/events?include-raw=true', 'query'),
  unknownQuery('poll: ?token= (only the streams take one)', 'GET', '/v1/sessions/live/events?token=abc', 'query'),
  unknownQuery('poll: 5000 unknown query params', 'GET', `/v1/sessions/live/events?${manyParams}`, 'query'),
  unknownQuery('sse: ?limit= (polls only)', 'GET', '/v1/sessions/live/events/sse?limit=5', 'query'),
  unknownQuery('sse: ?ofset=', 'GET', '/v1/sessions/live/events/sse?ofset=1', 'query'),
  unknownQuery('stream: ?offset= (a turn starts at its message)', 'POST', '/v1/sessions/gone/messages/stream?offset=1', 'query', { message: 'hi' }),
  unknownQuery('list: ?limit=', 'GET', '/v1/sessions?limit=1', 'query.limit'),
  unknownQuery('get: ?include_raw=', 'GET', '/v1/sessions/live?include_raw=true', 'query.include_raw'),
  unknownQuery('message: ?wait=', 'POST', '/v1/sessions/gone/messages?wait=true', 'query.wait', { message: 'hi' }),
  unknownQuery('terminate: ?force=', 'POST', '/v1/sessions/gone/terminate?force=1', 'query.force'),
  unknownQuery('create: ?agent=', 'POST', '/v1/sessions/never?agent=mock', 'query.agent', { agent: 'mock' }),
  unknownQuery('health: ?verbose=', 'GET', '/v1/health?verbose=1', 'query.verbose'),
  unknownQuery('agents: ?refresh=', 'GET', '/v1/agents?refresh=1', 'query.refresh'),
];

/** DNS rebinding: a page on a name that is not ours, re-pointed at 127.0.0.1 (see host.test.ts). */
const hostRows: Row[] = [
  { name: 'create: Host attacker.example:2468', url: '/v1/sessions/never', headers: { host: 'attacker.example:2468', 'content-type': 'application/json' }, body: '{"agent":"mock"}', expect: { status: 421, code: 'host_not_allowed' } },
  { name: 'message: Host attacker.example', url: '/v1/sessions/live/messages', headers: { host: 'attacker.example', 'content-type': 'application/json' }, body: '{"message":"echo pwned"}', expect: { status: 421, code: 'host_not_allowed' } },
  { name: 'permission reply: Host 0.0.0.0', url: '/v1/sessions/perm/permissions/{perm}/reply', headers: { host: '0.0.0.0:2468', 'content-type': 'application/json' }, body: '{"reply":"always"}', expect: { status: 421, code: 'host_not_allowed' } },
  { name: 'health: Host localhost.attacker.example', method: 'GET', url: '/v1/health', headers: { host: 'localhost.attacker.example' }, expect: { status: 421, code: 'host_not_allowed' } },
  { name: 'unknown route: Host attacker.example (421 before 404)', method: 'GET', url: '/nope', headers: { host: 'attacker.example' }, expect: { status: 421, code: 'host_not_allowed' } },
  { name: 'list: Host with userinfo', method: 'GET', url: '/v1/sessions', headers: { host: 'attacker.example@127.0.0.1' }, expect: { status: 400, code: 'invalid_request' } },
  { name: 'list: Host with a path', method: 'GET', url: '/v1/sessions', headers: { host: '127.0.0.1/x' }, expect: { status: 400, code: 'invalid_request' } },
];

const notFound = (method: Row['method'], url: string): Row => ({ name: `${method} ${url.slice(0, 60)}`, method, url, expect: { status: 404, code: 'not_found' } });
const notAllowed = (method: Row['method'], url: string, allow: string): Row => ({ name: `${method} ${url.slice(0, 60)}`, method, url, expect: { status: 405, code: 'method_not_allowed', allow } });
const routeRows: Row[] = [
  notAllowed('GET', '/v1/sessions/live/messages', 'POST'),
  notAllowed('GET', '/v1/sessions/live/terminate', 'POST'),
  notAllowed('GET', '/v1/sessions/live/interrupt', 'POST'),
  notAllowed('GET', '/v1/sessions/perm/permissions/{perm}/reply', 'POST'),
  notAllowed('PUT', '/v1/sessions/live', 'DELETE, GET, HEAD, PATCH, POST'),
  notAllowed('PATCH', '/v1/sessions/live/messages', 'POST'),
  notAllowed('DELETE', '/v1/sessions/live/messages', 'POST'),
  notAllowed('POST', '/v1/health', 'GET, HEAD'),
  notAllowed('POST', '/v1/sessions/live/events', 'GET, HEAD'),
  notAllowed('OPTIONS', '/v1/sessions/live', 'DELETE, GET, HEAD, PATCH, POST'),
  notAllowed('TRACE', '/v1/sessions', 'GET, HEAD, POST'),
  notAllowed('PROPFIND', '/v1/sessions', 'GET, HEAD, POST'),
  notAllowed('SEARCH', '/v1/agents', 'GET, HEAD'),
  notAllowed('CONNECT', '/v1/sessions/live', 'DELETE, GET, HEAD, PATCH, POST'),
  notAllowed('HEAD', '/v1/sessions/live/messages', 'POST'),
  notAllowed('GET', '/v1/sessions/live/messages?x=1', 'POST'),
  notFound('GET', '/v2/sessions'),
  notFound('PUT', '/v2/sessions'),
  notFound('CONNECT', '/nope'),
  notFound('GET', '/v1/sessions/live/../../etc/passwd'),
  notFound('GET', `/v1/${'a/'.repeat(50_000)}`),
];

export const CORPUS: Row[] = [...bodyRows, ...bodilessRows, ...createRows, ...messageRows, ...replyRows, ...idRows, ...mediaRows, ...cursorRows, ...queryRows, ...hostRows, ...routeRows];
