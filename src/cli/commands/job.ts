/**
 * `standin job run <file>` and `standin job plan <file>`: an HCL2 job file
 * against a running standin, the way `nomad job run` / `nomad job plan` do
 * it. The file is parsed by the emulator (`POST /v1/jobs/parse`), then
 * registered (`PUT /v1/jobs`) or planned (`PUT /v1/job/:id/plan`); the output
 * is Nomad's. `--url` is the scheduler's URL (the Nomad API lives there).
 *
 * Exit codes are Nomad's: run 0 (2 when allocations could not all be
 * placed, 1 on any error or a failed deployment); plan 0 no changes, 1
 * changes, 255 an error — a file that does not parse included.
 */
import { type Command, Option } from "commander";
import { addClientOptions, type ClientOptions, controlRequest, refusal } from "../control-client.js";
import { CliFailure } from "../failure.js";
import { collect } from "../option-values.js";
import { parseJobFile } from "../job/job-file.js";
import { monitorEvaluation } from "../job/monitor.js";
import { NomadApi, oneLineText } from "../job/nomad-api.js";
import { formatPlan, periodicLaunch, type PlanAnswer } from "../job/plan-output.js";

interface JobOptions extends ClientOptions {
  token?: string;
  var: string[];
  varFile: string[];
}

interface RunOptions extends JobOptions {
  detach?: boolean;
  checkIndex?: string;
}

const PLAN_ERROR = 255;

export function jobCommand(program: Command): void {
  const job = program.command("job").description("run or plan an HCL2 job file against a running standin, as `nomad job run` / `nomad job plan`");

  jobOptions(
    job
      .command("run")
      .description("parse the job file (POST /v1/jobs/parse), register it (PUT /v1/jobs) and print the evaluation and the deployment as `nomad job run` does")
      .argument("<file>", "an HCL2 job file")
      .option("--detach", "print the evaluation's ID and return, without monitoring it")
      .option("--check-index <index>", "register only if the job's modify index is still this one (0: only if the job does not exist yet)"),
  ).action(async (file: string, opts: RunOptions) => {
    const command = "standin job run";
    const api = new NomadApi(opts, command, 1);
    const parsed = await parseJobFile(api, { file, vars: opts.var, varFiles: opts.varFile, env: process.env });
    const body: Record<string, unknown> = { Job: parsed };
    if (opts.checkIndex !== undefined) {
      if (!/^\d+$/.test(opts.checkIndex)) throw api.failure(`--check-index expects a non-negative integer, got ${JSON.stringify(opts.checkIndex)}`);
      body.EnforceIndex = true;
      body.JobModifyIndex = Number(opts.checkIndex);
    }
    const answer = await api.request("PUT", "/v1/jobs", body);
    if (!answer.ok) {
      const text = oneLineText(answer.text);
      // Nomad's CLI turns the enforce-index refusal into its own two lines; one line here.
      const enforce = /Enforcing job modify index[^)\n]*/.exec(text);
      if (enforce) throw api.failure(`${enforce[0]}: Job not updated`);
      throw api.failure(`Error submitting job: ${text || `${answer.status} with an empty body`}`);
    }
    const registered = answer.body as { EvalID: string; Warnings?: string };
    const out = (line: string) => process.stdout.write(`${line}\n`);
    if (registered.Warnings) out(`Job Warnings:\n${registered.Warnings}\n`);

    const periodic = isSet(parsed.Periodic);
    const parameterized = isSet(parsed.ParameterizedJob);
    const multiregion = isSet(parsed.Multiregion);
    if (opts.detach || periodic || parameterized || multiregion) {
      out("Job registration successful");
      if (periodic && !parameterized) {
        const next = await nextPeriodicLaunch(api, opts, parsed);
        if (next) out(`Approximate next launch time: ${next}`);
      } else if (!parameterized) out(`Evaluation ID: ${registered.EvalID}`);
      return;
    }
    process.exitCode = await monitorEvaluation({ api, control: opts, out }, registered.EvalID);
  });

  jobOptions(
    job
      .command("plan")
      .description("parse the job file and show what registering it would change (PUT /v1/job/:id/plan), as `nomad job plan` does; exit 0 no changes, 1 changes, 255 an error")
      .argument("<file>", "an HCL2 job file"),
  ).action(async (file: string, opts: JobOptions) => {
    const command = "standin job plan";
    const api = new NomadApi(opts, command, PLAN_ERROR);
    const parsed = await parseJobFile(api, { file, vars: opts.var, varFiles: opts.varFile, env: process.env });
    const id = parsed.ID;
    if (typeof id !== "string" || id === "") throw api.failure(`${file}: the job has no ID`);
    const plan = (await api.expect("Error during plan", "PUT", `/v1/job/${encodeURIComponent(id)}/plan`, { Job: parsed, Diff: true })) as PlanAnswer;
    const runArgs = [...opts.varFile.map((f) => `--var-file=${JSON.stringify(f)} `), ...opts.var.map((v) => `--var=${JSON.stringify(v)} `)].join("");
    const { text, exitCode } = formatPlan(plan, {
      runArgs,
      path: file,
      nowMs: await clockNowMs(opts, api),
      type: typeof parsed.Type === "string" ? parsed.Type : undefined,
      parameterized: isSet(parsed.ParameterizedJob),
    });
    process.stdout.write(text);
    process.exitCode = exitCode;
  });
}

function jobOptions(command: Command): Command {
  return addClientOptions(command)
    .addOption(new Option("--token <secret>", "the ACL token sent as X-Nomad-Token").env("NOMAD_TOKEN"))
    .addOption(
      new Option("--var <name=value>", 'a value for one of the file\'s variables (repeatable; [..], {..} and ".." are HCL expressions, anything else a string)')
        .argParser(collect)
        .default([] as string[], "none"),
    )
    .addOption(
      new Option("--var-file <file>", "a variables file (name = value lines; repeatable, applied in order, --var wins)").argParser(collect).default([] as string[], "none"),
    );
}

function isSet(value: unknown): boolean {
  return value !== null && value !== undefined;
}

async function clockNowMs(opts: ClientOptions, api: NomadApi): Promise<number> {
  const answer = await controlRequest(opts, "GET", "/clock");
  if (!answer.ok) throw new CliFailure(refusal(answer).message, PLAN_ERROR);
  const now = (answer.body as { nowMs?: unknown }).nowMs;
  if (typeof now !== "number") throw api.failure("GET /_standin/clock did not say what time it is");
  return now;
}

/** `nomad job run`'s line for a periodic job: the next launch as the plan endpoint computes it, and how far from the virtual now. */
async function nextPeriodicLaunch(api: NomadApi, opts: ClientOptions, job: Record<string, unknown>): Promise<string | undefined> {
  const plan = (await api.expect("cannot compute the next launch", "PUT", `/v1/job/${encodeURIComponent(String(job.ID))}/plan`, { Job: job })) as PlanAnswer;
  return periodicLaunch(plan.NextPeriodicLaunch, await clockNowMs(opts, api));
}
