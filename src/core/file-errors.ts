/**
 * One wording for a file that cannot be read or written, wherever standin
 * says so (the CLI's options and arguments, fixture files and the files they
 * name): `cannot read <file>: <CODE>: <reason in words>`, without the path
 * and syscall Node's own messages repeat (`…, open './x.json'`).
 */

/** The error's code and the reason in words for the usual codes; any other error's own message. */
export function fileErrorReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const words = code === undefined ? undefined : REASONS[code];
  return words === undefined ? (error as Error).message : `${code}: ${words}`;
}

const REASONS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "it is a directory",
  ENOTDIR: "a part of the path is not a directory",
};
