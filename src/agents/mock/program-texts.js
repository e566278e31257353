// The mock's canned texts, kept apart so the command table stays readable.

export const NOTES_WRITE_DIFF = '--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n';
export const NOTES_PATCH_DIFF = '--- a/notes.txt\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n';

export const HELP = [
  'Commands (case-insensitive first word):',
  'help - this list',
  'demo - every item kind and content part in one turn',
  'markdown - a small markdown document, streamed',
  'tool - a write_file tool call and its result (nothing is written)',
  'subagent - a delegate call whose sub-agent talks, lists files and reports back',
  'status - a progress notice and a short message',
  'image - a message with a picture part',
  'unknown - an artifact the daemon has no item kind for',
  'permission - ask permission to write notes.txt, then act on the reply',
  'question - ask which color you prefer, then report the answer',
  'error - report a failure, then finish the turn',
  'unparsed - print one line that is not JSON',
  'end - say goodbye and exit 0',
  'history - the earlier prompts of this session, those before a resume included',
  'echo X - reply with exactly X',
  'shell CMD - run CMD with sh -c as a shell tool call and report its output',
  'crash [N] - print N lines to stderr and exit 3 (default 5)',
  'slow [N] - N chunks, 100 ms apart (default 10)',
  'flood [N] - N chunks as fast as stdout takes them (default 1000)',
  'spend [N] [IN] [OUT] - N steps, each reporting its token usage; waits for the daemon between steps',
  'Reply with exactly the single word W. - reply W',
  'Answer briefly and include your reasoning. - reasoning, text and data parts',
  'anything else - echoed back',
].join('\n');

export const MARKDOWN = [
  '# Mock report\n',
  '\n',
  'Things the mock can do:\n',
  '\n',
  '- stream text\n',
  '- call tools\n',
  '- ask questions\n',
  '\n',
  '```js\n',
  "console.log('hello');\n",
  '```\n',
];
