/**
 * rrweb-player and its CSS, in a chunk of their own: only the replay page loads them; with them,
 * what draws a recording's canvas images into the replay (`canvas-frames.ts`, `canvas-painter.ts`).
 */
import 'rrweb-player/dist/style.css';

export { default as RrwebPlayer } from 'rrweb-player';
export { canvasFrames } from './canvas-frames.js';
export { createCanvasPainter } from './canvas-painter.js';
