/**
 * `standin record` keeps the bytes of a switched protocol (the WebSocket
 * frames of `nomad alloc exec`) each way, as they passed: text when they are
 * UTF-8, base64 otherwise, the first 1 MiB of a direction, and nothing past
 * the recording's budget, each cut said in `truncated`.
 */
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { startRecorder, type RunningRecorder } from "../../src/parity/record/recorder.js";
import { UPGRADED_BYTES } from "../../src/parity/record/switched-bytes.js";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An upstream that switches protocols, then answers each chunk upper-cased (the bytes as latin1, so any byte passes). */
async function shoutingUpstream(): Promise<string> {
  const sockets = new Set<Duplex>();
  const server: Server = createServer((_, res) => res.writeHead(404).end());
  server.on("upgrade", (_incoming: IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.add(socket);
    socket.on("end", () => socket.end());
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: shout\r\nConnection: Upgrade\r\n\r\n");
    const shout = (chunk: Buffer) => socket.write(Buffer.from(chunk.toString("latin1").toUpperCase(), "latin1"));
    if (head.length > 0) shout(head);
    socket.on("data", shout);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function recorderFor(upstream: string, budgetBytes?: number): Promise<RunningRecorder> {
  const recorder = await startRecorder({ upstreams: { scheduler: upstream }, ports: { scheduler: 0 }, readProducts: false, budgetBytes });
  cleanups.push(() => recorder.close());
  return recorder;
}

/** Switches, then sends each of `messages` and waits for as many bytes back before the next; resolves with all that came back. */
async function converse(base: string, messages: Buffer[]): Promise<Buffer> {
  const socket = await new Promise<Duplex>((resolve, reject) => {
    const sent = request(new URL("/v1/client/allocation/a1/exec?task=web", base), { headers: { Connection: "Upgrade", Upgrade: "shout" }, agent: false });
    sent.on("upgrade", (_answer: IncomingMessage, switched: Duplex) => resolve(switched));
    sent.on("response", (answer: IncomingMessage) => reject(new Error(`not switched: ${answer.statusCode}`)));
    sent.on("error", reject);
    sent.end();
  });
  let received = Buffer.alloc(0);
  let expected = 0;
  let arrived: () => void = () => {};
  socket.on("data", (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    if (received.length >= expected) arrived();
  });
  for (const message of messages) {
    expected += message.length;
    const all = new Promise<void>((resolve) => (arrived = resolve));
    socket.write(message);
    await all;
  }
  await new Promise<void>((resolve) => {
    socket.once("close", () => resolve());
    socket.end();
  });
  return received;
}

describe("standin record keeps a switched protocol's bytes", () => {
  it("each way, as text when they are UTF-8 and as base64 when not", async () => {
    const recorder = await recorderFor(await shoutingUpstream());
    const binary = Buffer.from([0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]);
    const back = await converse(recorder.urls.scheduler!, [Buffer.from("hello "), Buffer.from("exec"), binary]);
    expect(back.toString("latin1")).toBe(`HELLO EXEC${binary.toString("latin1").toUpperCase()}`);

    const recording = await recorder.close();
    expect(recording.exchanges).toHaveLength(1);
    const { upgraded } = recording.exchanges[0]!;
    const sent = Buffer.concat([Buffer.from("hello exec"), binary]);
    expect(upgraded).toEqual({
      toUpstream: { bytes: sent.length, kept: { base64: sent.toString("base64"), bytes: sent.length } },
      toClient: { bytes: back.length, kept: { base64: back.toString("base64"), bytes: back.length } },
    });

    const text = await recorderFor(await shoutingUpstream());
    await converse(text.urls.scheduler!, [Buffer.from("ls -l\n")]);
    expect((await text.close()).exchanges[0]!.upgraded).toEqual({
      toUpstream: { bytes: 6, kept: { text: "ls -l\n", bytes: 6 } },
      toClient: { bytes: 6, kept: { text: "LS -L\n", bytes: 6 } },
    });
  });

  it("the first 1 MiB of a direction, and how many bytes passed in all", async () => {
    const recorder = await recorderFor(await shoutingUpstream());
    const big = Buffer.alloc(UPGRADED_BYTES + 1000, "a");
    const back = await converse(recorder.urls.scheduler!, [big, Buffer.from("tail")]);
    expect(back.length).toBe(big.length + 4);
    const { upgraded } = (await recorder.close()).exchanges[0]!;
    expect(upgraded!.toUpstream).toEqual({ bytes: big.length + 4, kept: { text: "a".repeat(UPGRADED_BYTES), bytes: UPGRADED_BYTES }, truncated: "limit" });
    expect(upgraded!.toClient).toEqual({ bytes: big.length + 4, kept: { text: "A".repeat(UPGRADED_BYTES), bytes: UPGRADED_BYTES }, truncated: "limit" });
  });

  it("nothing past the recording's budget: the bytes are counted, the recording stops and says where", async () => {
    const recorder = await recorderFor(await shoutingUpstream(), 4096);
    const back = await converse(recorder.urls.scheduler!, [Buffer.alloc(5000, "b")]);
    expect(back.length).toBe(5000);
    const recording = await recorder.close();
    expect(recording.exchanges[0]!.upgraded).toEqual({ toUpstream: { bytes: 5000, truncated: "budget" }, toClient: { bytes: 5000, truncated: "budget" } });
    expect(recording.truncated).toBe(true);
    expect(recording.truncation).toMatchObject({ reason: "bytes", limit: 4096 });
  });
});
