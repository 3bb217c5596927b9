/**
 * Opening and closing a node server the way standin's listeners do (the
 * emulator's ports in server.ts, the recorder's in parity/record): listening
 * resolves once the port is bound, a port in use becomes the caller's own
 * one-line error, and closing cuts what is still open.
 */
import type { Server } from "node:http";

/** Binds `server` to `host:port`; EADDRINUSE becomes `portInUse()`, any other error is passed on. */
export function listenOn(server: Server, host: string, port: number, portInUse: () => Error): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      reject(error.code === "EADDRINUSE" ? portInUse() : error);
    };
    const onListening = () => {
      server.off("error", onError);
      resolve();
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, host);
  });
}

/** Stops listening and cuts every connection still open: parked long-polls, streams and idle keep-alive sockets do not hold the shutdown. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
