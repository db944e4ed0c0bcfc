import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replaceSection, writeResultsSection, writeResultsSubsection } from './results-file.js';

const FILE = '# Benchmark results\n\nintro\n\n## Server ingest\n\nold server\n\n### detail\n\nmore\n\n## Client main thread\n\nold client\n';

describe('replaceSection', () => {
  it('replaces a middle section up to the next ## heading, keeping its ### subsections out of the others', () => {
    expect(replaceSection(FILE, '## Server ingest', 'new server')).toBe(
      '# Benchmark results\n\nintro\n\n## Server ingest\n\nnew server\n\n## Client main thread\n\nold client\n',
    );
  });

  it('replaces the last section to the end of the file', () => {
    expect(replaceSection(FILE, '## Client main thread', 'new client\n\n### profile\n\nx\n')).toBe(
      '# Benchmark results\n\nintro\n\n## Server ingest\n\nold server\n\n### detail\n\nmore\n\n## Client main thread\n\nnew client\n\n### profile\n\nx\n',
    );
  });

  it('appends a section the file does not have yet', () => {
    expect(replaceSection('# Benchmark results\n', '## Server ingest', 'rows')).toBe('# Benchmark results\n\n## Server ingest\n\nrows\n');
  });

  it('replaces a section that opens the text', () => {
    expect(replaceSection('## Server ingest\n\nold\n\n## Other\n\nkept\n', '## Server ingest', 'new')).toBe(
      '## Server ingest\n\nnew\n\n## Other\n\nkept\n',
    );
  });

  it('leaves the text as it is when a section is written again with its own body', () => {
    const body = 'old server\n\n### detail\n\nmore';
    expect(replaceSection(FILE, '## Server ingest', body)).toBe(FILE);
  });

  it('does not take a longer heading that starts with the same words for the section', () => {
    const text = '## Server ingest, old runs\n\nkept\n';
    expect(replaceSection(text, '## Server ingest', 'rows')).toBe(`${text}\n## Server ingest\n\nrows\n`);
  });
});

describe('writeResultsSection', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'results-file-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('makes the file when it is missing, then rewrites only its own section', async () => {
    const path = join(dir, 'bench', 'RESULTS.md');
    writeResultsSection(path, '## Server ingest', 'server 1');
    writeResultsSection(path, '## Client main thread', 'client 1');
    writeResultsSection(path, '## Server ingest', 'server 2');
    expect(await readFile(path, 'utf8')).toBe(
      '# Benchmark results\n\nWritten by `npm run bench`.\n\n## Server ingest\n\nserver 2\n\n## Client main thread\n\nclient 1\n',
    );
  });

  it('keeps what a file written by hand has around the section', async () => {
    const path = join(dir, 'RESULTS.md');
    await writeFile(path, FILE);
    writeResultsSection(path, '## Client main thread', 'new client');
    expect(await readFile(path, 'utf8')).toBe(FILE.replace('old client', 'new client'));
  });
});

describe('writeResultsSubsection', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'results-file-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('appends the section, then rewrites one ### subsection and keeps the others and the sections after it', async () => {
    const path = join(dir, 'RESULTS.md');
    await writeFile(path, FILE);
    writeResultsSubsection(path, '## ClickHouse', '### 1M', 'small 1');
    writeResultsSubsection(path, '## ClickHouse', '### 10M', 'big 1');
    writeResultsSubsection(path, '## ClickHouse', '### 1M', 'small 2');
    expect(await readFile(path, 'utf8')).toBe(`${FILE}\n## ClickHouse\n\n### 1M\n\nsmall 2\n\n### 10M\n\nbig 1\n`);
    writeResultsSubsection(path, '## Server ingest', '### detail', 'less');
    expect(await readFile(path, 'utf8')).toContain('## Server ingest\n\nold server\n\n### detail\n\nless\n\n## Client main thread\n');
  });
});
