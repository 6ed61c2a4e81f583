/**
 * The environment of a program the runner starts (ping, npm): the process's own, without the
 * variables that hold the server's or the agent's secrets (docs/server.md, "Secrets"). A program
 * started this way runs as the same user, so this is not what keeps a secret from another user
 * (a process's environment is readable by its own user only): it keeps the secrets from
 * programs that have no use for them, such as the install scripts of a runtime's packages.
 */
export const SECRET_VARIABLES = [
  'MONITORING_SERVER_API_KEYS',
  'MONITORING_SERVER_METRICS_TOKEN',
  'MONITORING_SERVER_DB',
  'MONITORING_SMTP_URL',
  'MONITORING_API_KEY',
  'AGENT_METRICS_TOKEN',
  'PGPASSWORD',
] as const

export function childEnvironment(extra: Record<string, string> = {}, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, ...extra }
  for (const name of SECRET_VARIABLES) delete out[name]
  return out
}
