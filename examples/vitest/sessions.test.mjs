// A session with a TTL expires on the virtual clock, seen through the real npm
// `consul` client. This file never imports standin: the setup file started the
// emulator, and the environment variables say where it is.
import Consul from "consul";
import { afterAll, describe, expect, it } from "vitest";

const [host, port] = process.env.CONSUL_HTTP_ADDR.split(":");
const consul = new Consul({ host, port: Number(port) });
afterAll(() => consul.destroy());

/** Moves standin's virtual clock through its control API. */
async function advance(by) {
  const response = await fetch(`${process.env.STANDIN_CONTROL_URL}/clock/advance`, {
    method: "POST",
    body: JSON.stringify({ by }),
  });
  expect(response.status).toBe(200);
  return response.json();
}

describe("registry sessions on the virtual clock", () => {
  it("a 15s-TTL session is reaped at 2×TTL (30s), not before", async () => {
    const { ID } = await consul.session.create({ name: "leader", ttl: "15s" });
    expect((await consul.session.info(ID)).TTL).toBe("15s");

    await advance("29s"); // past the TTL, but Consul only reaps at 2×TTL
    expect(await consul.session.info(ID)).toBeDefined();

    const { now } = await advance("1s");
    expect(now).toBe("2026-01-01T00:00:30Z");
    expect(await consul.session.info(ID)).toBeUndefined();
  });

  it("starts from a clean state: no session from the previous test, clock back at the start", async () => {
    expect(await consul.session.list()).toEqual([]);
    const clock = await (await fetch(`${process.env.STANDIN_CONTROL_URL}/clock`)).json();
    expect(clock.now).toBe("2026-01-01T00:00:00Z");

    await consul.session.create({ name: "mine", ttl: "10s" });
    expect((await consul.session.list()).map((s) => s.Name)).toEqual(["mine"]);
  });
});
