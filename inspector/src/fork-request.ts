import type { ClientMessage } from '../../src/inspector/protocol.js';

/** The server's answer to a command (`session`: the fork a `fork` made). */
export interface Ack {
  ok: boolean;
  error?: string;
  session?: string;
}

/**
 * What a "Fork here" button does: asks the server to fork `session` after entry `seq`, then
 * `opened(newId)` (the server has sent the fork's row and sync first), or says on the button why not.
 */
export function forkAction(
  request: (message: ClientMessage) => Promise<Ack>,
  session: string,
  opened: (id: string) => void,
): (seq: number, button: HTMLButtonElement) => void {
  return (seq, button) => {
    button.disabled = true;
    void request({ t: 'fork', id: 0, session, seq }).then((ack) => {
      if (ack.ok && ack.session) return opened(ack.session);
      button.disabled = false;
      button.textContent = `Fork failed: ${ack.error ?? 'no session'}`;
    });
  };
}
