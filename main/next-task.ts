/**
 * A promise that resolves in a task of its own, after the current one and its microtasks: work
 * the client starts with but need not do in the task that created it (docs/decisions.md,
 * "Start-up"). A message the page posts to itself, because background tabs throttle timers (to a
 * second and more) but not messages; a timer where there is no `MessageChannel`.
 */
export function nextTask(setTimer: (callback: () => void) => unknown = (callback) => setTimeout(callback, 0)): Promise<void> {
  return new Promise((resolve) => {
    if (typeof MessageChannel !== 'function') return void setTimer(resolve);
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
