/**
 * A refused control request: its status and the message the control API
 * answers as `{"error": message}`.
 */
import { HttpError } from "../http/errors.js";

export class ControlError extends HttpError {
  constructor(
    override readonly status: 400 | 401 | 404 | 409 | 503,
    message: string,
  ) {
    super(status, message);
  }
}
