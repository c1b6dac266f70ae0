// The AI SDK as installed: ai 6 (pinned, `npm test`) or ai 7 (`make
// test-frameworks`, the newest release). The tests drive either with the
// same code: the mock model of the SDK's newest provider spec, and the
// messages of every step of a generateText result.
import * as aiTest from 'ai/test';

/**
 * The installed SDK's own mock language model of its newest provider spec:
 * MockLanguageModelV4 (ai 7), else MockLanguageModelV3 (ai 6). Both take
 * the same doGenerate results.
 * @type {typeof aiTest.MockLanguageModelV3}
 */
export const MockLanguageModel = /** @type {any} */ (aiTest).MockLanguageModelV4 ?? aiTest.MockLanguageModelV3;

/**
 * The response messages of every step of a generateText or streamText
 * result, which an app appends to its list: `responseMessages` (ai 7,
 * whose `response.messages` are the last step's only), else
 * `response.messages` (ai 6).
 * @param {any} r
 * @returns {Promise<any[]>}
 */
export async function responseMessages(r) {
  return (await r.responseMessages) ?? (await r.response).messages;
}
