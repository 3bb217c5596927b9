/**
 * An upstream that differs on purpose, for the parity tests: a node:http
 * server per service in front of an in-process standin, forwarding every
 * request and letting the test change the answer of chosen exchanges (a
 * field, a status, a header, a list order, an index) before it goes back.
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

export async function differingUpstream(emu: Standin, alter: Alteration, invent: Invention = () => undefined): Promise<DifferingUpstream> {
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

/** A JSON answer's body changed by `change` (which edits the parsed document in place). */
export function editJson(answer: UpstreamAnswer, change: (document: any) => void): UpstreamAnswer {
  const document = JSON.parse(answer.body);
  change(document);
  return { ...answer, body: JSON.stringify(document) };
}
