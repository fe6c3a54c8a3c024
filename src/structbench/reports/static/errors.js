// structbench error browser: load a model's stored predictions (zlib blocks, as the store keeps them) and the
// suite's test examples as scripts (a page opened from disk may load scripts, not fetch files), inflate them in
// the browser, then list what the model got wrong, filtered by seed, split, condition and text.
// At most PAGE rows are drawn at a time.
"use strict";
const PAGE = 500;
const structbench = window.structbench = window.structbench || {};
const pendingExamples = {};
let lastPayload = null;
// examples scripts are gzip (a frozen split file as it is); those of a site written before say nothing: zlib
structbench.examples = (key, data, format = "deflate") => { pendingExamples[key] = { data, format }; };
structbench.runs = (payload) => { lastPayload = payload; };

const loaded = {};
function load(src) {
  if (!loaded[src]) {
    loaded[src] = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.onload = () => resolve(lastPayload);
      script.onerror = () => reject(new Error("cannot load " + src));
      document.body.appendChild(script);
    });
  }
  return loaded[src];
}

async function inflate(base64, format = "deflate") {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream(format));
  return await new Response(stream).text();
}

const exampleCache = {};
async function examplesOf(key, root) {
  if (!(key in exampleCache)) {
    await load(`${root}data/examples-${key}.js`).catch(() => null);
    const pending = pendingExamples[key];
    const text = pending ? await inflate(pending.data, pending.format) : "";
    const byId = new Map();
    text.split("\n").forEach((line) => { if (line) { const e = JSON.parse(line); byId.set(e.id, e); } });
    exampleCache[key] = byId;
  }
  return exampleCache[key];
}

const text = (value) => {
  if (value === undefined || value === null) return "";
  if (Array.isArray(value)) return value.map((v) => (Array.isArray(v) ? "[" + text(v) + "]" : typeof v === "number" ? Number(v.toFixed(3)) : String(v))).join(" ");
  return typeof value === "number" ? String(Number(value.toFixed(3))) : String(value);
};
const expected = (e) => {
  if (!e) return "";
  if (e.target !== undefined) return text(e.target);
  if (e.label !== undefined) return text(e.label);
  if (e.candidates !== undefined) return text(e.candidates[e.answer === undefined ? 0 : e.answer]);
  if (e.tags !== undefined) return text(e.tags);
  return "";
};

const rowsByRun = new Map();
async function rowsOf(run, root) {
  if (rowsByRun.has(run)) return rowsByRun.get(run);
  const rows = [];
  for (const [split, block] of Object.entries(run.blocks)) {
    const [ids, predictions, verdicts] = JSON.parse(await inflate(block));
    const examples = run.examples[split] ? await examplesOf(run.examples[split], root) : new Map();
    ids.forEach((id, i) => rows.push({ id, split, prediction: predictions[i], verdict: verdicts[i], example: examples.get(id) }));
  }
  rowsByRun.set(run, rows);
  return rows;
}

function option(select, value, label) {
  const o = document.createElement("option");
  o.value = value; o.textContent = label;
  select.appendChild(o);
}

async function main() {
  const status = document.getElementById("status");
  if (typeof DecompressionStream === "undefined") { status.textContent = "This browser cannot inflate the data (no DecompressionStream)."; return; }
  const root = document.getElementById("browser").dataset.root;
  const model = document.getElementById("model"), seed = document.getElementById("seed"), split = document.getElementById("split");
  const condition = document.getElementById("condition"), search = document.getElementById("search");
  const all = document.getElementById("all"), body = document.getElementById("rows"), more = document.getElementById("more");
  if (!model.options.length) { status.textContent = "No finished runs to browse."; return; }
  const wanted = new URLSearchParams(location.hash.slice(1)).get("model");
  if (wanted && Array.from(model.options).some((o) => o.value === wanted)) model.value = wanted;
  let payload = null;
  async function choose() {
    status.textContent = "Loading…";
    payload = await load(model.selectedOptions[0].dataset.script);
    seed.replaceChildren();
    payload.runs.forEach((run) => option(seed, run.seed, `seed ${run.seed} (draw ${run.draw})`));
    history.replaceState(null, "", "#model=" + model.value);
  }
  let shown = PAGE;

  async function refresh(resetConditions) {
    const run = payload.runs.find((r) => String(r.seed) === seed.value) || payload.runs[0];
    status.textContent = "Loading…";
    const rows = await rowsOf(run, root);
    if (resetConditions) {
      const keep = condition.value;
      condition.replaceChildren();
      option(condition, "", "any condition");
      const seen = new Set();
      rows.forEach((row) => Object.entries((row.example && row.example.meta) || {}).forEach(([k, v]) => seen.add(`${k}=${v}`)));
      Array.from(seen).sort().forEach((pair) => option(condition, pair, pair));
      condition.value = seen.has(keep) ? keep : "";
      const keepSplit = split.value;
      split.replaceChildren();
      option(split, "", "every split");
      Object.keys(run.blocks).forEach((name) => option(split, name, name));
      split.value = keepSplit in run.blocks ? keepSplit : "";
    }
    const [key, value] = condition.value ? condition.value.split(/=(.*)/s) : [null, null];
    const needle = search.value.trim().toLowerCase();
    const matching = rows.filter((row) => {
      if (!all.checked && row.verdict !== 0) return false;
      if (split.value && row.split !== split.value) return false;
      if (key !== null && String(((row.example && row.example.meta) || {})[key]) !== value) return false;
      if (needle) {
        const hay = `${row.id} ${text(row.example && row.example.input)} ${expected(row.example)} ${text(row.prediction)}`.toLowerCase();
        if (!hay.includes(needle)) return false;
      }
      return true;
    });
    const wrong = rows.filter((row) => row.verdict === 0).length;
    const unscored = rows.filter((row) => row.verdict === null).length;
    status.textContent = `${matching.length} shown of ${rows.length} examples (${wrong} wrong` +
      (unscored ? `, ${unscored} without a per-example verdict` : "") + `); drawing ${Math.min(shown, matching.length)}.`;
    body.replaceChildren();
    matching.slice(0, shown).forEach((row) => {
      const tr = document.createElement("tr");
      const meta = (row.example && row.example.meta) || {};
      const cells = [row.id, row.split, text(row.example && row.example.input), expected(row.example), text(row.prediction),
        Object.entries(meta).map(([k, v]) => `${k}=${v}`).join(" ")];
      cells.forEach((content, i) => {
        const cell = document.createElement(i === 0 ? "th" : "td");
        if (i === 0) cell.scope = "row";
        cell.textContent = content;
        if (i === 4 && row.verdict === 0) cell.className = "wrong";
        tr.appendChild(cell);
      });
      body.appendChild(tr);
    });
    more.hidden = matching.length <= shown;
  }
  model.addEventListener("change", async () => { shown = PAGE; await choose(); await refresh(true); });
  seed.addEventListener("change", () => { shown = PAGE; refresh(true); });
  [split, condition, all].forEach((control) => control.addEventListener("change", () => { shown = PAGE; refresh(false); }));
  search.addEventListener("input", () => { shown = PAGE; refresh(false); });
  more.addEventListener("click", () => { shown += PAGE; refresh(false); });
  await choose();
  await refresh(true);
}
window.addEventListener("load", () => {
  main().catch((error) => { document.getElementById("status").textContent = "Could not read the data: " + error; });
});
