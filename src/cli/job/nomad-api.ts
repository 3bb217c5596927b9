/**
 * The scheduler's Nomad API as `standin job run` / `job plan` call it: one
 * request to `--url` (the scheduler's URL) with the ACL token, answered with
 * the status and the body (JSON when it is JSON, Nomad's plain-text errors
 * otherwise). A connection failure is the same one line the control commands
 * print; a refusal is left to the caller, which knows what the request was for.
 */
import { connectFailure } from "../control-client.js";
import { CliFailure } from "../failure.js";
import { readTextFile } from "../files.js";
import { send } from "../send.js";
import { serviceUrl } from "../service-url.js";

export interface JobCommandOptions {
  url: string;
  token?: string;
  ca?: string;
}

export interface NomadAnswer {
  ok: boolean;
  status: number;
  text: string;
  /** The parsed body, undefined when it is not JSON. */
  body: unknown;
}

export class NomadApi {
  private readonly base: URL;

  constructor(
    private readonly opts: JobCommandOptions,
    private readonly command: string,
    readonly exitCode: number,
  ) {
    this.base = serviceUrl(opts.url, command);
  }

  async request(method: string, path: string, body?: unknown): Promise<NomadAnswer> {
    const url = new URL(path, this.base);
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (this.opts.token) headers["X-Nomad-Token"] = this.opts.token;
    let response: { ok: boolean; status: number; text: string };
    try {
      response = await send(url, method, headers, body === undefined ? undefined : JSON.stringify(body), this.opts.ca);
    } catch (error) {
      if (error instanceof CliFailure) throw new CliFailure(error.message, this.exitCode);
      throw this.failure(`cannot reach ${this.base.origin}: ${connectFailure(error, this.base, this.opts.ca)}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.text);
    } catch {
      parsed = undefined;
    }
    return { ...response, body: parsed };
  }

  /** The JSON answer of a request that must succeed; otherwise a one-line failure with Nomad's error text. */
  async expect(what: string, method: string, path: string, body?: unknown): Promise<unknown> {
    const answer = await this.request(method, path, body);
    if (!answer.ok) throw this.failure(`${what}: ${method} ${path} answered ${answer.status}: ${oneLineText(answer.text) || "(empty body)"}${notScheduler(answer)}`);
    if (answer.body === undefined) throw this.failure(`${what}: ${method} ${path} answered ${answer.status} with a body that is not JSON: is --url the scheduler's URL?`);
    return answer.body;
  }

  failure(message: string): CliFailure {
    return new CliFailure(`${this.command}: ${message}`, this.exitCode);
  }

  /** A file the command reads, its failure carrying the command's exit code (255 for plan). */
  async readFile(file: string): Promise<string> {
    try {
      return await readTextFile(this.command, file);
    } catch (error) {
      throw error instanceof CliFailure ? new CliFailure(error.message, this.exitCode) : error;
    }
  }
}

/** A 404 for a Nomad route usually means --url names another service (the registry or echo port). */
function notScheduler(answer: NomadAnswer): string {
  return answer.status === 404 ? " (is --url the scheduler's URL? the job commands talk to the Nomad API)" : "";
}

/** Nomad's multi-line error texts (a multierror's `\n\t* ` items, several diagnostics) as one line, each line's words kept. */
export function oneLineText(text: string): string {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join(" ");
}
