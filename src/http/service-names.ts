/** The three services standin stands in for, and the real products' default ports. */
export type ServiceName = "scheduler" | "registry" | "echo";

export const SERVICE_NAMES: readonly ServiceName[] = ["scheduler", "registry", "echo"];

export const DEFAULT_PORTS: Record<ServiceName, number> = { scheduler: 4646, registry: 8500, echo: 8080 };
