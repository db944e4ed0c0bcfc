/**
 * Canvas images in the dashboard's replay without a frame that may run script (docs/decisions.md,
 * "Canvas recording and its replay"), in Chromium against the real server serving the dashboard
 * built as the server package ships it. Recordings are posted with the project's public write key
 * through the ingest API, as anyone holding that key could post them:
 * - a recording whose canvas has an image in its snapshot and two later images (the records the
 *   recorder's `recordCanvas` makes) replays each at its moment, also after a jump on the
 *   timeline, in a frame sandboxed to `allow-same-origin` only, with no policy violation;
 * - a crafted recording carrying, besides such canvas images, a `<script>`, an
 *   `<img src=x onerror=…>`, a `javascript:` link and a frame with a script in `srcdoc`, each of
 *   which would set a global, the title and ping a local address if it ran: played in a browser
 *   context that ignores the dashboard's Content-Security-Policy (as behind a proxy that strips
 *   it), so that the sandbox alone holds, nothing runs and the canvas is still drawn. The same
 *   markup in an ordinary page runs all four, so the payloads are live.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../test-support/chromium.js';
import type { TestServer } from '../../test-support/server/test-server.js';
import { DESKTOP, type RecordedEvent, postRecording, signInWithReadKey, startDashboardServer } from '../../test-support/browser/dashboard-rig.js';
import { watchCspViolations } from '../../test-support/browser/csp-violations.js';
import { waitUntil } from '../../test-support/browser/harness.js';

let server: TestServer;
let browser: Browser;
/** Where the payloads ping when they run, and what reached it. */
let ping: Server;
let pingUrl: string;
const pinged: string[] = [];

/** The recording's length, ms; the canvas is red from the start, green from 4 s, blue from 8 s. */
const LENGTH_MS = 12_000;
const GREEN_AT = 4000;
const BLUE_AT = 8000;
const CANVAS_ID = 10;
type Colour = 'red' | 'green' | 'blue';
const RGB: Record<Colour, [number, number, number]> = { red: [220, 30, 30], green: [30, 200, 60], blue: [30, 60, 220] };

/** The title the dashboard keeps unless a payload ran. */
let dashboardTitle: string;

/**
 * What a payload does when it runs: a global on the top window, the title, a ping. It ends in
 * `void 0` so that, as a `javascript:` link, it does not replace the page with its value.
 */
const payload = (name: string) =>
  `top.saRan = (top.saRan || []).concat('${name}'); top.document.title = 'ran ${name}'; new Image().src = '${pingUrl}/${name}'; void 0`;

/** The payloads as markup, for the control page. */
const payloadHtml = () => `<script>${payload('script')}</script>
<img id="broken" src="x" onerror="${payload('img')}">
<a id="js-link" href="javascript:${payload('link')}">link</a>
<iframe srcdoc="<script>${payload('srcdoc').replace(/'/g, '&#39;')}</script>"></iframe>`;

/** WebP images of the canvas in one colour each, encoded by Chromium as the recorder's canvas sampling does. */
async function colourImages(): Promise<Record<Colour, string>> {
  const context = await browser.newContext();
  try {
    const p = await context.newPage();
    return await p.evaluate((rgb) => {
      const out: Record<string, string> = {};
      for (const [name, [r, g, b]] of Object.entries(rgb)) {
        const canvas = document.createElement('canvas');
        canvas.width = 160;
        canvas.height = 90;
        const ctx = canvas.getContext('2d') as CanvasRenderingContext2D;
        ctx.fillStyle = `rgb(${r}, ${g}, ${b})`;
        ctx.fillRect(0, 0, 160, 90);
        out[name] = canvas.toDataURL('image/webp', 0.6);
      }
      return out as Record<Colour, string>;
    }, RGB);
  } finally {
    await context.close();
  }
}

/** A canvas record as rrweb's canvas sampling makes it: clear the canvas, draw the image at (0, 0). */
function canvasRecord(dataUrl: string, timestamp: number): RecordedEvent {
  const [header, base64] = dataUrl.split(',') as [string, string];
  const type = header.slice('data:'.length, header.indexOf(';'));
  return {
    type: 3,
    data: {
      source: 9,
      id: CANVAS_ID,
      type: 0,
      commands: [
        { property: 'clearRect', args: [0, 0, 160, 90] },
        { property: 'drawImage', args: [{ rr_type: 'ImageBitmap', args: [{ rr_type: 'Blob', data: [{ rr_type: 'ArrayBuffer', base64 }], type }] }, 0, 0] },
      ],
    },
    timestamp,
  };
}

/**
 * A page with a heading and a 160×90 canvas (red in the snapshot, green and blue later), the mouse
 * moving every 400 ms; with `crafted`, the payloads too, a canvas record whose image is an SVG
 * document with a script, and one whose bytes are no image.
 */
