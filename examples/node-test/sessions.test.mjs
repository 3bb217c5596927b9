// node:test with standin: `useStandin()` registers before/beforeEach/after hooks that
// run an emulator on free ports for this file, set CONSUL_HTTP_ADDR and friends, and
// reset it before every test. `await … .start()` starts it right away, so the
// environment variables can be read at the top level.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import Consul from "consul";
import { useStandin } from "standin/node-test";

const standin = await useStandin().start();

const [host, port] = process.env.CONSUL_HTTP_ADDR.split(":");
const consul = new Consul({ host, port: Number(port) });
after(() => consul.destroy());

test("a 15s-TTL session is reaped at 2×TTL (30s), not before", async () => {
  const { ID } = await consul.session.create({ name: "leader", ttl: "15s" });

  standin.advance("29s"); // past the TTL, but Consul only reaps at 2×TTL
  assert.ok(await consul.session.info(ID), "still there after 29s");

  standin.advance("1s");
  assert.equal(await consul.session.info(ID), undefined);
  assert.equal(standin.emulator.clock.nowText(), "2026-01-01T00:00:30Z");
});

test("starts from a clean state: no session from the previous test, clock back at the start", async () => {
  assert.deepEqual(await consul.session.list(), []);
  assert.equal(standin.emulator.clock.nowText(), "2026-01-01T00:00:00Z");
});
