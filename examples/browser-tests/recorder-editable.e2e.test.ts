/**
 * Text a person types into editable regions, recorded in Chromium against the real server (README
 * "Session recording"): with default settings no sentinel string planted in any kind of editable
 * region reaches the server, looked for in three places: the request bodies on the wire
 * (gunzipped), the read API's answer, and the SQLite database (the file's bytes, and the chunks
 * read with SQL). Ordinary page text, present from the start and added later, does reach all
 * three, so the test cannot pass on an empty or fully masked recording.
 *
 * The kinds: `contenteditable` as "true", "" and "plaintext-only"; a nested child and a
 * `contenteditable="false"` island of an editor; text typed with the keyboard, inserted as by an
 * input method or a paste (`insertText`), pasted from the clipboard (Ctrl+V), pasted through an
 * editor's own paste handler (a synthetic paste event), inserted and changed by script after the
 * full snapshot, present before recording starts; a typed text node moved out of its editor by
 * script and edited there, a paragraph typed into and moved out, page text moved into an editor and
 * then edited, an editor made read-only after typing; an iframe in `designMode` from its start, and
 * one switched to it later. A pause and resume in between makes a new full snapshot of the page
 * after the moves.
 *
 * Also `maskAllText` with `unmaskClass`: everything is masked except the unmasked part, where
 * editable text, input values and `maskTextClass` text stay masked.
 */
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Analytics, AnalyticsConfig, DeliveryStats } from '../../main/index.js';
import type { Recording } from '../../server/store/event-store.js';
import type { TestProject } from '../../test-support/server/test-server.js';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { captureConsole, waitUntil } from '../../test-support/browser/harness.js';
import { type WireLog, databaseBytes, readRecordingApi, startWireLog, storedChunkTexts } from '../../test-support/browser/recorder-wire.js';

let env: BrowserTestEnvironment;
let wire: WireLog;
beforeAll(async () => {
  env = await startEnvironment();
  wire = await startWireLog(env.server.url);
});
afterAll(async () => {
  await wire?.close();
  await env?.close();
});
printPageLogOnFailure();

/** Strings that must never reach the server: no whitespace, so a masked one is a run of `*`. */
const SECRET = {
  typedTrue: 'typedTrue-Secret-a41c',
  typedEmpty: 'typedEmpty-Secret-0b7e',
  typedPlaintext: 'typedPlain-Secret-9d22',
  typedNested: 'typedNested-Secret-5f10',
  island: 'island-Secret-c3a8',
  preset: 'preset-Secret-7e05',
  insertText: 'insertText-Secret-18bd',
  clipboard: 'clipboard-Secret-e6f3',
  syntheticPaste: 'synthPaste-Secret-2ac9',
  scriptText: 'scriptText-Secret-44d1',
  scriptHtml: 'scriptHtml-Secret-b05a',
  scriptData: 'scriptData-Secret-93c7',
  movedOut: 'movedOut-Secret-6e2b',
  movedOutEdit: 'movedOutEdit-Secret-d815',
  movedParagraph: 'movedPara-Secret-71f4',
  movedInData: 'movedInData-Secret-0c6a',
  movedInTyped: 'movedInTyped-Secret-5b93',
  readOnly: 'readOnly-Secret-f2e7',
  framePreset: 'framePreset-Secret-3d9c',
  frameTyped: 'frameTyped-Secret-a7b2',
  frameScript: 'frameScript-Secret-8e41',
  laterFrameTyped: 'laterFrame-Secret-16fd',
};

/** Ordinary page text that must reach the server. */
const VISIBLE = {
  heading: 'Visible-Heading-c08e',
  added: 'Visible-Added-7a3f',
  frame: 'Visible-Frame-e95d',
  moved: 'Visible-Moved-2b60',
};

/** What the test pages put on `window.recorderPage`. */
interface RecorderPage {
  analytics: Analytics;
  stats(): Promise<DeliveryStats>;
}
type PageWindow = { recorderPage: RecorderPage };

function pageHtml(config: AnalyticsConfig, body: string): string {
  return `<!doctype html>
<html>
<head><meta charset="utf-8"><title>editable recorder test</title></head>
<body>
${body}
<script type="module">
import { createAnalytics } from '/dist/client/index.js';
const analytics = createAnalytics(${JSON.stringify(config)});
window.recorderPage = { analytics, stats: () => analytics.getDeliveryStats() };
</script>
</body>
</html>`;
}

