// Interleaves two or more bench harnesses in ONE process (same heap, same JIT), to tell a harness's
// own cost from process-level effects. argv: url harnessA,harnessB,... [sessions] [stream]
const [url, names, n = '100', stream = 'false'] = process.argv.slice(2);
const list = names.split(',');
const hs = {};
for (const name of list)
  hs[name] = await (await import(`./harness/${name}.mjs`)).createHarness({
    baseURL: url,
    stream: stream === 'true',
  });
for (const name of list) for (let i = 0; i < 20; i++) await hs[name].runSession();
const res = {};
for (let r = 0; r < Number(process.env.ROUNDS ?? 6); r++)
  for (const name of r % 2 ? list : [...list].reverse()) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let calls = 0;
    for (let i = 0; i < Number(n); i++) calls += await hs[name].runSession();
    const c = process.cpuUsage(c0);
    res[name] ??= [];
    res[name].push([(performance.now() - t0) / calls, (c.user + c.system) / 1000 / calls]);
  }
const med =
  process.env.STAT === 'min'
    ? (x) => Math.min(...x)
    : (x) => x.sort((a, b) => a - b)[Math.floor(x.length / 2)];
const base = med(res[list[0]].map((x) => x[0]));
for (const name of list) {
  const w = med(res[name].map((x) => x[0])),
    c = med(res[name].map((x) => x[1]));
  console.log(name.padEnd(14), 'wall', w.toFixed(3), 'cpu', c.toFixed(3), `ratio ${(w / base).toFixed(2)}x`);
}
