/**
 * The parser module's own API (used by the CLI's `job run`/`job plan` and by
 * HCL fixtures): variable sources in Nomad's precedence — default <
 * NOMAD_VAR_ environment < variable files < -var arguments < typed values —
 * and -var's reading of raw text (strings for string/number/untyped
 * variables, HCL expressions otherwise).
 */
import { describe, expect, it } from "vitest";
import { HclJobError, parseJobHcl } from "../../src/scheduler/jobspec/hcl/index.js";

const source = `
variable "region" {
  default = "from-default"
}
variable "count" {
  type    = number
  default = 1
}
variable "dcs" {
  type    = list(string)
  default = ["dc1"]
}
job "web" {
  region      = var.region
  datacenters = var.dcs
  group "g" {
    count = var.count
  }
}`;

const newUuid = () => "00000000-0000-0000-0000-000000000000";
const summary = (job: Record<string, any>) => [job.Region, job.Datacenters, job.TaskGroups[0].Count];

describe("parseJobHcl", () => {
  it("takes variables from each source in Nomad's precedence", () => {
    expect(summary(parseJobHcl(source, { newUuid }))).toEqual(["from-default", ["dc1"], 1]);
    expect(summary(parseJobHcl(source, { newUuid, env: { NOMAD_VAR_region: "from-env", PATH: "/bin" } }))).toEqual(["from-env", ["dc1"], 1]);
    const varFiles = [{ filename: "prod.vars.hcl", text: 'region = "from-file"\ncount = 4' }];
    expect(summary(parseJobHcl(source, { newUuid, env: { NOMAD_VAR_region: "from-env" }, varFiles }))).toEqual(["from-file", ["dc1"], 4]);
    expect(summary(parseJobHcl(source, { newUuid, varFiles, argVars: ["region=from-arg", "count=7", 'dcs=["a", "b"]'] }))).toEqual(["from-arg", ["a", "b"], 7]);
    expect(summary(parseJobHcl(source, { newUuid, argVars: ["region=from-arg"], vars: { region: "typed" } }))).toEqual(["typed", ["dc1"], 1]);
  });

  it("names the file of a bad value, and refuses a -var without '='", () => {
    const bad = (opts: Parameters<typeof parseJobHcl>[1]) => {
      try {
        parseJobHcl(source, opts);
      } catch (error) {
        if (error instanceof HclJobError) return error.message;
        throw error;
      }
      return "parsed";
    };
    expect(bad({ newUuid, varFiles: [{ filename: "prod.vars.hcl", text: 'count = "x"' }] })).toBe(
      "prod.vars.hcl:1,9-12: Invalid value for variable; The value for count is not compatible with the variable's type constraint: a number is required.",
    );
    expect(bad({ newUuid, argVars: ["dcs=[oops"] })).toMatch(/^<value for var\.dcs from arguments>:1,/);
    expect(bad({ newUuid, argVars: ["region"] })).toBe(
      '<nil>: Invalid -var option; The given -var option "region" is not correctly specified. Must be a variable name and value separated by an equals sign, like -var="key=value".',
    );
    expect(bad({ newUuid, filename: "jobs/web.nomad.hcl", varFiles: [{ filename: "v.hcl", text: "count = " }] })).toBe(
      "unable to parse var content: v.hcl:1,9-9: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    );
  });
});
