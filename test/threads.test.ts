import { MessageChannel } from 'node:worker_threads';
import t from 'tap';
import { creditedSender } from '../src/infra/threads.js';

/** A sender on one end of a channel; `take()` is the parent taking the oldest message sent. */
function pair(ahead: number, bytes?: number) {
  const { port1, port2 } = new MessageChannel();
  const send = creditedSender<string>(port1, ahead, bytes);
  const sent: string[] = [];
  let arrived: (() => void) | undefined;
  port2.on('message', (message: string) => {
    sent.push(message);
    arrived?.();
  });
  /** Until `n` messages have arrived (what is held back is checked after a rest instead: nothing can say it will never come). */
  const received = async (n: number) => {
    while (sent.length < n) await new Promise<void>((resolve) => (arrived = resolve));
  };
  t.teardown(() => {
    port1.close();
    port2.close();
  });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  return { send, sent, settle, received, take: () => port2.postMessage('more') };
}

t.test('a sender holds back what its count of untaken messages does not allow', async (t) => {
  const { send, sent, settle, received, take } = pair(2);
  void send('a');
  void send('b');
  const third = send('c');
  await received(2);
  await settle();
  t.strictSame(sent, ['a', 'b']);
  take();
  await third;
  await received(3);
  t.strictSame(sent, ['a', 'b', 'c'], 'one taken, one more sent');
});

t.test('with bytes, what untaken messages weigh holds back the next, one always allowed', async (t) => {
  const { send, sent, settle, received, take } = pair(100, 1000);
  void send('big', [], 5000);
  await received(1);
  t.strictSame(sent, ['big'], 'a message heavier than the bound goes when nothing is untaken');
  const small = send('small', [], 10);
  await settle();
  t.strictSame(sent, ['big'], 'nothing more while it is untaken');
  take();
  await small;
  void send('half', [], 500);
  const over = send('over', [], 600);
  await received(3);
  await settle();
  t.strictSame(sent, ['big', 'small', 'half'], 'held back: 10 + 500 + 600 would weigh more than 1000');
  take();
  await settle();
  t.strictSame(sent, ['big', 'small', 'half'], 'the oldest taken frees its 10: 500 + 600 still weigh more');
  take();
  await over;
  await received(4);
  t.strictSame(sent, ['big', 'small', 'half', 'over'], 'the next taken frees its 500');
});
