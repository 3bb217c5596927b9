/**
 * One body as it passes through the proxy, kept for the recording without
 * holding more than RECORDED_BODY_BYTES of it: past that only its hash and
 * length go on (a 5 GB download costs the recorder a hash, not 5 GB). An
 * encoded answer (`Content-Encoding: gzip`, `deflate`, `br`) is kept
 * decoded, as the client reads it; the client itself gets the bytes as they
 * came.
 */
import { createHash, type Hash } from "node:crypto";
import type { Transform } from "node:stream";
import { constants, createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { keptBody, type TapeBody } from "../../control/tape.js";
import type { Redactor } from "../../http/redact.js";

/** Bodies above this are kept as a hash and a length (the tape's limit). */
export const RECORDED_BODY_BYTES = 1 << 20;

/** Keeps the bytes up to the limit, then only their hash. */
class Accumulator {
  private chunks: Buffer[] = [];
  private size = 0;
  private hash: Hash | undefined;

  add(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.hash) {
      this.hash.update(chunk);
      return;
    }
    this.chunks.push(chunk);
    if (this.size <= RECORDED_BODY_BYTES) return;
    this.hash = createHash("sha256");
    for (const held of this.chunks) this.hash.update(held);
    this.chunks = [];
  }

  /** The body as the recording keeps it, undefined when empty; `take` says whether the budget has room for kept bytes. */
  body(redact: Redactor, take: (bytes: number) => boolean): TapeBody | undefined {
    if (this.size === 0) return undefined;
    if (this.hash) return { sha256: this.hash.digest("hex"), bytes: this.size };
    const bytes = redact.body(new Uint8Array(Buffer.concat(this.chunks, this.size)));
    this.chunks = [];
    if (take(bytes.length)) return keptBody(bytes);
    return { sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length };
  }
}

/** Tolerates a body cut short (a stream the client stopped reading): what was decoded so far is kept. */
const PARTIAL = { finishFlush: constants.Z_SYNC_FLUSH };

function decoderFor(contentEncoding: string | undefined): Transform | undefined {
  switch (contentEncoding?.trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return createGunzip(PARTIAL);
    case "deflate":
      return createInflate(PARTIAL);
    case "br":
      return createBrotliDecompress({ finishFlush: constants.BROTLI_OPERATION_FLUSH });
    default:
      return undefined;
  }
}

export class BodyCapture {
  private readonly decoded = new Accumulator();
  /** The bytes as they came, kept beside the decoded ones only for an encoded body whose decoding may fail. */
  private readonly raw: Accumulator | undefined;
  private readonly decoder: Transform | undefined;
  private readonly decoding: Promise<boolean>;

  constructor(contentEncoding?: string) {
    this.decoder = decoderFor(contentEncoding);
    const decoder = this.decoder;
    if (!decoder) {
      this.decoding = Promise.resolve(true);
      return;
    }
    this.raw = new Accumulator();
    decoder.on("data", (chunk: Buffer) => this.decoded.add(chunk));
    this.decoding = new Promise((resolve) => {
      decoder.once("end", () => resolve(true));
      decoder.once("error", () => resolve(false));
    });
  }

  add(chunk: Buffer): void {
    if (!this.decoder) {
      this.decoded.add(chunk);
      return;
    }
    this.raw!.add(chunk);
    if (!this.decoder.destroyed) this.decoder.write(chunk);
  }

  /** Once the body has ended (or was cut): what the recording keeps of it. */
  async finish(redact: Redactor, take: (bytes: number) => boolean): Promise<TapeBody | undefined> {
    this.decoder?.end();
    // A body the client could not have decoded either is kept as it came.
    const decodedWhole = await this.decoding;
    return (decodedWhole ? this.decoded : this.raw!).body(redact, take);
  }
}
