/**
 * `standin record` forwards a request that switches protocols (a WebSocket,
 * as `nomad alloc exec` opens) unchanged, passes the switched connection's
 * bytes through both ways, and records the exchange's head; an upstream
 * that does not switch has its answer passed back as it is.
 */
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { startRecorder, type RunningRecorder } from "../../src/parity/record/recorder.js";
import { startStandin, type RunningStandin } from "../../src/server.js";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An upstream that switches to a protocol that answers each chunk upper-cased, and says which headers asked it to. */
async function switchingUpstream(): Promise<{ url: string; asked: IncomingMessage[] }> {
  const asked: IncomingMessage[] = [];
  const sockets = new Set<Duplex>();
  const server: Server = createServer((_, res) => res.writeHead(404).end());
  server.on("upgrade", (incoming: IncomingMessage, socket: Duplex) => {
    asked.push(incoming);
    sockets.add(socket);
    // As a server of the switched protocol does: the other side's end is the conversation's.
    socket.on("end", () => socket.end());
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: shout\r\nConnection: Upgrade\r\nX-Upstream: yes\r\n\r\n");
    socket.on("data", (chunk: Buffer) => socket.write(chunk.toString("utf8").toUpperCase()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}

async function recorderFor(upstream: string): Promise<RunningRecorder> {
  const recorder = await startRecorder({ upstreams: { scheduler: upstream }, ports: { scheduler: 0 }, readProducts: false });
  cleanups.push(() => recorder.close());
  return recorder;
}

/** Asks `base` to switch to `protocol`; resolves with the 101's headers and the socket, or the answer when it did not switch. */
function askToSwitch(
  base: string,
  path: string,
  protocol: string,
): Promise<{ switched: true; headers: IncomingMessage["headers"]; socket: Duplex } | { switched: false; status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(new URL(path, base), { headers: { Connection: "Upgrade", Upgrade: protocol, "X-Client": "test" }, agent: false });
    sent.on("upgrade", (answer: IncomingMessage, socket: Duplex) => resolve({ switched: true, headers: answer.headers, socket }));
    sent.on("response", (answer: IncomingMessage) => {
      let body = "";
      answer.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      answer.on("end", () => resolve({ switched: false, status: answer.statusCode!, body }));
    });
    sent.on("error", reject);
    sent.end();
  });
}

function nextChunk(socket: Duplex): Promise<string> {
  return new Promise((resolve) => socket.once("data", (chunk: Buffer) => resolve(chunk.toString("utf8"))));
}

describe("standin record and protocol switches", () => {
  it("forwards the upgrade with its headers, passes the switched bytes both ways, and records the exchange's head", async () => {
    const upstream = await switchingUpstream();
    const recorder = await recorderFor(upstream.url);
    const answer = await askToSwitch(recorder.urls.scheduler!, "/v1/client/allocation/abc/exec?task=web", "shout");
    expect(answer.switched).toBe(true);
    if (!answer.switched) return;
    expect(answer.headers).toMatchObject({ upgrade: "shout", connection: "Upgrade", "x-upstream": "yes" });
    expect(upstream.asked).toHaveLength(1);
    expect(upstream.asked[0]!.headers).toMatchObject({ upgrade: "shout", connection: "Upgrade", "x-client": "test" });
    expect(upstream.asked[0]!.url).toBe("/v1/client/allocation/abc/exec?task=web");

    const reply = nextChunk(answer.socket);
    answer.socket.write("hello");
    expect(await reply).toBe("HELLO");
    const again = nextChunk(answer.socket);
    answer.socket.write("again");
    expect(await again).toBe("AGAIN");
    answer.socket.end();

    const recording = await recorder.close();
    expect(recording.exchanges).toHaveLength(1);
    expect(recording.exchanges[0]).toMatchObject({ seq: 1, method: "GET", path: "/v1/client/allocation/abc/exec?task=web", headers: { "x-client": "test" } });
    expect(recording.exchanges[0]!.response).toMatchObject({ status: 101, headers: { "x-upstream": "yes" } });
  });

  it("passes back the answer of an upstream that does not switch (standin's own), and records it", async () => {
    const standin: RunningStandin = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
    cleanups.push(() => standin.close());
    const recorder = await recorderFor(standin.urls.scheduler);
    const direct = await askToSwitch(standin.urls.scheduler, "/v1/status/leader", "websocket");
    const through = await askToSwitch(recorder.urls.scheduler!, "/v1/status/leader", "websocket");
    expect(direct.switched).toBe(false);
    expect(through).toEqual(direct);
    const recording = await recorder.close();
    expect(recording.exchanges[0]!.response).toMatchObject({ status: (direct as { status: number }).status, body: { text: (direct as { body: string }).body } });
  });
});
