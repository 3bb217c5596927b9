/**
 * The client side of the control API, shared by the commands that talk to a
 * running standin (`clock`, `advance`, `snapshot`, `act`, `await`,
 * `journal`…): their common options, and one request with every way it can
 * fail (bad URL, nothing listening, TLS, a refusal, an answer that is not
 * JSON) turned into one line.
 */
import { type Command, Option } from "commander";
import { CliFailure } from "./failure.js";
import { send } from "./send.js";
import { serviceUrl } from "./service-url.js";

export const DEFAULT_URL = "http://127.0.0.1:4646";

export interface ClientOptions {
  url: string;
  controlToken?: string;
  /** A CA certificate file to trust for an https URL. */
  ca?: string;
}

/** `--url`, `--control-token`, `--ca`, each with its environment variable. */
export function addClientOptions(command: Command): Command {
  return command
    .addOption(new Option("--url <url>", "any service URL of the running emulator (host:port means http://host:port)").env("STANDIN_URL").default(DEFAULT_URL))
    .addOption(new Option("--control-token <secret>", "the token of `start --control-token`, sent as Authorization: Bearer <secret>").env("STANDIN_CONTROL_TOKEN"))
    .addOption(new Option("--ca <file>", "trust this CA certificate for an https --url (the `tls ca` file of `start --tls`)").env("STANDIN_CA"));
}

export interface ControlAnswer {
  ok: boolean;
  status: number;
  /** The parsed JSON body. */
  body: unknown;
  /** `<METHOD> <path>`, for messages. */
  request: string;
  /** Whether the request carried a control token (a 401 then means a wrong one, not a missing one). */
  tokenSent?: boolean;
}

/**
 * One control request; resolves with any answer that is JSON (a refusal
 * included), a CliFailure when there is none.
 */
export async function controlRequest(opts: ClientOptions, method: string, path: string, body?: unknown): Promise<ControlAnswer> {
  const base = serviceUrl(opts.url, "standin");
  const url = new URL(`/_standin${path}`, base);
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (opts.controlToken) headers.Authorization = `Bearer ${opts.controlToken}`;
  let response: { ok: boolean; status: number; text: string };
  try {
    response = await send(url, method, headers, body === undefined ? undefined : JSON.stringify(body), opts.ca);
  } catch (error) {
    if (error instanceof CliFailure) throw error;
    throw new CliFailure(`standin: cannot reach ${base.origin}: ${connectFailure(error, base, opts.ca)}`);
  }
  const request = `${method} ${url.pathname}`;
  try {
    return { ok: response.ok, status: response.status, body: JSON.parse(response.text), request, tokenSent: Boolean(opts.controlToken) };
  } catch {
    // Not a standin (or not this path): say what answered, briefly.
    const gist = firstLine(response.text);
    throw new CliFailure(`standin: ${request} at ${base.origin} answered ${response.status} ${gist ? `"${gist}"` : "with an empty body"}, not JSON: is it a standin's URL?`);
  }
}

/** The answer's JSON body; a refusal is a CliFailure with the status and the emulator's error message. */
export async function control(opts: ClientOptions, method: string, path: string, body?: unknown): Promise<unknown> {
  const answer = await controlRequest(opts, method, path, body);
  if (!answer.ok) throw refusal(answer);
  return answer.body;
}

export function refusal(answer: ControlAnswer): CliFailure {
  const error = (answer.body as { error?: unknown } | null)?.error;
  const message = typeof error === "string" ? error : JSON.stringify(answer.body);
  return new CliFailure(`standin: ${answer.request} failed (${answer.status}): ${message}${answer.status === 401 ? tokenHint(answer) : ""}`);
}

/** A 401 says where the client commands take the token from: the emulator's message speaks of the header. */
function tokenHint(answer: ControlAnswer): string {
  return answer.tokenSent
    ? " (the token given by --control-token or STANDIN_CONTROL_TOKEN is not the one this standin was started with)"
    : " (give the token of start --control-token with --control-token or STANDIN_CONTROL_TOKEN)";
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Why a request got no answer, in words where the usual causes have a plain name (Node's own messages are OpenSSL's for TLS). */
export function connectFailure(error: unknown, url: URL, ca: string | undefined): string {
  const cause = ((error as Error).cause ?? error) as NodeJS.ErrnoException;
  const message = cause?.message ?? String(error);
  if (cause?.code === "ECONNREFUSED") return `${message} (is standin running there?)`;
  if (url.protocol === "https:" && /wrong version number|packet length too long/i.test(message)) return "it does not answer TLS (an http:// URL?)";
  if (url.protocol === "http:" && /other side closed|socket hang up/i.test(message)) return `${message} (an https:// URL? start --tls serves HTTPS)`;
  if (/self[- ]signed|unable to (get|verify)|certificate/i.test(message)) {
    return `${message} (${ca ? "is --ca that standin's CA?" : "for a standin started with --tls, give its CA with --ca or STANDIN_CA"})`;
  }
  return message;
}

const GIST_LENGTH = 80;

function firstLine(text: string): string {
  const line = text.trim().split("\n", 1)[0] ?? "";
  return line.length > GIST_LENGTH ? `${line.slice(0, GIST_LENGTH)}…` : line;
}
