/**
 * A cap on control request bodies (`--control-body-limit`). Control requests
 * skip the service ports' 16 MiB limit (a snapshot or a fixture of a large
 * world is bigger than any service request), so without a cap of their own a
 * multi-gigabyte body would be read, parsed and applied whole. A body that
 * states a length over the cap is refused before a byte of it is read; one
 * sent without a length is counted as it arrives and refused at the first
 * byte past the cap.
 */
export const DEFAULT_CONTROL_BODY_LIMIT = 64 * 1024 * 1024;

/** Thrown by the body stream of a request that went past its cap; the control app answers it with 413. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body too large: the control API takes at most ${limit} bytes (--control-body-limit)`);
    this.name = "BodyTooLargeError";
  }
}

/** The control API's 413, as JSON like its other errors; the connection closes rather than read the rest. */
export function bodyTooLargeResponse(limit: number): Response {
  return new Response(JSON.stringify({ error: new BodyTooLargeError(limit).message }), { status: 413, headers: { "Content-Type": "application/json", Connection: "close" } });
}

/**
 * The request to hand on: itself when its body cannot pass the cap, a 413
 * when its stated length does, or a copy whose body errors past the cap.
 */
export function capBody(request: Request, limit: number): Request | Response {
  if (request.method === "GET" || request.method === "HEAD") return request;
  const stated = request.headers.get("content-length");
  if (stated !== null && request.headers.get("transfer-encoding") === null) {
    const length = Number(stated);
    return Number.isFinite(length) && length > limit ? bodyTooLargeResponse(limit) : request;
  }
  if (request.body === null) return request;
  let seen = 0;
  const counted = request.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) controller.error(new BodyTooLargeError(limit));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Request(request, { body: counted, duplex: "half" } as RequestInit);
}
