// The example server's prompt (`review_code`) and its argument completions, as a TypeScript
// client sees them: the client's own result schemas accept prompts/list, prompts/get and
// completion/complete, and an unknown prompt is -32602. Shared by legacy.mjs (sdk 1.32.2) and
// modern.mjs (client 2.4.0).

import { REQUEST_TIMEOUT_MS, assert, assertEq, ok, rejection, show, step } from './common.mjs';

export async function checkPrompts(client) {
    const options = { timeout: REQUEST_TIMEOUT_MS };
    assert(client.getServerCapabilities()?.prompts, `server capabilities lack prompts: ${show(client.getServerCapabilities())}`);
    assert(client.getServerCapabilities()?.completions, `server capabilities lack completions: ${show(client.getServerCapabilities())}`);
    ok('capabilities.prompts and capabilities.completions present');

    step('prompts/list');
    const { prompts } = await client.listPrompts({}, options);
    const review = prompts.find((p) => p.name === 'review_code');
    assert(review, `review_code is not listed: ${show(prompts)}`);
    assertEq(review.arguments?.map((a) => [a.name, a.required]), [['code', true], ['language', true], ['focus', false]], 'review_code arguments');
    ok('review_code listed with its arguments');

    step('prompts/get');
    const got = await client.getPrompt({ name: 'review_code', arguments: { code: 'x = 1', language: 'python' } }, options);
    assertEq(got.messages?.map((m) => m.role), ['user', 'assistant'], 'message roles');
    assertEq(got.messages[0].content, { type: 'text', text: 'Please review this python code:\n\nx = 1' }, 'first message');
    ok('messages as the prompt wrote them');
    const err = await rejection(client.getPrompt({ name: 'no_such_prompt' }, options), 'an unknown prompt');
    assertEq(err.code, -32602, 'error code of an unknown prompt');
    ok('unknown prompt: -32602');

    step('completion/complete');
    const language = await client.complete({ ref: { type: 'ref/prompt', name: 'review_code' }, argument: { name: 'language', value: 'ty' } }, options);
    assertEq(language.completion?.values, ['typescript'], 'language completions for "ty"');
    const focus = await client.complete(
        {
            ref: { type: 'ref/prompt', name: 'review_code' },
            argument: { name: 'focus', value: 'p' },
            context: { arguments: { language: 'python' } },
        },
        options,
    );
    assertEq(focus.completion?.values, ['performance'], 'focus completions for "p" with language python');
    ok('completions, with the arguments already chosen');
}
