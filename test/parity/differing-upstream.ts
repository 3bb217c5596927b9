/**
 * An upstream that differs on purpose, for the parity tests: a node:http
 * server per service in front of an in-process standin, forwarding every
 * request and letting the test change the answer of chosen exchanges (a
 * field, a status, a header, a list order, an index) before it goes back.
 * Streamed answers (the event stream, a followed log) are passed on as they
 * come, the event stream's frames changed one by one if the test asks.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Standin } from "../../src/emulator.js";
import type { RecordedService } from "../../src/parity/recording.js";
import type { Upstream } from "./parity-recorder.js";

export interface UpstreamAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Changes an answer; `n` counts the requests to that service, method and path, from 1. */
export type Alteration = (request: { service: RecordedService; method: string; path: string; n: number }, answer: UpstreamAnswer) => UpstreamAnswer;

export interface DifferingUpstream {
  readonly upstream: Upstream;
  close(): Promise<void>;
}

/** An answer the upstream gives without asking standin (one standin would not give, or not yet), or undefined to forward. */
export type Invention = (request: { service: RecordedService; method: string; path: string }) => UpstreamAnswer | undefined;

/** Changes one frame of the event stream (a parsed NDJSON line): the frames to send instead (none drops it). */
export type FrameAlteration = (request: { service: RecordedService; path: string }, frame: any) => any[];

const STREAMED = /^\/v1\/event\/stream(?:\?|$)|[?&]follow=true/;

export async function differingUpstream(
  emu: Standin,
  alter: Alteration,
  invent: Invention = () => undefined,
  alterFrame: FrameAlteration = (_, frame) => [frame],
): Promise<DifferingUpstream> {
  const servers = new Map<RecordedService, { server: Server; url: string }>();
  const seen = new Map<string, number>();
  for (const service of ["scheduler", "registry", "echo"] as const) {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", async () => {
        const method = req.method ?? "GET";
        const path = req.url ?? "/";
        // Answers are edited as text: none compressed.
        const headers = Object.fromEntries(Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === "string" && e[0] !== "accept-encoding"));
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        const invented = invent({ service, method, path });
        if (invented) {
          res.writeHead(invented.status, invented.headers);
          res.end(invented.body);
          return;
        }
        if (STREAMED.test(path)) {
          await passStream(emu, { service, path, headers }, res, alterFrame);
          return;
        }
        const response = await emu.app(service).request(path, { method, headers, body });
        const answer: UpstreamAnswer = { status: response.status, headers: {}, body: await response.text() };
        response.headers.forEach((value, name) => {
          if (name !== "content-length") answer.headers[name] = value;
        });
        const key = `${service} ${method} ${path}`;
        const n = (seen.get(key) ?? 0) + 1;
        seen.set(key, n);
        const altered = alter({ service, method, path, n }, answer);
        res.writeHead(altered.status, altered.headers);
        res.end(altered.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.set(service, { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  }
  return {
    upstream: (service, path, init) => fetch(`${servers.get(service)!.url}${path}`, init),
    close: async () => {
      for (const { server } of servers.values()) await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A streamed answer passed on chunk by chunk (the event stream line by line, through `alterFrame`) until the client goes away. */
async function passStream(
  emu: Standin,
  request: { service: RecordedService; path: string; headers: Record<string, string> },
  res: import("node:http").ServerResponse,
  alterFrame: FrameAlteration,
): Promise<void> {
  const controller = new AbortController();
  res.on("close", () => controller.abort());
  const response = await emu.app(request.service).request(request.path, { headers: request.headers, signal: controller.signal });
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== "content-length" && name !== "transfer-encoding") headers[name] = value;
  });
  res.writeHead(response.status, headers);
  const lines = request.path.startsWith("/v1/event/stream");
  let partial = "";
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      if (!lines) {
        res.write(chunk);
        continue;
      }
      const text = partial + Buffer.from(chunk).toString("utf8");
      const complete = text.split("\n");
      partial = complete.pop()!;
      for (const line of complete) for (const frame of alterFrame(request, JSON.parse(line))) res.write(`${JSON.stringify(frame)}\n`);
    }
  } catch {
    // The client went away.
  }
  res.end();
}

/** A JSON answer's body changed by `change` (which edits the parsed document in place). */
export function editJson(answer: UpstreamAnswer, change: (document: any) => void): UpstreamAnswer {
  const document = JSON.parse(answer.body);
  change(document);
  return { ...answer, body: JSON.stringify(document) };
}