const EDITORS_BODY = `
<h1>${VISIBLE.heading}</h1>
<div id="ce-true" contenteditable="true"></div>
<div id="ce-empty" contenteditable=""></div>
<div id="ce-plain" contenteditable="plaintext-only"></div>
<div id="ce-nested" contenteditable>
  <p>${SECRET.preset}</p>
  <p id="to-change">to change</p>
  <ul><li><b id="nested-b">b</b></li></ul>
  <span contenteditable="false"><i id="island">island</i></span>
</div>
<div id="paste-insert" contenteditable></div>
<div id="paste-clipboard" contenteditable></div>
<div id="paste-synthetic" contenteditable></div>
<div id="script" contenteditable></div>
<div id="move-src" contenteditable></div>
<div id="move-para-src" contenteditable><p id="move-para"><br></p></div>
<p id="move-dst">Destination</p>
<p id="plain-src">${VISIBLE.moved}</p>
<div id="move-into" contenteditable></div>
<div id="read-only" contenteditable></div>
<iframe id="frame-design" src="/frame-design.html"></iframe>
<iframe id="frame-later" src="/frame-later.html"></iframe>
<script>
  // An editor's own paste handling: it reads the clipboard data and inserts rich text itself.
  document.getElementById('paste-synthetic').addEventListener('paste', (event) => {
    event.preventDefault();
    const text = event.clipboardData.getData('text/plain');
    document.execCommand('insertHTML', false, '<b>' + text.replace(/[<&]/g, '') + '</b>');
  });
</script>`;

const FRAME_DESIGN = `<!doctype html><html><head><meta charset="utf-8"></head>
<body><p>${SECRET.framePreset}</p><script>document.designMode = 'on';</script></body></html>`;
const FRAME_LATER = `<!doctype html><html><head><meta charset="utf-8"></head><body><p>${VISIBLE.frame}</p></body></html>`;

const stats = (page: Page): Promise<DeliveryStats> => page.evaluate(() => (window as unknown as PageWindow).recorderPage.stats());

/** Opens `path` and waits for the client and for every iframe to have loaded. */
async function openPage(page: Page, path: string): Promise<void> {
  captureConsole(page);
  await page.goto(`${env.web.url}${path}`, { waitUntil: 'load' });
  await page.waitForFunction(() => 'recorderPage' in window, undefined, { timeout: 30_000 });
}

async function startRecording(page: Page): Promise<void> {
  await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.startRecording());
  // Capture has begun once the worker holds the first events (the full snapshot).
  await waitUntil('capture to begin', async () => (await stats(page)).recordingQueued > 0);
}

/** Stops recording and waits for the final chunk in the store; returns the session id. */
async function stopAndWait(page: Page, project: TestProject): Promise<string> {
  await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.stopRecording());
  const sessionId = await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.getSessionId());
  let recording: Recording | null = null;
  await waitUntil('the final chunk', async () => {
    recording = await env.server.store.getRecording(project.id, sessionId);
    return recording?.finished === true;
  });
  expect((recording as unknown as Recording).gaps).toEqual([]);
  return sessionId;
}

/** The three places a recording can be read back from, each as text (or bytes). */
async function everywhere(project: TestProject, sessionId: string): Promise<Array<{ where: string; has(text: string): boolean }>> {
  const uploads = wire.requests.filter((r) => r.method === 'POST' && r.path.includes(`/sessions/${sessionId}/recordings`));
  expect(uploads.length, 'recording uploads on the wire').toBeGreaterThan(0);
  const wireText = uploads.map((r) => r.body).join('\n');
  const apiText = await readRecordingApi(env.server.url, project, sessionId);
  const fileBytes = databaseBytes(env.server.location);
  const sqlText = storedChunkTexts(env.server.location);
  return [
    { where: 'the wire', has: (text) => wireText.includes(text) },
    { where: 'the read API', has: (text) => apiText.includes(text) },
    { where: 'the database file', has: (text) => fileBytes.includes(text) },
    { where: 'the database (SQL)', has: (text) => sqlText.includes(text) },
  ];
}

/** Clicks the end of `selector`'s content in `frame` and types `text` with the keyboard. */
async function typeAtEnd(page: Page, frame: Page | Frame, selector: string, text: string): Promise<void> {
  await frame.click(selector);
  await page.keyboard.press('End');
  await page.keyboard.type(text);
}

