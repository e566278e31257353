// Test helper: request bodies and headers shaped like the ones the real CLIs send — read off
// Claude Code 2.1.330, Codex 0.169.0 and OpenCode 1.18.33 (the pins then) talking to this fake
// model (tool names, JSON schemas and top-level keys as they sent them; descriptions and prompts
// trimmed) — so the tool mapping is tested against what it will meet.

const schema2020 = 'https://json-schema.org/draft/2020-12/schema';
const str = (description: string) => ({ type: 'string', description });
const num = (description: string) => ({ type: 'number', description });
const bool = (description: string) => ({ type: 'boolean', description });

// ---- Claude Code (Anthropic Messages) ----

export const claudeTools = [
  {
    name: 'Bash',
    description: 'Executes a given bash command in a persistent shell session…',
    input_schema: {
      type: 'object',
      properties: {
        command: str('The command to execute'),
        timeout: num('Optional timeout in milliseconds (max 600000)'),
        description: str('Clear, concise description of what this command does in active voice.'),
        run_in_background: bool('Set to true to run this command in the background.'),
        dangerouslyDisableSandbox: bool('Set this to true to dangerously override sandbox mode.'),
      },
      required: ['command'],
      additionalProperties: false,
      $schema: schema2020,
    },
  },
  {
    name: 'Write',
    description: 'Writes a file to the local filesystem.',
    input_schema: {
      type: 'object',
      properties: {
        file_path: str('The absolute path to the file to write (must be absolute, not relative)'),
        content: str('The content to write to the file'),
      },
      required: ['file_path', 'content'],
      additionalProperties: false,
      $schema: schema2020,
    },
  },
  {
    name: 'Read',
    description: 'Reads a file from the local filesystem.',
    input_schema: {
      type: 'object',
      properties: { file_path: str('The absolute path to the file to read'), offset: num('line'), limit: num('lines') },
      required: ['file_path'],
      additionalProperties: false,
      $schema: schema2020,
    },
  },
];

export const claudeHeaders = {
  'anthropic-version': '2023-06-01',
  'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27',
  'x-api-key': 'sk-ant-test-key',
  'x-app': 'cli',
  'x-stainless-retry-count': '0',
  'x-claude-code-session-id': '58db4d1a-0000-4000-8000-000000000000',
  'user-agent': 'claude-cli/2.1.330 (external, sdk-cli)',
};

export function claudeRequest(messages: unknown[], extra: Record<string, unknown> = {}) {
  return {
    model: 'claude-opus-5-5',
    messages,
    system: [
      { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.330; cc_entrypoint=sdk-cli;' },
      { type: 'text', text: "You are a Claude agent, built on Anthropic's Claude Agent SDK.", cache_control: { type: 'ephemeral' } },
    ],
    tools: claudeTools,
    metadata: { user_id: JSON.stringify({ device_id: 'dev', account_uuid: '', session_id: '58db4d1a' }) },
    max_tokens: 128000,
    thinking: { type: 'adaptive', display: 'updates' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    output_config: { effort: 'medium' },
    stream: true,
    ...extra,
  };
}

export const userText = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });

// ---- Codex (OpenAI Responses) ----

export const codexExecCommand = {
  type: 'function',
  name: 'exec_command',
  description: 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.',
  strict: false,
  parameters: {
    type: 'object',
    properties: {
      cmd: str('Shell command to execute.'),
      justification: str('User-facing approval question for `require_escalated`; omit otherwise.'),
      login: bool('True runs the shell with -l/-i semantics; false disables them. Defaults to true.'),
      max_output_tokens: num('Output token budget. Defaults to 10000 tokens.'),
      prefix_rule: { type: 'array', items: { type: 'string' }, description: 'Reusable approval prefix for `cmd`.' },
      sandbox_permissions: str('Sandbox permissions for the command.'),
      shell: str("Shell binary to launch. Defaults to the user's default shell."),
      tty: bool('Whether to allocate a TTY for the command.'),
      workdir: str('Optional working directory to run the command in; defaults to the turn cwd.'),
      yield_time_ms: num('How long to wait (in milliseconds) for output before yielding.'),
    },
    required: ['cmd'],
    additionalProperties: false,
  },
};

export const codexShell = {
  type: 'function',
  name: 'shell',
  description: 'Runs a shell command and returns its output.',
  strict: false,
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'array', items: { type: 'string' }, description: 'The command to execute' },
      workdir: str('The working directory to execute the command in'),
      timeout_ms: num('The timeout for the command in milliseconds'),
    },
    required: ['command'],
    additionalProperties: false,
  },
};

export const codexShellCommand = {
  type: 'function',
  name: 'shell_command',
  description: 'Runs a shell command and returns its output.',
  strict: false,
  parameters: {
    type: 'object',
    properties: { command: str('The shell script to execute in the user\'s default shell'), workdir: str('cwd') },
    required: ['command'],
    additionalProperties: false,
  },
};

export const codexApplyPatchFreeform = {
  type: 'custom',
  name: 'apply_patch',
  description: 'The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
  format: {
    type: 'grammar',
    syntax: 'lark',
    definition: 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\nend_patch: "*** End Patch" LF?\n',
  },
};

export const codexApplyPatchFunction = {
  type: 'function',
  name: 'apply_patch',
  description: 'Use the `apply_patch` tool to edit files.',
  strict: false,
  parameters: {
    type: 'object',
    properties: { input: str('The entire contents of the apply_patch command') },
    required: ['input'],
    additionalProperties: false,
  },
};

