/**
 * Node's own `import()`, for modules outside the CLI's bundle (a runtime's Playwright). The
 * CLI runs as a script compiled by `vm.Script` with a V8 code cache (bin/monitors.cjs); on
 * Node 20 a script built from cached data loses its dynamic-import callback, so an `import()`
 * in it fails (`ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING`) from the second run of a command on.
 * The bin therefore hands its own `import()` (compiled by Node's loader, not from the cache) in
 * a global; elsewhere (the ES module build, the tests, the server) the plain `import()` serves.
 * esbuild turns `import()` of the bundle's own modules into `require`: only imports of files
 * outside it need this.
 */
const HOST = Symbol.for('monitors.nativeImport')

export function nativeImport(specifier: string): Promise<unknown> {
  const host = (globalThis as { [HOST]?: (specifier: string) => Promise<unknown> })[HOST]
  return typeof host === 'function' ? host(specifier) : import(specifier)
}
