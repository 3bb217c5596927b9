/**
 * An allocation's directory as the Nomad client lays it out
 * (client/allocdir), built on demand from the state: no files exist
 * anywhere, every read renders the tree at the current instant.
 *
 * - `alloc/` with `data/`, `logs/` and `tmp/`; `alloc/logs/<task>.stdout.<n>`
 *   and `.stderr.<n>` once the task started (task-logs.ts writes them);
 * - `<task>/` with `local/`, `private/`, `secrets/` and `tmp/` once the
 *   client knows the task (it has a task state);
 * - each template block's destination as a file holding the template's
 *   `data` as written (not rendered), relative to the task's directory
 *   (`${NOMAD_TASK_DIR}`, `${NOMAD_SECRETS_DIR}`, `${NOMAD_ALLOC_DIR}`
 *   resolved), mode from its `perms` (default 0644).
 *
 * Not emulated: the log fifos (`.<task>.stdout.fifo`), a driver's chroot
 * contents. Logs rotate (`.0`, `.1`, …; the newest `max_files` kept) as
 * task-logs.ts computes them.
 */
import type { Json } from "../state/model.js";
import type { AllocRow, JobRow } from "../state/model.js";
import { LOG_TYPES, type TaskLogs } from "../state/task-logs.js";
import type { TaskStatesRow } from "../state/task-states.js";

/** Where the client keeps allocation directories (error texts name the host path, as Nomad's do). */
export const ALLOC_DIR_ROOT = "/opt/nomad/data/alloc";
/** What a directory's stat reports as its size (ext4's block). */
const DIR_SIZE = 4096;

export interface VirtualFile {
  readonly name: string;
  readonly isDir: boolean;
  /** Go's os.FileMode String(). */
  readonly mode: string;
  /** Virtual ms. */
  readonly modTime: number;
  /** A file's bytes (read when asked). */
  readonly content: () => Buffer;
  readonly children: Map<string, VirtualFile>;
  /** A log file's next scripted write while its task runs (virtual ms). */
  readonly nextAt?: number;
}

/** A path the tree does not hold: Go's PathError texts. */
export type Lookup = { kind: "found"; file: VirtualFile; abs: string } | { kind: "missing"; abs: string } | { kind: "escapes" };

const EMPTY = Buffer.alloc(0);

function dir(name: string, modTime: number): VirtualFile {
  return { name, isDir: true, mode: "drwxrwxrwx", modTime, content: () => EMPTY, children: new Map() };
}

/** Go's FileMode.String() for a regular file's permission bits. */
export function fileModeString(perms: number): string {
  const bits = "rwxrwxrwx";
  let out = "-";
  for (let i = 0; i < 9; i++) out += perms & (1 << (8 - i)) ? bits[i] : "-";
  return out;
}

/** filepath.Clean of a slash path (relative results never start with `/`). */
function cleanSegments(path: string): string[] {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else out.push("..");
    } else out.push(part);
  }
  return out;
}

/** A template's destination relative to the allocation directory (undefined when it leaves it). */
function templateDestination(task: string, dest: string): string[] | undefined {
  const interpolated = dest.replaceAll("${NOMAD_TASK_DIR}", "local").replaceAll("${NOMAD_SECRETS_DIR}", "secrets").replaceAll("${NOMAD_ALLOC_DIR}", "../alloc");
  const segments = cleanSegments(`${task}/${interpolated.startsWith("/") ? interpolated.slice(1) : interpolated}`);
  if (segments.length < 2 || segments[0] === "..") return undefined;
  return segments;
}

export class AllocDirectory {
  private constructor(
    readonly alloc: AllocRow,
    readonly root: VirtualFile,
  ) {}

  /** The host path of a path inside the directory. */
  abs(segments: readonly string[]): string {
    return [ALLOC_DIR_ROOT, this.alloc.ID, ...segments].join("/");
  }

