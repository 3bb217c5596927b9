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

describe("parseJobHcl: variable declarations and values in Nomad's words", () => {
  const message = (text: string, opts: Partial<Parameters<typeof parseJobHcl>[1]> = {}): string => {
    try {
      parseJobHcl(text, { newUuid, ...opts });
    } catch (error) {
      if (error instanceof HclJobError) return error.message;
      throw error;
    }
    return "parsed";
  };

  it("a validation rule must test its own variable and carry a sentence", () => {
    expect(message('variable "a" {\n  default = 1\n  validation {\n    condition     = var.b > 0\n    error_message = "Must be positive."\n  }\n}\njob "x" {}')).toBe(
      'input.hcl:4,21-26: Invalid reference in variable validation; The condition for variable "a" can only refer to the variable itself, using var.a.\n' +
        'input.hcl:4,21-30: Invalid variable validation condition; The condition for variable "a" must refer to var.a in order to test incoming values.\n' +
        // The rule still runs, as Nomad runs it, and var.b is not there.
        'input.hcl:4,24-26: Unsupported attribute; This object does not have an attribute named "b".',
    );
    expect(message('variable "a" {\n  default = 1\n  validation {\n    condition     = var.a > 0\n    error_message = "must be positive"\n  }\n}\njob "x" {}')).toBe(
      "input.hcl:5,21-39: Invalid validation error message; Validation error message must be at least one full sentence starting with an uppercase letter ( if the alphabet permits it ) and ending with a period or question mark.",
    );
  });

  it("a variable without a type takes its default's type", () => {
    const text = 'variable "tags" {\n  default = ["a"]\n}\njob "x" {\n  datacenters = var.tags\n}';
    expect(message(text, { varFiles: [{ filename: "v.hcl", text: 'tags = ["a", "b"]' }] })).toBe(
      "v.hcl:1,8-18: Invalid value for variable; The value for tags is not compatible with the variable's type constraint: tuple required with exactly 1 elements.",
    );
  });

  it("a variable block in a variable file, and a -var of the wrong type", () => {
    expect(message(source, { varFiles: [{ filename: "v.hcl", text: 'variable "region" {}' }] })).toBe(
      'v.hcl:1,1-9: Variable declaration in a .var file; A .var file is used to assign values to variables that have already been declared in job files, not to declare new variables. To declare variable "region", place this block in one of your job files\n\nTo set a value for this variable in v.hcl, use the definition syntax instead:\n    region = <value>',
    );
    expect(message(source, { argVars: ["count=many"] })).toBe(
      ":0,0-0: Invalid argument value for -var variable; The received arg value for count is not compatible with the variable's type constraint: a number is required.",
    );
  });

  it("undeclared names are warnings, shown only beside an error, or errors when strict", () => {
    expect(summary(parseJobHcl(source, { newUuid, varFiles: [{ filename: "v.hcl", text: "nope = 1" }], argVars: ["other=2"] }))).toEqual(["from-default", ["dc1"], 1]);
    expect(message(source, { varFiles: [{ filename: "v.hcl", text: 'nope = 1\ncount = "x"' }] })).toBe(
      '<nil>: Undefined variable; A "nope" variable was set but was not found in known variables. To declare variable "nope", place this block in your job files\n' +
        "v.hcl:2,9-12: Invalid value for variable; The value for count is not compatible with the variable's type constraint: a number is required.",
    );
    expect(message(source, { strict: true, argVars: ["other=2"] })).toBe(
      '<nil>: Undefined -var variable; A "other" variable was passed in the command line but was not found in known variables. To declare variable "other", place this block in your job file',
    );
  });
});
