// Agent text is hostile data. Markdown is rendered by markdown-it with raw HTML off (every `<` in
// the text comes out escaped) and its link validation on (javascript:, vbscript:, file: and data:
// URLs are not turned into links); images are off too, so a message cannot make the page load
// anything (the CSP would refuse it anyway: img-src 'self' data:). Links open in a new tab with no
// opener and no referrer. What comes out is markdown-it's own markup of escaped text.
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
md.disable('image');

const defaultLinkOpen =
  md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  token.attrSet('target', '_blank');
  token.attrSet('rel', 'noopener noreferrer nofollow');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

/** Past this many characters a text is shown as plain text: markdown would gain nothing and cost a lot. */
export const MARKDOWN_LIMIT = 50_000;

export function renderMarkdown(text: string): string {
  return md.render(text);
}
