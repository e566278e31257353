// What configuration may say about an ACP agent (docs/acp.md, "Any ACP agent"): an entry of
// `--acp-agent 'name=command args…'` (repeatable; AGENTWIRE_ACP_AGENT separates entries with `;` or
// newlines) or of an --acp-agents-file JSON file, which can also name an npm package to install the
// agent from. src/config.ts validates the configuration with these schemas; turning an entry into an
// agent is src/agents/acp/configured.ts's job. They live here, below both, so that the
// configuration does not depend on the agents it configures.
import { AGENT_NAME, EXACT_VERSION } from './agents.js';
import { z } from './zod.js';

const PACKAGE = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*@.+$/i;

export const AcpAgentConfig = z
  .object({
    name: z.string().regex(AGENT_NAME, 'an agent name: a lower-case letter, then letters, digits, _ or -, at most 40 characters'),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
    /** `name@exact-version`; the command is then the package's bin, installed into the agents dir. */
    package: z
      .string()
      .regex(PACKAGE, 'an npm package with an exact version: name@1.2.3')
      .refine((p) => EXACT_VERSION.test(p.slice(p.lastIndexOf('@') + 1)), 'an exact version (x.y.z), never a range or tag')
      .optional(),
  })
  .strict();
export type AcpAgentConfig = z.infer<typeof AcpAgentConfig>;

/** `name=command args…`, the arguments split like a shell does for plain words and quotes. */
export function parseAcpAgentSpec(spec: string): AcpAgentConfig | string {
  const eq = spec.indexOf('=');
  if (eq <= 0) return `'${spec}' is not name=command args…`;
  const words = splitWords(spec.slice(eq + 1));
  if (typeof words === 'string') return words;
  if (words.length === 0) return `'${spec}' names no command`;
  const parsed = AcpAgentConfig.safeParse({ name: spec.slice(0, eq).trim(), command: words[0], args: words.slice(1) });
  return parsed.success ? parsed.data : `'${spec}': ${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`;
}

/** The entries of an --acp-agents-file: {"agents": {"<name>": {command, args?, env?, package?}}}. */
export const AcpAgentsFile = z.object({ agents: z.record(z.string(), AcpAgentConfig.omit({ name: true })) }).strict();

/** Words separated by blanks; '…' and "…" quote (no escapes inside single quotes, \ inside double). */
export function splitWords(text: string): string[] | string {
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < text.length) word += text[++i]!;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === '\\' && i + 1 < text.length) word = (word ?? '') + text[++i]!;
    else word = (word ?? '') + c;
  }
  if (quote) return `unterminated ${quote} quote in '${text}'`;
  if (word !== null) words.push(word);
  return words;
}
