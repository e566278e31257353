// --acp-agent and --acp-agents-file: parsing, the checks at start, and the agents they add.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAcpAgentSpec, splitWords } from '../../../src/schema/acp-agents.js';
import { createRegistry } from '../../../src/agents/registry.js';
import { ConfigError } from '../../../src/config-error.js';
import { loadConfig } from '../../../src/config.js';

const dir = mkdtempSync(join(tmpdir(), 'agentwire-acp-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('--acp-agent', () => {
  it('parses name=command args…, split like a shell splits words and quotes', () => {
    expect(parseAcpAgentSpec('goose=goose acp')).toEqual({ name: 'goose', command: 'goose', args: ['acp'] });
    expect(splitWords(`a 'b c' "d \\"e\\"" f\\ g`)).toEqual(['a', 'b c', 'd "e"', 'f g']);
    expect(splitWords(`'open`)).toMatch(/unterminated/);
    expect(parseAcpAgentSpec('nocommand=')).toMatch(/names no command/);
    expect(parseAcpAgentSpec('Bad Name=x')).toMatch(/agent name/);
  });

  it('repeats as a flag; the variable separates entries with ; or newlines', () => {
    const flags = loadConfig(['--acp-agent', 'one=one-cli --acp', '--acp-agent', 'two=/opt/two acp'], {});
    expect(flags.acpAgents.map((a) => [a.name, a.command, a.args])).toEqual([['one', 'one-cli', ['--acp']], ['two', '/opt/two', ['acp']]]);
    const env = loadConfig([], { AGENTWIRE_ACP_AGENT: 'one=one-cli --acp, --x;two=two\nthree=three' });
    expect(env.acpAgents.map((a) => [a.name, a.args])).toEqual([['one', ['--acp,', '--x']], ['two', []], ['three', []]]);
  });

  it('refuses a built-in name, a name given twice and a malformed entry, naming the flag', () => {
    expect(() => loadConfig(['--acp-agent', 'claude=x'], {})).toThrow(/'claude' is a built-in agent/);
    expect(() => loadConfig(['--acp-agent', 'a=x', '--acp-agent', 'a=y'], {})).toThrow(/given twice/);
    expect(() => loadConfig(['--acp-agent', 'justaname'], {})).toThrow(ConfigError);
    expect(() => loadConfig(['--acp-agent', 'justaname'], {})).toThrow(/^--acp-agent \(AGENTWIRE_ACP_AGENT\): /);
  });
});

describe('--acp-agents-file', () => {
  it('adds the file\'s agents, with their env and package', () => {
    const file = join(dir, 'agents.json');
    writeFileSync(file, JSON.stringify({ agents: { mine: { command: 'mine-cli', args: ['--acp'], env: { MODE: 'x' }, package: '@me/mine-cli@1.2.3' } } }));
    const config = loadConfig(['--acp-agent', 'other=other', '--acp-agents-file', file], {});
    expect(config.acpAgents.map((a) => a.name)).toEqual(['other', 'mine']);
    expect(config.acpAgents[1]).toEqual({ name: 'mine', command: 'mine-cli', args: ['--acp'], env: { MODE: 'x' }, package: '@me/mine-cli@1.2.3' });
    const registry = createRegistry({ maxLineChars: 1024, killGraceMs: 100, startTimeoutMs: 1000, stderrHeadLines: 5, stderrTailLines: 5, acpAgents: config.acpAgents });
    expect(registry.mine?.npmPackage).toEqual({ package: '@me/mine-cli', version: '1.2.3', bin: 'mine-cli' });
    expect(registry.mine?.capabilities).toMatchObject({ permissions: true, questions: false });
  });

  it('refuses a file that is not JSON, an unknown key and a package without an exact version', () => {
    const bad = (content: string) => {
      const file = join(dir, `bad-${Math.random()}.json`);
      writeFileSync(file, content);
      return () => loadConfig(['--acp-agents-file', file], {});
    };
    expect(bad('{nope')).toThrow(/cannot read it as JSON/);
    expect(bad(JSON.stringify({ agents: { a: { command: 'a', colour: 'red' } } }))).toThrow(/--acp-agents-file/);
    expect(bad(JSON.stringify({ agents: { a: { command: 'a', package: 'a@^1.0.0' } } }))).toThrow(/exact version/);
    expect(() => loadConfig(['--acp-agents-file', join(dir, 'missing.json')], {})).toThrow(/ENOENT/);
  });
});