export const codexUpdatePlan = {
  type: 'function',
  name: 'update_plan',
  description: 'Updates the task plan.',
  strict: false,
  parameters: { type: 'object', properties: { explanation: str('x'), plan: { type: 'array', items: { type: 'object' } } }, required: ['plan'] },
};

/** Codex also sends tools the fake model never maps onto: hosted ones without a name. */
export const codexHostedTools = [
  { type: 'tool_search', execution: 'client', description: '# Tool discovery…', parameters: { type: 'object', properties: {} } },
  { type: 'web_search', external_web_access: true, search_content_types: ['text', 'image'] },
];

export const codexHeaders = {
  authorization: 'Bearer sk-codex-test-key',
  originator: 'codex_exec',
  accept: 'text/event-stream',
  'user-agent': 'codex_exec/0.169.0 (Debian 12.0.0; x86_64) unknown (codex_exec; 0.169.0)',
  'session-id': '01a1ffc1-0000-7000-8000-000000000000',
  'thread-id': '01a1ffc1-0000-7000-8000-000000000000',
  'x-client-request-id': '01a1ffc1-0000-7000-8000-000000000000',
};

export const codexUser = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });

export const codexDefaultTools = [codexExecCommand, codexUpdatePlan, codexApplyPatchFreeform, ...codexHostedTools];

export function codexRequest(input: unknown[], tools: unknown[] = codexDefaultTools, extra: Record<string, unknown> = {}) {
  return {
    model: 'gpt-5.5',
    stream: true,
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>…' }] },
      codexUser('<environment_context>\n  <cwd>/tmp/work</cwd>\n  <shell>bash</shell>\n</environment_context>'),
      ...input,
    ],
    tools,
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: { effort: 'medium' },
    store: false,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: '01a1ffc1-0000-7000-8000-000000000000',
    text: { verbosity: 'low' },
    client_metadata: { session_id: '01a1ffc1-0000-7000-8000-000000000000' },
    ...extra,
  };
}

// ---- OpenCode (Chat Completions via @ai-sdk/openai-compatible) ----

const fn = (name: string, description: string, parameters: Record<string, unknown>) => ({
  type: 'function',
  function: { name, description, parameters: { $schema: schema2020, type: 'object', ...parameters } },
});

export const opencodeTools = [
  fn('bash', 'Executes a given bash command in a persistent shell session…', {
    properties: {
      command: str('The command to execute'),
      timeout: { type: 'integer', exclusiveMinimum: 0, description: 'Optional timeout in milliseconds' },
      workdir: str('The working directory to run the command in. Defaults to the current directory.'),
    },
    required: ['command'],
  }),
  fn('write', 'Writes a file to the local filesystem.', {
    properties: {
      content: str('The content to write to the file'),
      filePath: str('The absolute path to the file to write (must be absolute, not relative)'),
    },
    required: ['content', 'filePath'],
  }),
  fn('read', 'Reads a file from the local filesystem.', {
    properties: { filePath: str('The path to the file to read'), offset: num('line'), limit: num('lines') },
    required: ['filePath'],
  }),
];

export const opencodeHeaders = {
  authorization: 'Bearer opencode-test-key',
  'user-agent': 'opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14',
  'x-session-id': 'ses_test',
  'x-session-affinity': 'ses_test',
};

export function opencodeRequest(messages: unknown[], extra: Record<string, unknown> = {}) {
  return {
    model: 'fake-model',
    max_tokens: 32000,
    messages: [{ role: 'system', content: 'You are opencode, an interactive CLI tool that helps users with software engineering tasks.' }, ...messages],
    tools: opencodeTools,
    tool_choice: 'auto',
    stream: true,
    stream_options: { include_usage: true },
    ...extra,
  };
}

// Gemini CLI 0.61.0 (@google/genai): two of its tools as it declares them (parametersJsonSchema),
// its generationConfig, and the API-key header the SDK sends.
export const geminiTools = [
  {
    functionDeclarations: [
      {
        name: 'write_file',
        description: 'Writes content to a specified file in the local filesystem.',
        parametersJsonSchema: {
          type: 'object',
          properties: { file_path: { type: 'string' }, content: { type: 'string' } },
          required: ['file_path', 'content'],
        },
      },
      {
        name: 'run_shell_command',
        description: 'Executes a given shell command as `bash -c <command>`.',
        parametersJsonSchema: {
          type: 'object',
          properties: {
            command: { type: 'string' },
            description: { type: 'string' },
            dir_path: { type: 'string' },
            is_background: { type: 'boolean' },
            delay_ms: { type: 'integer' },
          },
          required: ['command'],
        },
      },
    ],
  },
];

export const geminiHeaders = { 'x-goog-api-key': 'fake-key', 'x-goog-api-client': 'google-genai-sdk/1.30.0 gl-node/v20.20.2' };

export const geminiUser = (text: string) => ({ role: 'user', parts: [{ text }] });

export function geminiRequest(contents: unknown[], extra: Record<string, unknown> = {}) {
  return {
    contents,
    systemInstruction: { parts: [{ text: 'You are an interactive CLI agent.' }] },
    tools: geminiTools,
    generationConfig: { temperature: 1, topP: 0.95, topK: 64, thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 } },
    ...extra,
  };
}
