/**
 * The one base of every error that carries the HTTP answer it stands for: a
 * status, a message and any headers to send with it. Each product words and
 * shapes its errors its own way (Nomad's and Consul's plain text, the
 * control API's `{"error"}`), so each has its own subclass that its router
 * renders; code that only needs "which status does this failure answer
 * with" (the port's catch-all, federation, the fuzzers) asks the base.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}
