/**
 * rrweb's `Replayer` and its CSS, in a chunk of their own: only the Replay page loads them.
 * (rrweb-player is not used: the plain Replayer and a few buttons are enough here.)
 */
import 'rrweb/dist/style.css';

export { Replayer } from 'rrweb';
