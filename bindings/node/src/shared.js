/**
 * One shared main-thread instance of the plug-in (the one findWasm()
 * finds), for the pure exports a part of the package needs when no
 * compactor lent it its own: a store's search-query analysis, the
 * OpenAI-compatible adapter's wire format. Made on first use.
 * @module
 */

/**
 * @typedef {{has(name: string): boolean, callJSON(name: string, input: unknown): Promise<any>}} PluginCaller
 */

/** @type {Promise<PluginCaller> | null} */
let shared = null;

/**
 * The shared plug-in's exports, as a PluginCaller.
 * @returns {Promise<PluginCaller>}
 */
export function sharedPlugin() {
  shared ??= (async () => {
    const { compileWasm, PluginInstance } = await import('./instance.js');
    const { stubHostFunctions, HOST_NAMESPACE } = await import('./hostfns.js');
    const { findWasm } = await import('./paths.js');
    const module = await compileWasm(findWasm());
    const names = new Set(WebAssembly.Module.exports(module).filter((e) => e.kind === 'function').map((e) => e.name));
    const inst = new PluginInstance({ module, runInWorker: false, functions: { [HOST_NAMESPACE]: stubHostFunctions() } });
    const dec = new TextDecoder();
    return {
      has: (/** @type {string} */ n) => names.has(n),
      callJSON: async (/** @type {string} */ name, /** @type {unknown} */ input) => JSON.parse(dec.decode(await inst.call(name, JSON.stringify(input)))),
    };
  })();
  shared.catch(() => { shared = null; });
  return shared;
}
