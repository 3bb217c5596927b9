/**
 * The two ways a filter fails, as Nomad reports them: a {@link FilterParseError} when the expression
 * does not parse (routes answer 400 with pigeon's message), a {@link FilterEvaluationError} when it
 * parses but cannot be evaluated against a datum (go-bexpr's and pointerstructure's wording).
 */

/** A parse failure; `message` in pigeon's shape: `1:12 (11): rule "string": Unterminated string literal`, or `1:14 (13): no match found, expected: …` (the expected list may differ from pigeon's). */
export class FilterParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FilterParseError";
  }
}

/** An evaluation failure (e.g. a selector naming a struct field the datum lacks): `message` as go-bexpr/pointerstructure word it, e.g. `error finding value in datum: /Foo at part 0: couldn't find key: struct field with name "Foo"`. */
export class FilterEvaluationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FilterEvaluationError";
  }
}

/** Throws a FilterEvaluationError; typed `never` so that a failing branch can `return evalError(…)`. */
export function evalError(msg: string): never {
  throw new FilterEvaluationError(msg);
}
