/**
 * The typed error the engine throws for what Nomad's RPC layer answers with
 * a status and a text: routes/helpers.ts's rpc() turns it into that answer.
 * Every refusal of an operation (revert, stable, evaluate, dispatch,
 * periodic force, scale, promote, allocation health) is one: Nomad's plain
 * fmt.Errorf refusals are 500s with their text, and so are these.
 */
import { HttpError } from "../../http/errors.js";

/** An error with the HTTP status Nomad's RPC layer codes it with (NewErrRPCCoded). */
export class CodedError extends HttpError {}
