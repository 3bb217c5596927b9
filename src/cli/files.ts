/**
 * The files the client commands read and write (`snapshot load`/`save`):
 * every failure is one line naming the file and the reason in words, never a
 * stack trace.
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileErrorReason } from "../core/file-errors.js";
import { CliFailure } from "./failure.js";

/** The file's text, or a CliFailure `<command>: cannot read <file>: <reason>`. */
export async function readTextFile(command: string, file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    throw new CliFailure(`${command}: cannot read ${file}: ${fileErrorReason(error)}`);
  }
}

/** The file parsed as JSON, or a CliFailure that says which file is not JSON and why. */
export async function readJsonFile(command: string, file: string): Promise<unknown> {
  const text = await readTextFile(command, file);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliFailure(`${command}: ${file} is not JSON: ${(error as Error).message}`);
  }
}

export async function writeTextFile(command: string, file: string, text: string): Promise<void> {
  try {
    await writeFile(file, text);
  } catch (error) {
    throw new CliFailure(`${command}: cannot write ${file}: ${fileErrorReason(error)}`);
  }
}

export { fileErrorReason };
