/**
 * What `--help` says beyond the options (the environment variables, how the
 * control API is authenticated), and what a usage error prints: the reason and
 * one usage line, not the whole help.
 */
import type { Command } from "commander";

/** The environment variables the CLI reads, for `standin --help`. */
export const ENVIRONMENT_HELP = `
Environment:
  STANDIN_URL            --url of the client commands (default http://127.0.0.1:4646; host:port means http://host:port)
  STANDIN_CONTROL_TOKEN  --control-token of the client commands
  STANDIN_CA             --ca of the client commands and wait-ready
  STANDIN_DEBUG=1        print the stack of an unexpected internal error (otherwise one line)
  STANDIN_COMPILE_CACHE  where the compiled code is cached between starts (default: a directory of yours under the
                         system's temporary one); off: no cache
  A flag given on the command line wins over its variable.

Control API authentication:
  start --control-token <secret> makes every /_standin request need the header
  "Authorization: Bearer <secret>" (scheme Bearer); GET /_standin/ready stays
  public. The client commands send it from --control-token or STANDIN_CONTROL_TOKEN.
`;

/**
 * Every command, at any depth, answers a usage error (a bad option value, an
 * unknown option, a missing argument) with commander's one-line reason and
 * one usage line. Called once the whole program is built: the usage line is
 * taken from the command's options and arguments.
 */
export function oneUsageLineOnError(command: Command): void {
  const path = commandPath(command);
  command.showHelpAfterError(`usage: ${path} ${command.usage()}  (see ${path} --help)`);
  if (command.options.some((option) => option.long === "--scheduler-port")) {
    command.configureOutput({ outputError: (text, write) => write(withServicePortsHint(text)) });
  }
  for (const sub of command.commands) oneUsageLineOnError(sub);
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/**
 * `start --port` is a guess at one port for all, which commander answers with
 * its nearest spelling (`--host`): name the three options that exist instead.
 */
function withServicePortsHint(text: string): string {
  return text.replace(
    /^(error: unknown option '--port(?:=[^']*)?')(?:\n\(Did you mean [^)]*\?\))?/,
    "$1\n(each service has its own: --scheduler-port, --registry-port, --echo-port; 0 = any free port)",
  );
}