  /**
   * The tree of an allocation the client runs (it has task states), at the
   * current instant; undefined when the client has not received it.
   */
  static of(alloc: AllocRow, job: JobRow | undefined, logs: TaskLogs): AllocDirectory | undefined {
    const states = alloc.TaskStates as TaskStatesRow | null | undefined;
    if (!states) return undefined;
    const created = alloc.CreateTime;
    const root = dir(alloc.ID, created);
    const shared = dir("alloc", created);
    root.children.set("alloc", shared);
    for (const name of ["data", "logs", "tmp"]) shared.children.set(name, dir(name, created));
    const logsDir = shared.children.get("logs")!;
    const group = (job?.TaskGroups as Json[] | undefined)?.find((g) => g.Name === alloc.TaskGroup);
    const tasks = ((group?.Tasks as Json[] | undefined) ?? []).filter((t) => states[String(t.Name)] !== undefined);
    for (const task of tasks) {
      const name = String(task.Name);
      const state = states[name]!;
      const setupAt = state.Events[0]?.Time ?? created;
      const taskDir = dir(name, setupAt);
      root.children.set(name, taskDir);
      for (const sub of ["local", "private", "secrets", "tmp"]) taskDir.children.set(sub, dir(sub, setupAt));
      for (const template of (task.Templates as Json[] | null | undefined) ?? []) {
        const segments = templateDestination(name, String(template.DestPath ?? ""));
        if (!segments) continue;
        const perms = Number.parseInt(String(template.Perms || "0644"), 8);
        const data = Buffer.from(String(template.EmbeddedTmpl ?? ""), "utf8");
        place(
          root,
          segments,
          {
            name: segments[segments.length - 1]!,
            isDir: false,
            mode: fileModeString(Number.isNaN(perms) ? 0o644 : perms),
            modTime: setupAt,
            content: () => data,
            children: new Map(),
          },
          setupAt,
        );
      }
      for (const type of LOG_TYPES) {
        const file = logs.file(alloc, name, type);
        if (!file) continue;
        // Every kept file of the rotation; only the newest still grows.
        const newest = file.files[file.files.length - 1]!;
        for (const rotated of file.files) {
          const fileName = `${name}.${type}.${rotated.index}`;
          logsDir.children.set(fileName, {
            name: fileName,
            isDir: false,
            mode: "-rw-r--r--",
            modTime: rotated.modTime,
            content: () => rotated.content,
            children: new Map(),
            ...(rotated === newest ? { nextAt: file.nextAt } : {}),
          });
        }
      }
    }
    return new AllocDirectory(alloc, root);
  }

  /** A path as the client's AllocDir takes it (relative to the directory, `/` meaning its root). */
  lookup(path: string): Lookup {
    const segments = cleanSegments(path);
    if (segments[0] === "..") return { kind: "escapes" };
    let at = this.root;
    for (const segment of segments) {
      const next = at.isDir ? at.children.get(segment) : undefined;
      if (!next) return { kind: "missing", abs: this.abs(segments) };
      at = next;
    }
    return { kind: "found", file: at, abs: this.abs(segments) };
  }

  /** "secret" or "private" when a path lies in a task's `secrets` or `private` directory (the client refuses to read those). */
  protectedKind(path: string): "secret" | "private" | undefined {
    const [task, sub] = cleanSegments(path);
    if (task === undefined || task === "alloc" || !this.root.children.has(task)) return undefined;
    const lower = sub?.toLowerCase();
    return lower === "secrets" ? "secret" : lower === "private" ? "private" : undefined;
  }
}

/** Puts a file at `segments`, making the directories on the way. */
function place(root: VirtualFile, segments: readonly string[], file: VirtualFile, modTime: number): void {
  let at = root;
  for (const segment of segments.slice(0, -1)) {
    let next = at.children.get(segment);
    if (!next) at.children.set(segment, (next = dir(segment, modTime)));
    if (!next.isDir) return;
    at = next;
  }
  at.children.set(file.name, file);
}

/** The size a stat reports. */
export function sizeOf(file: VirtualFile): number {
  return file.isDir ? DIR_SIZE : file.content().length;
}
