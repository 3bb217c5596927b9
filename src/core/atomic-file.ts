/**
 * Replacing a file whole, never half: the text goes to a temporary file
 * beside the target (`<file>.tmp-<pid>-<n>`, a new name each write, which
 * state-file.ts's clean-up of a killed process's leftovers recognises),
 * then a rename puts it in place. A failure removes the temporary and is
 * passed on, for the caller to word.
 */
import { type FileHandle, open, rename, unlink } from "node:fs/promises";

let writes = 0;

/** Writes `content` (text, or what `write` puts into the open file) to `path` atomically. */
export async function replaceFile(path: string, content: string | ((file: FileHandle) => Promise<void>)): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}-${++writes}`;
  try {
    const file = await open(temporary, "w");
    try {
      if (typeof content === "string") await file.writeFile(content);
      else await content(file);
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
}