function canvasRecording(start: number, images: Record<Colour, string>, crafted: boolean): RecordedEvent[] {
  let id = 100;
  const element = (tagName: string, attributes: Record<string, unknown>, childNodes: unknown[] = []) => ({ type: 2, id: id++, tagName, attributes, childNodes });
  const text = (textContent: string) => ({ type: 3, id: id++, textContent });
  const payloads = crafted
    ? [
        element('script', {}, [text(payload('script'))]),
        element('img', { id: 'broken', src: 'x', onerror: payload('img') }),
        element('a', { id: 'js-link', href: `javascript:${payload('link')}` }, [text('link')]),
        element('iframe', { srcdoc: `<script>${payload('srcdoc')}</script>` }),
      ]
    : [];
  const body = element('body', { style: 'margin: 0; font: 16px sans-serif' }, [
    element('h1', {}, [text('Chart')]),
    { type: 2, id: CANVAS_ID, tagName: 'canvas', attributes: { id: 'chart', width: '160', height: '90', rr_dataURL: images.red }, childNodes: [] },
    ...payloads,
  ]);
  const snapshot = {
    node: { type: 0, id: 1, childNodes: [{ type: 1, id: 2, name: 'html', publicId: '', systemId: '' }, { type: 2, id: 3, tagName: 'html', attributes: {}, childNodes: [element('head', {}), body] }] },
    initialOffset: { left: 0, top: 0 },
  };
  const svg = `<svg xmlns="http://www.w3.org/2000/svg"><script>${payload('svg')}</script></svg>`;
  return [
    { type: 4, data: { href: 'https://shop.example/chart', width: 1024, height: 640 }, timestamp: start },
    { type: 2, data: snapshot, timestamp: start + 10 },
    ...Array.from({ length: LENGTH_MS / 400 - 1 }, (_, i) => ({ type: 3, data: { source: 1, positions: [{ x: 20 + i, y: 40, id: CANVAS_ID, timeOffset: 0 }] }, timestamp: start + 400 * (i + 1) })),
    canvasRecord(images.green, start + GREEN_AT),
    ...(crafted
      ? [
          canvasRecord(`data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`, start + GREEN_AT + 100),
          // Bytes that are no image: not drawn, and counted beside the player's clock.
          canvasRecord('data:image/webp;base64,bm90IGFuIGltYWdl', start + GREEN_AT + 200),
        ]
      : []),
    canvasRecord(images.blue, start + BLUE_AT),
    { type: 5, data: { tag: 'service-analytics:stop', payload: { reason: 'stop' } }, timestamp: start + LENGTH_MS },
  ].sort((a, b) => a.timestamp - b.timestamp);
}

