/**
 * Large answers sent a slice at a time. A 13 MB listing handed to the socket
 * whole is copied into the kernel in one write per client: 200 clients that
 * ask for it at once (and never read) held every port for ~1.7 s. Sent as a
 * stream of slices with a turn of the event loop between them, each client's
 * copy is spread out and other requests are answered in between; a client
 * that does not read stops its own stream (backpressure), nobody else's.
 * The bytes and the Content-Length are the same.
 */
import { nextTurn } from "../core/json-stream.js";

/** Bodies from this size on are sliced. */
export const LARGE_BODY_BYTES = 1 << 20;
const SLICE_BYTES = 64 * 1024;

/**
 * A response whose large body (in hand) is sent in slices, the body noted
 * all the same (http/known-bodies) for the observers; undefined for a body
 * under LARGE_BODY_BYTES (send it whole). Built at once as a stream: asking
 * a buffered response for its headers later would make the server's
 * Response class copy the whole body.
 */
export function slicedResponse(body: string | Uint8Array, init: ResponseInit): Response | undefined {
  // Sized without encoding: a string is encoded only when it is sliced.
  if ((typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.byteLength) < LARGE_BODY_BYTES) return undefined;
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  let offset = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (offset > 0) await nextTurn();
        const end = Math.min(bytes.byteLength, offset + SLICE_BYTES);
        controller.enqueue(bytes.subarray(offset, end));
        offset = end;
        if (offset >= bytes.byteLength) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  const headers = new Headers(init.headers);
  headers.set("Content-Length", String(bytes.byteLength));
  return new Response(stream, { ...init, headers });
}
