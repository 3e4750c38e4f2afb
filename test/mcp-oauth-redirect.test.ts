import { describe, expect, it } from 'vitest';
import { LoopbackRedirect } from '../src/mcp/mcp-oauth-redirect.js';

// The loopback listener the browser comes back to after an MCP server's sign-in. What the
// authorization server puts in the redirect is hostile input: it must not reach the page as HTML, and
// what reaches the error (shown in a terminal) holds no control characters.

async function get(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

describe('the loopback redirect of a sign-in', () => {
  it('takes the code of the redirect with the expected state, and refuses any other state', async () => {
    const redirect = await LoopbackRedirect.open();
    redirect.expect('right-state');
    const wrong = await get(`${redirect.url}?state=wrong-state&code=stolen`);
    expect(wrong.status).toBe(400);
    const right = await get(`${redirect.url}?state=right-state&code=the-code`);
    expect(right.status).toBe(200);
    await expect(redirect.code).resolves.toBe('the-code');
    redirect.close();
  });

  it("does not echo the authorization server's error into the page, and keeps control characters out of the error", async () => {
    const redirect = await LoopbackRedirect.open();
    redirect.expect('s');
    const hostile = '<script>alert(1)</script>\u001b[2J';
    const answer = await get(`${redirect.url}?state=s&error=${encodeURIComponent(hostile)}`);
    expect(answer.status).toBe(400);
    expect(answer.body).not.toContain('<script>');
    expect(answer.body).not.toContain('alert(1)');
    const failure = await redirect.code.then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failure).toContain('sign-in failed');
    expect(failure).toContain('<script>alert(1)</script>');
    expect([...(failure ?? '')].filter((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127)).toEqual([]);
    redirect.close();
  });
});
