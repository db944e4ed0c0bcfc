/** rrweb-player and its CSS, in a chunk of their own: only the replay page loads them. */
import 'rrweb-player/dist/style.css';

export { default as RrwebPlayer } from 'rrweb-player';
