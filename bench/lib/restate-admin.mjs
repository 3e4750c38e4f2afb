/**
 * Restate's admin API for the benches that read what a session asked of the engine: `call` sends a
 * JSON request (`PATCH /services/<name>` to keep journals, say), `query` runs SQL on the introspection
 * tables (`sys_journal`, `state`) and returns the rows. An answer that is not 2xx throws, naming it.
 */
export function restateAdmin(adminUrl) {
  const call = async (where, method, body) => {
    const response = await fetch(`${adminUrl}${where}`, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${where}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const query = async (sql) => (await call('/query', 'POST', { query: sql })).rows;
  return { call, query };
}
