import test from 'ava';
import { createServer, type Server } from 'node:net';
import { DevFront } from '../../lib/cli/dev/front.ts';
import { listenOn } from '../../lib/http/listen.ts';
import { dropTestDatabase, startTestService } from '../helpers/service.ts';

test.after.always(dropTestDatabase);

/** A port another process (here, another server) listens on. */
async function takenPort(t: { teardown: (fn: () => Promise<void>) => void }): Promise<number> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  return (holder.address() as { port: number }).port;
}

function closed(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

test('a PORT another process listens on stops start-up naming PORT, not only the address', async (t) => {
  const port = await takenPort(t);
  const error = await t.throwsAsync(startTestService(t, { env: { PORT: String(port), LOG_LEVEL: 'silent' } }));
  t.is(error?.message, `PORT ${port}: another process already listens there on 127.0.0.1 (EADDRINUSE)`);
});

test("make dev's front names PORT too", async (t) => {
  const port = await takenPort(t);
  const front = new DevFront();
  t.teardown(() => front.close());
  const error = await t.throwsAsync(front.listen(port, '127.0.0.1'));
  t.is(error?.message, `PORT ${port}: another process already listens there on 127.0.0.1 (EADDRINUSE)`);
});

test('a HOST that is no address of this machine is named as HOST', async (t) => {
  const server = createServer();
  // 192.0.2.0/24 is reserved for documentation: never an address of a real interface.
  const error = await t.throwsAsync(listenOn(server, '192.0.2.1', 0));
  t.is(error?.message, 'HOST 192.0.2.1: not an address of this machine (EADDRNOTAVAIL); 0.0.0.0 listens on every IPv4 address, :: on every address');
});

test('a HOST name that does not resolve is named as HOST', async (t) => {
  const error = await t.throwsAsync(listenOn(createServer(), 'no-such-host.invalid', 0));
  t.regex(error?.message ?? '', /^HOST no-such-host\.invalid: not an address of this machine \((ENOTFOUND|EAI_AGAIN)\)/);
});

test('a free port is listened on as before', async (t) => {
  const server = createServer();
  await listenOn(server, '127.0.0.1', 0);
  t.true((server.address() as { port: number }).port > 0);
  await closed(server);
});

test('an error the server meets once listening is not swallowed by the start-up listener', async (t) => {
  const server = createServer();
  await listenOn(server, '127.0.0.1', 0);
  t.teardown(() => closed(server));
  // With no listener of its own, an 'error' must reach the process (an emitter throws it), not vanish.
  t.throws(() => server.emit('error', new Error('accept failed later')), { message: 'accept failed later' });
});
