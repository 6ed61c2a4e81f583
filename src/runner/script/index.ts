/**
 * Browser and multi-step check scripts: the engine that runs one script safely (engine.ts),
 * the runtimes it runs on (runtimes.ts), secret scrubbing (scrub.ts). See docs/scripts.md.
 */
export {
  ARTIFACT_LIMIT_BYTES,
  CHROMIUM_ARGS,
  DEFAULT_DISK_LIMIT_BYTES,
  DEFAULT_HEAP_LIMIT_MB,
  DEFAULT_MEMORY_LIMIT_MB,
  DEFAULT_SCRIPT_TIMEOUT_MS,
  runScript,
  SECRET_PREFIX,
  SERVICE_VARIABLE,
} from './engine.js'
export {
  defaultRuntimeCache,
  prepareRuntime,
  resolveInRuntime,
  RuntimePrepareError,
  runtimeState,
  runtimeStates,
  type PrepareOptions,
  type RuntimeState,
} from './runtimes.js'
export { createScrubber, secretForms, SCRUBBED, type Scrubber } from './scrub.js'
export { buildRunBundle, type BuildResult } from './build.js'
export { refusal } from './proxy.js'
export { runPlaywrightSuite, type PlaywrightSuite } from './suite.js'
export * from './types.js'
