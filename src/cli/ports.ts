/** `start`'s port flags: two services cannot listen on one port (0, any free port, may repeat). */
import { SERVICE_NAMES, type ServiceName } from "../http/service-names.js";

/** The message for the first two services given the same port, or undefined when every port is their own. */
export function duplicatePort(ports: Record<ServiceName, number>): string | undefined {
  const seen = new Map<number, ServiceName>();
  for (const service of SERVICE_NAMES) {
    const port = ports[service];
    if (port === 0) continue;
    const first = seen.get(port);
    if (first) return `${first} (--${first}-port) and ${service} (--${service}-port) are both given port ${port}: each service needs its own port (0 = any free port)`;
    seen.set(port, service);
  }
  return undefined;
}
