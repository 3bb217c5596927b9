/**
 * Nomad HCL2 job files (jobspec2) → the `api.Job` JSON that Nomad 1.9's
 * parser builds: what `POST /v1/jobs/parse` answers and what HCL fixtures
 * register. The HCL language itself lives in src/core/hcl (see its module
 * comment for why it is hand-written); this module maps a job file onto the
 * api structs: top-level `variable`/`variables`/`locals`/`job` blocks, the
 * jobspec2 decoding rules (decode.ts), `dynamic` blocks (body.ts) and
 * jobspec2's normalization (normalize.ts).
 *
 * Determinism: `uuidv4()` draws from the caller's `newUuid` (the emulator's
 * seeded generator). Nomad has no `timestamp()` function, so neither does
 * this parser; filesystem functions (`file`, `abspath`…) are refused as the
 * Nomad server refuses them.
 *
 * Sources read (hashicorp/nomad v1.9): jobspec2/parse.go, parse_job.go,
 * types.config.go, types.variables.go, hcl_conversions.go, parse_map.go,
 * functions.go, hclutil/blockattrs.go; api/*.go for the struct tags.
 */
import { parseGoDuration } from "../../../core/durations.js";
import {
  type Block,
  type Diagnostic,
  diagnosticString,
  diagnosticsString,
  errorDiag,
  type EvalContext,
  Evaluator,
  FILESYSTEM_FUNCTIONS,
  HclDiagnosticsError,
  HclLimitError,
  parseConfig,
  standardFunctions,
  type Value,
} from "../../../core/hcl/index.js";
import { checkSchema, DecodeContext, defRange, MAX_DIAGNOSTICS, TooManyDiagnostics, viewBody } from "./body.js";
import { JobDecoder, type Obj } from "./decode.js";
import { isJsonSyntax, JsonSyntaxError, jsonJobToNative, jsonVariablesToNative } from "./json-syntax.js";
import { normalizeJob } from "./normalize.js";
import { collectVariables, evaluateLocals, VariableSyntaxError } from "./variables.js";

export { canonicalizeApiJob } from "./canonicalize.js";

export interface ParseJobHclOptions {
  /** File name used in diagnostics; Nomad's HTTP API uses `input.hcl`. */
  readonly filename?: string;
  /** Variable-file content (the API's `Variables`), parsed under `filename`. */
  readonly variables?: string;
  /** Further variable files, in precedence order (later wins), after `variables`. */
  readonly varFiles?: readonly { readonly filename: string; readonly text: string }[];
  /** `-var name=value` arguments, read as `nomad job run -var` reads them (above variable files). */
  readonly argVars?: readonly string[];
  /** An environment whose `NOMAD_VAR_<name>` entries set variables (below variable files). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Undeclared names in variable files and `-var` are errors (Nomad's CLI
   * parses with Strict); otherwise warnings, shown only beside errors (the
   * HTTP API).
   */
  readonly strict?: boolean;
  /** Variable values with their JSON types (fixtures' `vars`), highest precedence. */
  readonly vars?: Readonly<Record<string, unknown>>;
  /** A fresh UUID for `uuidv4()`: pass the emulator's seeded generator. */
  readonly newUuid: () => string;
}

/**
 * A job file Nomad would refuse. `message` is the text Nomad puts after
 * `Failed to parse job: ` (HCL diagnostics as `file:line,col-col: Summary;
 * Detail`); `diagnostics` holds them one by one.
 */
export class HclJobError extends Error {
  readonly diagnostics: readonly Diagnostic[];
  constructor(message: string, diagnostics: readonly Diagnostic[]) {
    super(message);
    this.name = "HclJobError";
    this.diagnostics = diagnostics;
  }
}

/**
 * Expression evaluations one job file may need, a call counting also for the
 * size of what it reads and returns (core/hcl/evaluate.ts): far above a real
 * job (a few thousand), low enough that running out of it takes well
 * under 100 ms (200,000 took 90 ms of server CPU).
 */
export const EVALUATION_BUDGET = 100_000;

