/**
 * The `--url` of the client commands and `wait-ready`: any service URL of a
 * running standin. `host:port` without a scheme is taken as `http://host:port`,
 * the form `CONSUL_HTTP_ADDR` uses (and the Consul CLI accepts), so the value a
 * test helper exports can be passed on as it is.
 */
import { CliFailure } from "./failure.js";

const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The URL as a `URL`, or a one-line CliFailure naming the command and what is wrong with it. */
export function serviceUrl(text: string, command: string): URL {
  const withScheme = HAS_SCHEME.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new CliFailure(`${command}: --url ${JSON.stringify(text)} is not a URL (expected e.g. http://127.0.0.1:4646 or 127.0.0.1:4646)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliFailure(`${command}: --url ${JSON.stringify(text)}: expected an http or https URL`);
  return url;
}