describe('editable regions in Chromium, default settings', () => {
  it('no text typed, pasted or inserted into an editable region reaches the server; page text does', async () => {
    const project = await env.server.createProject();
    const config: AnalyticsConfig = { apiKey: project.writeKey, projectId: project.id, endpoint: wire.url, enableAutoPageTracking: false, debug: true };
    env.web.setPage('/editors.html', { html: pageHtml(config, EDITORS_BODY) });
    env.web.setPage('/frame-design.html', { html: FRAME_DESIGN });
    env.web.setPage('/frame-later.html', { html: FRAME_LATER });
    const context = await env.browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.web.url });
    try {
      const page = await context.newPage();
      await openPage(page, '/editors.html');
      const frameDesign = page.frame({ url: /frame-design/ })!;
      const frameLater = page.frame({ url: /frame-later/ })!;
      expect(await frameDesign.evaluate(() => document.designMode)).toBe('on');
      await startRecording(page);

      // Typed with the keyboard.
      await typeAtEnd(page, page, '#ce-true', SECRET.typedTrue);
      await typeAtEnd(page, page, '#ce-empty', SECRET.typedEmpty);
      await typeAtEnd(page, page, '#ce-plain', SECRET.typedPlaintext);
      await typeAtEnd(page, page, '#nested-b', SECRET.typedNested);
      // Inserted as an input method or a paste does, from the clipboard, and by an editor's paste handler.
      await page.click('#paste-insert');
      await page.keyboard.insertText(SECRET.insertText);
      await page.evaluate((text) => navigator.clipboard.writeText(text), SECRET.clipboard);
      await page.click('#paste-clipboard');
      await page.keyboard.press('ControlOrMeta+V');
      await page.focus('#paste-synthetic');
      await page.evaluate((text) => {
        const data = new DataTransfer();
        data.setData('text/plain', text);
        document.getElementById('paste-synthetic')!.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
      }, SECRET.syntheticPaste);
      // Inserted and changed by script after the full snapshot; ordinary text added too.
      await page.evaluate(({ secret, visible }) => {
        const script = document.getElementById('script')!;
        script.append(document.createTextNode(secret.scriptText));
        script.insertAdjacentHTML('beforeend', `<p>${secret.scriptHtml}</p>`);
        (document.getElementById('to-change')!.firstChild as Text).data = secret.scriptData;
        document.getElementById('island')!.textContent = secret.island;
        document.body.insertAdjacentHTML('beforeend', `<p>${visible.added}</p>`);
      }, { secret: SECRET, visible: VISIBLE });

      // Moved out of an editor: a typed text node (then edited where it landed), a typed paragraph.
      await typeAtEnd(page, page, '#move-src', SECRET.movedOut);
      await typeAtEnd(page, page, '#move-para', SECRET.movedParagraph);
      await page.evaluate(() => {
        const destination = document.getElementById('move-dst')!;
        destination.appendChild(document.getElementById('move-src')!.firstChild!);
        destination.appendChild(document.getElementById('move-para')!);
      });
      await page.evaluate((edit) => (document.getElementById('move-dst')!.childNodes[1] as Text).appendData(edit), SECRET.movedOutEdit);
      // Moved into an editor: page text, then changed there and typed after.
      await page.evaluate((data) => {
        const into = document.getElementById('move-into')!;
        const node = document.getElementById('plain-src')!.firstChild as Text;
        into.appendChild(node);
        node.data = data;
      }, SECRET.movedInData);
      await typeAtEnd(page, page, '#move-into', SECRET.movedInTyped);
      // An editor made read-only after typing.
      await typeAtEnd(page, page, '#read-only', SECRET.readOnly);
      await page.evaluate(() => document.getElementById('read-only')!.removeAttribute('contenteditable'));

      // designMode iframes: one from its start (typed into, and inserted by script), one switched later.
      await typeAtEnd(page, frameDesign, 'p', SECRET.frameTyped);
      await frameDesign.evaluate((text) => document.body.append(document.createTextNode(text)), SECRET.frameScript);
      await frameLater.evaluate(() => (document.designMode = 'on'));
      await typeAtEnd(page, frameLater, 'p', SECRET.laterFrameTyped);

      // A new full snapshot of the page as it now is (moved nodes, read-only editor).
      await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.pauseRecording());
      // rrweb, loaded since the start, takes the new snapshot in the resume call itself (the
      // stored recording's two full snapshots, checked below, show it did).
      await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.resumeRecording());
      expect(await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.isRecordingActive())).toBe(true);
      const sessionId = await stopAndWait(page, project);

      // The page did hold every string: the test would prove nothing otherwise.
      const shown = [
        await page.evaluate(() => document.body.innerText),
        await frameDesign.evaluate(() => document.body.innerText),
        await frameLater.evaluate(() => document.body.innerText),
      ].join('\n');
      for (const [name, text] of Object.entries(SECRET)) expect(shown, `${name} on the page`).toContain(text);

      const recording = (await env.server.store.getRecording(project.id, sessionId))!;
      // Two full snapshots (start, resume), and the typing recorded as masked text.
      expect(recording.events.filter((e) => e.type === 2)).toHaveLength(2);
      expect(JSON.stringify(recording.events)).toContain('*'.repeat(SECRET.typedTrue.length));

      for (const place of await everywhere(project, sessionId)) {
        for (const [name, text] of Object.entries(SECRET)) expect(place.has(text), `${name} secret in ${place.where}`).toBe(false);
        for (const [name, text] of Object.entries(VISIBLE)) expect(place.has(text), `${name} page text in ${place.where}`).toBe(true);
      }
    } finally {
      await context.close();
    }
  });
});

