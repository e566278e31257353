// Content parts as the page draws them. Every string from an agent is rendered as text (Preact
// escapes it) except markdown, which goes through renderMarkdown (markdown.ts): the one place that
// produces markup, from escaped text.
import { useState } from 'preact/hooks';
import { MARKDOWN_LIMIT, renderMarkdown } from '../markdown.js';
import type { ContentPart } from '../types.js';

/** Past this many characters a text is drawn cut, with a button for the rest: one agent line of
 *  megabytes must not cost the page seconds of layout before anyone asked to read it. */
export const CLIP = 50_000;

/** Text drawn as text (never markup), cut at CLIP characters until the reader asks for all. */
export function Clipped(props: { text: string; class: string; label?: string }) {
  const [all, setAll] = useState(false);
  const cut = !all && props.text.length > CLIP;
  return (
    <>
      <pre class={props.text.length > CLIP ? `${props.class} long` : props.class} aria-label={props.label}>
        {cut ? props.text.slice(0, CLIP) : props.text.length > CLIP ? chunks(props.text) : props.text}
      </pre>
      {cut && (
        <p class="clipped-note">
          Showing {CLIP.toLocaleString('en')} of {props.text.length.toLocaleString('en')} characters.{' '}
          <button type="button" class="link" onClick={() => setAll(true)}>
            Show all {props.text.length.toLocaleString('en')} characters
          </button>
        </p>
      )}
    </>
  );
}

/** A long text as text nodes of CHUNK characters: Chromium lays out many short runs much faster
 *  than one huge one. */
const CHUNK = 2_000;
function chunks(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += CHUNK) out.push(text.slice(i, i + CHUNK));
  return out;
}

export function Markdown(props: { text: string }) {
  if (props.text.length > MARKDOWN_LIMIT) return <Clipped text={props.text} class="plain" />;
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(props.text) }} />;
}

/** A unified diff, line by line, added and removed lines marked (by class, and by their +/-). */
export function Diff(props: { diff: string }) {
  return (
    <pre class="diff">
      {props.diff.split('\n').map((line, i) => (
        <span key={i} class={line.startsWith('+++') || line.startsWith('---') ? 'diff-file' : line.startsWith('+') ? 'diff-add' : line.startsWith('-') ? 'diff-del' : line.startsWith('@@') ? 'diff-hunk' : undefined}>
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function Part(props: { part: ContentPart; markdown: boolean }) {
  const p = props.part;
  switch (p.type) {
    case 'text':
      return props.markdown ? <Markdown text={p.text} /> : <Clipped text={p.text} class="plain" />;
    case 'reasoning':
      // Folded: reasoning is there to look into, not to read first.
      return (
        <details class="reasoning">
          <summary>Reasoning ({p.visibility})</summary>
          <Clipped text={p.text} class="plain" />
        </details>
      );
    case 'json':
      return <pre class="json">{JSON.stringify(p.json, null, 2)}</pre>;
    case 'tool_call':
      return (
        <div class="tool-call">
          <p>
            Calls <code>{p.name}</code> <span class="muted small">{p.call_id}</span>
          </p>
          <pre class="json" aria-label="Arguments">{prettyJson(p.arguments)}</pre>
        </div>
      );
    case 'tool_result':
      return (
        <div class="tool-result">
          <p class="muted small">Result of {p.call_id}</p>
          <Clipped text={p.output} class="output" label="Output" />
        </div>
      );
    case 'file_ref':
      return (
        <div class="file-ref">
          <p>
            <span class={`badge file-${p.action}`}>{p.action}</span> <code>{p.path}</code>
          </p>
          {p.diff && <Diff diff={p.diff} />}
        </div>
      );
    case 'image':
      // An image the agent names by path is on the daemon's machine, which serves no files: the
      // page shows what it is. Only an inline data: image can be drawn (the CSP allows data:).
      return (
        <figure class="image">
          {p.path.startsWith('data:image/') ? <img src={p.path} alt="Image from the agent" /> : <span class="image-placeholder" aria-hidden="true">IMG</span>}
          <figcaption>
            Image <code>{p.path.startsWith('data:') ? `${p.path.slice(0, 40)}…` : p.path}</code> {p.mime && <span class="muted small">{p.mime}</span>}
          </figcaption>
        </figure>
      );
    case 'status':
      return (
        <p class="status-part">
          <span class="badge">{p.label}</span> {p.detail}
        </p>
      );
  }
}
