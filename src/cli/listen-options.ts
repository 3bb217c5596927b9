/**
 * The options that say where a command listens and how a script finds it
 * there, declared once for every command that listens where `start` does
 * (`start`, `record`): the same flags, defaults and help text.
 */
import { Option } from "commander";
import { DEFAULT_PORTS, type ServiceName } from "../http/service-names.js";
import { port } from "./option-values.js";

export function hostOption(): Option {
  return new Option("--host <addr>", "address to listen on").default("127.0.0.1");
}

/** `--scheduler-port` and its two siblings. */
export function portOption(service: ServiceName): Option {
  return new Option(`--${service}-port <n>`, `${service} port; 0 = any free port`).argParser(port).default(DEFAULT_PORTS[service]);
}

export function readyFileOption(): Option {
  return new Option("--ready-file <file>", "once every port listens, write the URLs and the pid here as JSON (atomically); removed on exit");
}

export function pidFileOption(): Option {
  return new Option("--pid-file <file>", "once every port listens, write the pid here; removed on exit");
}
