/**
 * `standin snapshot save <file>` / `load <file>`: the whole state out of a
 * running standin into a file, and back. A file that cannot be read or
 * written, or is not JSON, fails in one line before or without touching the
 * emulator's state.
 */
import type { Command } from "commander";
import { addClientOptions, type ClientOptions, control, printJson } from "../control-client.js";
import { readJsonFile, writeTextFile } from "../files.js";

export function snapshotCommand(program: Command): void {
  const snapshot = program.command("snapshot").description("save or load the whole state");
  addClientOptions(snapshot.command("save").description("write the state to a file").argument("<file>")).action(async (file: string, opts: ClientOptions) => {
    const state = await control(opts, "GET", "/snapshot");
    await writeTextFile("standin snapshot save", file, `${JSON.stringify(state)}\n`);
    process.stdout.write(`saved ${file}\n`);
  });
  addClientOptions(snapshot.command("load").description("restore the state from a file").argument("<file>")).action(async (file: string, opts: ClientOptions) => {
    const document = await readJsonFile("standin snapshot load", file);
    printJson(await control(opts, "PUT", "/snapshot", document));
  });
}
