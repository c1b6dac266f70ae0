// The JavaScript OpenAI wire format must agree with the plug-in's
// providerRequest/providerResponse exports (core/provider.go), which the
// adapter prefers when the build has them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCompactor } from '../src/index.js';
import { openAIRequest, openAIResponse } from '../src/llm/wire.js';
import { requireExports, wasmPath } from './helpers/common.js';


const REQUESTS = [
  { system: 'S', messages: [{ role: 'user', content: 'a' }, { role: 'system', content: 'b' }, { role: 'assistant', content: 'c' }], model: 'm', max_tokens: 100, temperature: 0 },
  { system: '', messages: [], model: '', temperature: 0.5 },
  { system: '  ', messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image', url: 'u' }, { type: 'text', text: 'y' }] }, { role: 'assistant', content: ' ' }], model: 'm', temperature: 1.25 },
];
const RESPONSES = [
  [200, { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1 } }],
  [200, { choices: [{ message: { role: 'assistant', content: null }, finish_reason: 'length' }] }],
  [429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }],
  [429, { error: { message: 'quota', type: 'insufficient_quota', code: 'insufficient_quota' } }],
  [500, { error: { message: 'oops', type: 'server_error' } }],
  [503, 'Service Unavailable'],
  [401, { error: { message: 'Incorrect API key', type: 'invalid_request_error', code: 'invalid_api_key' } }],
  [403, { error: { message: 'forbidden' } }],
  [400, { error: { message: "This model's maximum context length is 8192 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' } }],
  [400, { error: { message: 'the request exceeds the available context size', type: 'exceed_context_size_error', code: 400 } }],
  [400, { object: 'error', message: 'bad', type: 'BadRequestError', code: 400 }],
  [400, { detail: 'Not Found' }],
  [413, ''],
  [504, '<html>gateway timeout</html>'],
  [200, { error: { message: 'Overloaded', type: 'overloaded_error' } }],
];

describe('JavaScript wire = the plug-in\'s wire', () => {
  /** @type {Awaited<ReturnType<typeof createCompactor>>} */
  let c;
  before(async () => {
    requireExports('providerRequest', 'providerResponse');
    c = await createCompactor({ wasmPath: wasmPath() });
  });
  after(async () => { await c?.close(); });

  REQUESTS.forEach((req, i) => {
    test(`providerRequest #${i}`, async () => {
      const plugin = await c.call('providerRequest', { provider: 'openai', request: req });
      assert.deepEqual(openAIRequest(/** @type {any} */ (req)), plugin);
    });
  });
  RESPONSES.forEach(([status, body], i) => {
    test(`providerResponse #${i} (HTTP ${status})`, async () => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      const plugin = await c.call('providerResponse', { provider: 'openai', status, body: text });
      const js = /** @type {any} */ (openAIResponse(/** @type {number} */ (status), text));
      if (plugin.error) assert.deepEqual(js, plugin);
      else assert.deepEqual({ ...js, usage: js.usage }, plugin);
    });
  });
});
