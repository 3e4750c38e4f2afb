import { describe, expect, it } from 'vitest';
import type { Message } from '../src/llm/message.js';
import { activeSkillNames } from '../src/skills/active-skills.js';
import { skillLinks } from '../src/skills/skill-resources.js';

const call = (id: string, name: string, args: object): Message => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
});
const result = (id: string, content: string): Message => ({ role: 'tool', tool_call_id: id, content });

describe('activeSkillNames', () => {
  it('reads activations back from the conversation, least recent first, a repeat moving to the end', () => {
    const messages: Message[] = [
      { role: 'system', content: 'sys' },
      call('1', 'activate_skill', { name: 'a' }),
      result('1', '{"activated":"a","folder":"x"}'),
      call('2', 'activate_skill', { name: 'b' }),
      result('2', '{"activated":"b"'),
      call('3', 'activate_skill', { name: 'a' }),
      result('3', '{"activated":"a","instructions":"... [truncated: 10 of 20 characters cut]'),
    ];
    expect(activeSkillNames(messages)).toEqual(['b', 'a']);
  });

  it('ignores errors, other tools with the same text, and results of unknown calls', () => {
    const messages: Message[] = [
      call('1', 'activate_skill', { name: 'nope' }),
      result('1', 'Error: Unknown skill "nope". Skills: a'),
      call('2', 'read_file', { file_path: 'x.json' }),
      result('2', '{"activated":"a"}'),
      result('9', '{"activated":"a"}'),
    ];
    expect(activeSkillNames(messages)).toEqual([]);
    expect(activeSkillNames(undefined)).toEqual([]);
  });
});

describe('skillLinks', () => {
  it('finds relative links and link definitions, not URLs, anchors, absolute paths or variables', () => {
    const body = [
      'See [guide](references/guide.md#intro) and [t](./assets/t.txt "title").',
      '[web](https://example.com) [top](#top) [abs](/etc/passwd) [v]({skill-root}/x.md) [sp](my%20file.md)',
      '',
      '[run]: scripts/run.sh',
    ].join('\n');
    expect(skillLinks(body)).toEqual(['references/guide.md', 'assets/t.txt', 'my file.md', 'scripts/run.sh']);
  });

  it('leaves out example text: paths and links in code spans and fenced blocks', () => {
    const body = [
      '- Bare paths (e.g. `references/guide.md`) resolve from the skill root.',
      'Write links as ``[x](references/x.md)``, then read [the real one](references/real.md).',
      '```markdown',
      'See [example](references/example.md).',
      '```',
      '~~~',
      '[in tilde](assets/tilde.txt)',
      '~~~',
      'After the fences: [after](assets/after.txt).',
      '````',
      '[unclosed](references/unclosed.md)',
    ].join('\n');
    expect(skillLinks(body)).toEqual(['references/real.md', 'assets/after.txt']);
  });
});
