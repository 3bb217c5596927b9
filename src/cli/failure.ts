/** The CLI's one kind of user-facing failure, shared by the command modules. */

/** A clean one-line failure: printed without a stack trace, exit code 1 unless the command has its own (`job plan` fails with 255, as `nomad job plan` does). */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** A failure stays on one line: control characters (a garbage state file's bytes quoted in a parse error) are escaped, never sent to the terminal. */
export function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => (c === "\n" ? "\\n" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
}
