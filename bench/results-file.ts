// bench/RESULTS.md is shared by the benchmarks: each owns one "## " section and rewrites only that,
// so a run of one benchmark keeps the others' last tables.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const NEW_FILE = '# Benchmark results\n\nWritten by `npm run bench`.\n';

/**
 * Returns `text` with the section under `heading` (a `## ` line) replaced by `heading` and `body`,
 * or with it appended when there is none. The section runs to the next `## ` heading.
 */
export function replaceSection(text: string, heading: string, body: string): string {
  const block = `${heading}\n\n${body.trim()}\n`;
  const start = text.indexOf(`\n${heading}\n`) + 1; // 0 when it is missing, or opens the text
  if (start === 0 && !text.startsWith(`${heading}\n`)) return `${text.trimEnd()}\n\n${block}`;
  const next = text.indexOf('\n## ', start + heading.length);
  return `${text.slice(0, start)}${block}${next < 0 ? '' : text.slice(next)}`;
}

/** Rewrites the section under `heading` of the results file at `path` (made when missing). */
export function writeResultsSection(path: string, heading: string, body: string): void {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : NEW_FILE;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, replaceSection(text, heading, body));
}

/**
 * Rewrites the subsection under `subheading` (a `### ` line) of the section under `heading` of the
 * results file at `path`, keeping the section's other subsections (each benchmark run at one size
 * owns one); the section is appended when missing.
 */
export function writeResultsSubsection(path: string, heading: string, subheading: string, body: string): void {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : NEW_FILE;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, replaceSection(text, heading, replaceSubsection(sectionBody(text, heading), subheading, body)));
}

/** The body of the section under `heading` (without its heading line), or '' when there is none. */
export function sectionBody(text: string, heading: string): string {
  const at = text.startsWith(`${heading}\n`) ? 0 : text.indexOf(`\n${heading}\n`) + 1;
  if (at === 0 && !text.startsWith(`${heading}\n`)) return '';
  const start = at + heading.length + 1;
  const next = text.indexOf('\n## ', start);
  return text.slice(start, next < 0 ? undefined : next).trim();
}

/** `body` (a section's text) with the `### ` subsection under `subheading` replaced, or appended. */
export function replaceSubsection(body: string, subheading: string, content: string): string {
  const block = `${subheading}\n\n${content.trim()}\n`;
  const text = body.trim() === '' ? '' : `${body.trim()}\n`;
  const start = text.startsWith(`${subheading}\n`) ? 0 : text.indexOf(`\n${subheading}\n`) + 1;
  if (start === 0 && !text.startsWith(`${subheading}\n`)) return text === '' ? block : `${text}\n${block}`;
  const next = text.indexOf('\n### ', start + subheading.length);
  return `${text.slice(0, start)}${block}${next < 0 ? '' : text.slice(next)}`;
}