/**
 * String characters and collection elements one job file's expressions may
 * build in all (core/hcl/value-size.ts): over a hundred times the largest
 * job file, so `for` expressions and templates that expand a file fit, while
 * a few lines that double a string 23 times (64 MB) stop with a diagnostic.
 */
export const VALUE_BUDGET = 8 * 1024 * 1024;

/**
 * The largest job file standin reads, with its variable files, in UTF-8
 * bytes. Nomad has no such limit; standin parses on the event loop. Measured
 * on the 2-core machine under load, 128 KiB of any one kind of block
 * (constraints, services, templates, env entries, artifacts, a heredoc)
 * decodes in 30–100 ms warm; the costliest kinds per byte, bare `group` and
 * `task` blocks, are bounded by count instead (MAX_GROUPS_AND_TASKS).
 */
export const MAX_JOB_SOURCE_BYTES = 128 * 1024;

const FILESYSTEM_DISABLED = Object.fromEntries(FILESYSTEM_FUNCTIONS.map((name) => [name, "filesystem function disabled"]));

/**
 * Parses a Nomad HCL2 job file into the api.Job JSON object (not
 * canonicalized; see `canonicalizeApiJob`). Throws HclJobError with Nomad's
 * error text for anything Nomad's parser rejects.
 */
export function parseJobHcl(source: string, opts: ParseJobHclOptions): Obj {
  try {
    return parseJobFile(source, opts);
  } catch (e) {
    // Standin's own bounds end the file at once, with the one diagnostic (or the first MAX_DIAGNOSTICS).
    if (e instanceof HclLimitError) throw new HclJobError(diagnosticString(e.diagnostic), [e.diagnostic]);
    if (e instanceof TooManyDiagnostics) {
      const listed = e.diagnostics.map(diagnosticString).join("\n");
      throw new HclJobError(`${listed}, and further diagnostic(s) not listed (standin stops after ${MAX_DIAGNOSTICS})`, e.diagnostics);
    }
    throw e;
  }
}

function parseJobFile(given: string, givenOpts: ParseJobHclOptions): Obj {
  const filename = givenOpts.filename ?? "input.hcl";
  refuseOversizedSource(given, filename, givenOpts);
  const { source, opts } = asNativeSyntax(given, givenOpts, filename);
  let parsed: ReturnType<typeof parseConfig>;
  try {
    parsed = parseConfig(source, filename);
  } catch (e) {
    if (e instanceof HclDiagnosticsError) throw new HclJobError(diagnosticsString(e.diagnostics), e.diagnostics);
    throw e;
  }
  const { body, file } = parsed;
  const ctx = new DecodeContext(file);
  const evalBase: Omit<EvalContext, "variables" | "file"> = {
    functions: standardFunctions({ newUuid: opts.newUuid }, parseGoDuration),
    disabledFunctions: FILESYSTEM_DISABLED,
    // References Nomad resolves at run time (${NOMAD_…}, ${attr.…}, ${meta.…}) stay as written.
    unknownRoot: (text) => text,
    budget: { remaining: EVALUATION_BUDGET },
    built: { remaining: VALUE_BUDGET },
  };
  const topEval = new Evaluator({ ...evalBase, file, variables: {} });

  const topView = {
    attributes: body.attributes.map((attr) => ({ attr, ev: topEval })),
    blocks: body.blocks.map((block) => ({ block, labels: block.labels, ev: topEval })),
    missingItem: { start: 0, end: 0 },
  };
  const byType = checkSchema(ctx, topView, {
    attributes: [],
    blocks: new Map([
      ["job", { labels: 1, labelName: "name" }],
      ["variable", { labels: 1, labelName: "name" }],
      ["variables", { labels: 0, labelName: "" }],
      ["locals", { labels: 0, labelName: "" }],
    ]),
  });
  // jobspec2 stops at a top-level schema error before looking at variables.
  if (ctx.hasErrors) throw new HclJobError(ctx.diags.map(diagnosticString).join("\n"), ctx.diags);
  const jobs = (byType.get("job") ?? []).map((b) => b.block);
  const declarations = [...(byType.get("variable") ?? []), ...(byType.get("variables") ?? [])].map((b) => b.block).sort((a, b) => a.start - b.start);
  const localBlocks = (byType.get("locals") ?? []).map((b) => b.block);

  const varFiles = [...(opts.variables ? [{ filename, text: opts.variables }] : []), ...(opts.varFiles ?? [])];
  let vars: Record<string, Value>;
  try {
    vars = collectVariables(ctx, declarations, file, evalBase, {
      varFiles,
      values: (opts.vars ?? {}) as Record<string, Value>,
      ...(opts.argVars ? { argVars: opts.argVars } : {}),
      ...(opts.env ? { env: opts.env } : {}),
      strict: opts.strict ?? false,
    });
  } catch (e) {
    if (e instanceof VariableSyntaxError) throw new HclJobError(e.message, []);
    throw e;
  }
  const locals = evaluateLocals(ctx, localBlocks, (l) => new Evaluator({ ...evalBase, file, variables: { var: vars, local: l } }));

  // As jobspec2's decodeJob: the first job block is decoded, each further one is a duplicate,
  // none at all is "Missing job block". (The job is not decoded over failed variables; see the docs.)
  const [job, ...duplicates] = jobs;
  let result: Obj | undefined;
  if (job && !ctx.hasErrors) result = decodeJobBlock(ctx, job, new Evaluator({ ...evalBase, file, variables: { var: vars, local: locals } }));
  for (const duplicate of job ? duplicates : []) {
    ctx.error("Duplicate job block", `Only one block of type "job" is allowed. Previous definition was at ${ctx.rangeText(defRange(job as Block))}.`, defRange(duplicate));
  }
  if (!job) ctx.error("Missing job block", "A job block is required");
  if (ctx.hasErrors || !result) throw new HclJobError(ctx.diags.map(diagnosticString).join("\n"), ctx.diags);
  if (ctx.mapDiags.length) throw new HclJobError(diagnosticsString(ctx.mapDiags), ctx.mapDiags);
  return result;
}