/** Strings that must never reach the server with `maskAllText`. */
const MASK_ALL_SECRET = {
  heading: 'Hidden-Heading-Secret-5e1a',
  inUnmaskMasked: 'Masked-In-Unmask-Secret-0d3f',
  editor: 'unmaskEditor-Secret-77c2',
  input: 'unmaskInput-Secret-1fa0',
  later: 'maskedLater-Secret-c6e8',
};

const UNMASK_BODY = `
<h1>${MASK_ALL_SECRET.heading}</h1>
<nav class="sa-unmask">
  <a href="#">${VISIBLE.heading}</a>
  <div id="unmasked-editor" contenteditable></div>
  <input id="unmasked-input" type="text">
  <span class="sa-mask">${MASK_ALL_SECRET.inUnmaskMasked}</span>
  <p id="unmasked-later"></p>
</nav>
<p id="masked-later"></p>`;

describe('maskAllText and unmaskClass in Chromium', () => {
  it('masks all text but the unmasked part; editable text, inputs and sa-mask stay masked in it', async () => {
    const project = await env.server.createProject();
    const config: AnalyticsConfig = {
      apiKey: project.writeKey,
      projectId: project.id,
      endpoint: wire.url,
      enableAutoPageTracking: false,
      debug: true,
      recording: { maskAllText: true },
    };
    const secret = MASK_ALL_SECRET;
    env.web.setPage('/mask-all.html', { html: pageHtml(config, UNMASK_BODY) });
    const context = await env.browser.newContext();
    try {
      const page = await context.newPage();
      await openPage(page, '/mask-all.html');
      await startRecording(page);
      await typeAtEnd(page, page, '#unmasked-editor', secret.editor);
      await page.click('#unmasked-input');
      await page.keyboard.type(secret.input);
      await page.evaluate(
        ({ visible, hidden }) => {
          document.getElementById('unmasked-later')!.textContent = visible;
          document.getElementById('masked-later')!.textContent = hidden;
        },
        { visible: VISIBLE.added, hidden: secret.later },
      );
      const sessionId = await stopAndWait(page, project);

      const shown = await page.evaluate(() => `${document.body.innerText}\n${(document.getElementById('unmasked-input') as HTMLInputElement).value}`);
      for (const [name, text] of Object.entries(secret)) expect(shown, `${name} on the page`).toContain(text);
      for (const place of await everywhere(project, sessionId)) {
        for (const [name, text] of Object.entries(secret)) expect(place.has(text), `${name} secret in ${place.where}`).toBe(false);
        // Unmasked text, present from the start and added later.
        expect(place.has(VISIBLE.heading), `unmasked text in ${place.where}`).toBe(true);
        expect(place.has(VISIBLE.added), `unmasked added text in ${place.where}`).toBe(true);
      }
    } finally {
      await context.close();
    }
  });
});