beforeAll(async () => {
  ping = createServer((req, res) => {
    pinged.push(req.url ?? '');
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => ping.listen(0, '127.0.0.1', resolve));
  pingUrl = `http://127.0.0.1:${(ping.address() as AddressInfo).port}`;
  server = await startDashboardServer();
  browser = await launchChromium();
  const images = await colourImages();
  const start = Date.now() - 120_000;
  const upload = { durationMs: LENGTH_MS, startUrl: 'https://shop.example/chart' };
  await postRecording(server, 'canvas-session', canvasRecording(start, images, false), upload);
  await postRecording(server, 'crafted-session', canvasRecording(start, images, true), upload);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise((resolve) => ping?.close(resolve));
});

/** The replay's frame: its sandbox and the colour at the canvas's centre (null while it shows none of the three). */
async function replayState(p: Page): Promise<{ sandbox: string | null; colour: Colour | null }> {
  const { sandbox, pixel } = await p.evaluate(() => {
    const frame = document.querySelector<HTMLIFrameElement>('.replayer-wrapper iframe');
    const canvas = frame?.contentDocument?.querySelector('canvas');
    const data = canvas?.getContext('2d')?.getImageData(80, 45, 1, 1).data;
    return { sandbox: frame?.getAttribute('sandbox') ?? null, pixel: data === undefined ? null : [...data] };
  });
  // WebP at quality 0.6 shifts a flat colour a little.
  const near = (rgb: [number, number, number]) => pixel !== null && pixel[3] === 255 && rgb.every((v, k) => Math.abs((pixel[k] as number) - v) <= 24);
  const colour = (Object.keys(RGB) as Colour[]).find((name) => near(RGB[name])) ?? null;
  return { sandbox, colour };
}

async function openReplay(context: BrowserContext, session: string): Promise<Page> {
  const p = await signInWithReadKey(context, server);
  dashboardTitle = await p.title();
  await p.evaluate((id) => (location.hash = `#/replay/${id}`), session);
  await p.getByTestId('replay-time').waitFor();
  return p;
}

const waitForColour = (p: Page, colour: Colour, what: string) => waitUntil(what, async () => (await replayState(p)).colour === colour, 30_000);

/** Clicks the player's timeline at `ms` from the start. */
async function clickTimeline(p: Page, ms: number): Promise<void> {
  const bar = (await p.locator('.rr-progress').boundingBox())!;
  const total = Number(await p.getByTestId('replay-time').getAttribute('data-total-ms'));
  await p.mouse.click(bar.x + (bar.width * ms) / total, bar.y + bar.height / 2);
}

describe('canvas images in the replay, in the sandbox where no script runs', () => {
  it('draws each image at its moment as the replay plays and after jumps on the timeline, with no policy violation', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const violations: string[] = [];
    try {
      await watchCspViolations(context, violations);
      const p = await openReplay(context, 'canvas-session');
      // Played through: the snapshot's red, then green, then blue.
      await waitForColour(p, 'red', 'the snapshot’s image');
      await waitForColour(p, 'green', 'the image recorded at 4 s');
      await waitForColour(p, 'blue', 'the image recorded at 8 s');
      expect((await replayState(p)).sandbox).toBe('allow-same-origin');
      // Once it has ended, the player stays paused where the timeline is clicked: there, the latest
      // image before each moment, also back before both records.
      const time = p.getByTestId('replay-time');
      await waitUntil('the replay to end', async () => (await time.getAttribute('data-ms')) === (await time.getAttribute('data-total-ms')), 30_000);
      await clickTimeline(p, 6000);
      await waitForColour(p, 'green', 'green after a jump to 6 s');
      await clickTimeline(p, 2000);
      await waitForColour(p, 'red', 'red after a jump back to 2 s');
      await clickTimeline(p, 10_000);
      await waitForColour(p, 'blue', 'blue after a jump to 10 s');
      expect((await replayState(p)).sandbox).toBe('allow-same-origin');
      expect(violations, 'Content-Security-Policy violations').toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('runs nothing a crafted recording carries, without the policy to help, and still draws its canvas', async () => {
    // The payloads run in an ordinary page: the markers below would show it.
    const control = await browser.newContext({ bypassCSP: true });
    try {
      const page = await control.newPage();
      await page.setContent(payloadHtml());
      await page.click('#js-link');
      await waitUntil('the payloads to run in an ordinary page', async () => {
        const ran = await page.evaluate(() => (window as unknown as { saRan?: string[] }).saRan ?? []);
        return ['script', 'img', 'link', 'srcdoc'].every((name) => ran.includes(name));
      });
      await waitUntil('their pings', () => ['script', 'img', 'link', 'srcdoc'].every((name) => pinged.includes(`/${name}`)));
    } finally {
      await control.close();
    }
    pinged.length = 0;

    const context = await browser.newContext({ viewport: DESKTOP, bypassCSP: true });
    const blocked: string[] = [];
    context.on('console', (message) => {
      if (/blocked script execution/i.test(message.text())) blocked.push(message.text());
    });
    try {
      const p = await openReplay(context, 'crafted-session');
      await waitForColour(p, 'blue', 'the crafted recording’s last canvas image');
      expect((await replayState(p)).sandbox).toBe('allow-same-origin');
      // The broken image has failed (its error event has been dispatched) and the link is followed.
      await waitUntil('the broken image to fail', () =>
        p.evaluate(() => {
          const img = document.querySelector<HTMLIFrameElement>('.replayer-wrapper iframe')?.contentDocument?.querySelector<HTMLImageElement>('#broken');
          return img?.complete === true;
        }),
      );
      const before = blocked.length;
      await p.evaluate(() => document.querySelector<HTMLIFrameElement>('.replayer-wrapper iframe')?.contentDocument?.querySelector<HTMLAnchorElement>('#js-link')?.click());
      // Chromium says when the sandbox refuses it; were it followed, it would ping.
      await waitUntil('the javascript: link refused or followed', () => blocked.length > before || pinged.includes('/link'));
      const markers = await p.evaluate(() => {
        const frame = document.querySelector<HTMLIFrameElement>('.replayer-wrapper iframe');
        return {
          top: (window as unknown as { saRan?: unknown }).saRan ?? null,
          frame: (frame?.contentWindow as unknown as { saRan?: unknown } | null)?.saRan ?? null,
          title: document.title,
          scripts: frame?.contentDocument?.querySelectorAll('script').length ?? -1,
          srcdoc: frame?.contentDocument?.querySelector('iframe')?.hasAttribute('srcdoc') ?? null,
        };
      });
      expect(markers).toEqual({ top: null, frame: null, title: dashboardTitle, scripts: 0, srcdoc: false });
      expect(pinged).toEqual([]);
      expect((await replayState(p)).colour).toBe('blue');
      // The SVG is never decoded; the bytes that are no image fail to, and the player says so.
      expect(await p.getByTestId('replay-time').textContent()).toContain('1 canvas image not shown');
    } finally {
      await context.close();
    }
  });
});
