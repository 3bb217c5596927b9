/**
 * `key=value` arguments (`token --claim`, the arguments of `act` and
 * `await`): the value is parsed as JSON when it is JSON (`count=3`,
 * `drain=true`, `meta={"a":"b"}`) and kept as text otherwise (`job=web`).
 * A value that looks like JSON but is meant as text is quoted: `job='"123"'`.
 */
import { CliFailure } from "./failure.js";

export function parseKeyValue(pair: string, what: string): [string, unknown] {
  const eq = pair.indexOf("=");
  if (eq <= 0) throw new CliFailure(`${what} expects key=value, got ${JSON.stringify(pair)}`);
  const raw = pair.slice(eq + 1);
  try {
    return [pair.slice(0, eq), JSON.parse(raw)];
  } catch {
    return [pair.slice(0, eq), raw];
  }
}

export function isKeyValue(word: string): boolean {
  return word.indexOf("=") > 0;
}