/** A job file or variable files in HCL's JSON syntax, written in the native syntax standin parses (json-syntax.ts). */
function asNativeSyntax(source: string, opts: ParseJobHclOptions, filename: string): { source: string; opts: ParseJobHclOptions } {
  const convert = (text: string, name: string, toNative: (json: string) => string): string => {
    if (!isJsonSyntax(text)) return text;
    try {
      return toNative(text);
    } catch (e) {
      if (!(e instanceof JsonSyntaxError)) throw e;
      const start = { line: 1, column: 1, offset: 0 };
      const diagnostic = errorDiag("Invalid JSON", `${e.message}.`, { filename: name, start, end: start });
      throw new HclJobError(diagnosticString(diagnostic), [diagnostic]);
    }
  };
  return {
    source: convert(source, filename, jsonJobToNative),
    opts: {
      ...opts,
      ...(opts.variables ? { variables: convert(opts.variables, filename, jsonVariablesToNative) } : {}),
      ...(opts.varFiles ? { varFiles: opts.varFiles.map((f) => ({ filename: f.filename, text: convert(f.text, f.filename, jsonVariablesToNative) })) } : {}),
    },
  };
}

/** MAX_JOB_SOURCE_BYTES, reported as a diagnostic at the start of the file (HCL's form for a whole-file problem). */
function refuseOversizedSource(source: string, filename: string, opts: ParseJobHclOptions): void {
  const texts = [source, opts.variables ?? "", ...(opts.varFiles ?? []).map((f) => f.text)];
  const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  if (bytes <= MAX_JOB_SOURCE_BYTES) return;
  const start = { line: 1, column: 1, offset: 0 };
  throw new HclLimitError(
    errorDiag("Job file too large", `This job file and its variables are ${bytes} bytes; standin reads at most ${MAX_JOB_SOURCE_BYTES} bytes.`, { filename, start, end: start }),
  );
}

function decodeJobBlock(ctx: DecodeContext, job: Block, ev: Evaluator): Obj {
  const decoder = new JobDecoder(ctx);
  const decoded = decoder.decodeStruct("Job", viewBody(ctx, job, ev), []);
  normalizeJob(decoded, job.labels[0] ?? "");
  return decoded;
}
