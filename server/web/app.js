// Headroom's web page: the desktop app's screens over the REST API of
// `headroom serve`. Inputs can come from the URL query (?tab=plan&model=…&
// workload=users=16); with any of them the page answers on load. When an
// answer is shown, body[data-state] is "ready", body[data-tab] the screen,
// and document.title says what was shown (the end-to-end test reads them).
"use strict";

const $ = (s, el = document) => el.querySelector(s);
const NS = "http://www.w3.org/2000/svg";
const GiB = 1 << 30;
const fields = ["model", "hardware", "machines", "devices", "nodes", "engine", "quant", "context", "users", "workload", "slo", "format"];
let tab = "fit";

// token comes from the URL fragment (#token=…), never the query, so it
// stays out of server logs; it is kept for this tab only.
(function readToken() {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) { sessionStorage.setItem("headroom-token", decodeURIComponent(m[1])); history.replaceState(null, "", location.pathname + location.search); }
})();

async function api(method, path, body) {
  const headers = {};
  const tok = sessionStorage.getItem("headroom-token");
  if (tok) headers["Authorization"] = "Bearer " + tok;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const ct = resp.headers.get("Content-Type") || "";
  const data = ct.startsWith("application/json") && !resp.headers.get("Content-Disposition") ? await resp.json() : await resp.text();
  if (!resp.ok && !(resp.status === 422 && data && (data.fit || data.ranked))) {
    const msg = data && data.error ? data.error : `${resp.status} ${resp.statusText}`;
    const err = new Error(msg);
    err.suggestions = (data && data.suggestions) || [];
    throw err;
  }
  return data;
}

function el(tag, attrs = {}, ...kids) {
  const e = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.setAttribute("class", v); else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

const gib = b => (b / GiB).toFixed(1) + " GiB";
const num = (x, d = 1) => (x == null || isNaN(x) ? "-" : Number(x).toFixed(d));
const ms = x => (x == null ? "-" : x >= 1000 ? (x / 1000).toFixed(2) + " s" : Math.round(x) + " ms");
const verdictClass = v => ({ "fits": "fits", "fits with limits": "limits", "fits with offload": "offload" })[v] || "nofit";

function values() {
  const f = $("#inputs"), v = {};
  for (const n of fields) { const x = f.elements[n]; if (x) v[n] = x.value.trim(); }
  return v;
}

function showTab(name) {
  tab = name;
  document.querySelectorAll("#tabs button").forEach(b => b.setAttribute("aria-selected", b.dataset.tab === name));
  document.querySelectorAll("#inputs label[data-for]").forEach(l => { l.hidden = !l.dataset.for.split(" ").includes(name); });
  $("#inputs label:first-child").hidden = name === "machine";
  $("#go").textContent = name === "machine" ? "Probe the server's machine" : "Answer";
}

function done(title, extra = {}) {
  document.title = "Headroom — " + title;
  document.body.dataset.state = "ready";
  document.body.dataset.tab = tab;
  for (const [k, v] of Object.entries(extra)) document.body.dataset[k] = v;
}

// ---- charts (SVG) ----

function memoryBar(b) {
  const parts = [["weights", "#3358d4"], ["kv_cache", "#2f9e8f"], ["activations", "#d69e2e"], ["compute_buffer", "#9f7aea"],
    ["cuda_graphs", "#e53e3e"], ["runtime", "#718096"], ["free", "#cbd5e0"]];
  const W = 760, H = 90, total = Math.max(b.device, 1);
  const svg = el("svg:svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "memory breakdown" });
  let x = 0, lx = 0, ly = 42;
  for (const [k, c] of parts) {
    const v = b[k] || 0;
    if (v <= 0) continue;
    const w = Math.max(1, (W * v) / total);
    svg.append(el("svg:rect", { x, y: 0, width: Math.min(w, W - x), height: 28, fill: c }, el("svg:title", { text: `${k} ${gib(v)}` })));
    x += w;
    const text = `${k.replace("_", " ")} ${gib(v)}`, lw = 14 + 7.2 * text.length + 12;
    if (lx + lw > W) { lx = 0; ly += 20; }
    svg.append(el("svg:rect", { x: lx, y: ly, width: 10, height: 10, fill: c }), el("svg:text", { x: lx + 14, y: ly + 9, text }));
    lx += lw;
  }
  return svg;
}

// scatter plots points {x, y, label, hi} with axes titled tx, ty.
function scatter(points, tx, ty) {
  const W = 760, H = 300, L = 60, B = 40, T = 10, R = 20;
  const svg = el("svg:svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${ty} against ${tx}` });
  const mx = Math.max(...points.map(p => p.x), 1) * 1.08, my = Math.max(...points.map(p => p.y), 1) * 1.1;
  const X = v => L + ((W - L - R) * v) / mx, Y = v => H - B - ((H - B - T) * v) / my;
  svg.append(el("svg:line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#999" }), el("svg:line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#999" }));
  for (let i = 0; i <= 4; i++) {
    svg.append(el("svg:text", { x: X((mx * i) / 4), y: H - B + 16, "text-anchor": "middle", text: Math.round((mx * i) / 4) }));
    svg.append(el("svg:text", { x: L - 6, y: Y((my * i) / 4) + 4, "text-anchor": "end", text: Math.round((my * i) / 4) }));
  }
  svg.append(el("svg:text", { x: (L + W) / 2, y: H - 6, "text-anchor": "middle", text: tx }));
  svg.append(el("svg:text", { x: 14, y: H / 2, transform: `rotate(-90 14 ${H / 2})`, "text-anchor": "middle", text: ty }));
  for (const p of points) {
    svg.append(el("svg:circle", { cx: X(p.x), cy: Y(p.y), r: p.hi ? 7 : 4.5, fill: p.hi ? "#e53e3e" : "#3358d4", "fill-opacity": 0.8 }, el("svg:title", { text: p.label })));
    if (p.hi) svg.append(el("svg:text", { x: X(p.x) - 10, y: Y(p.y) - 10, "text-anchor": "end", text: p.label }));
  }
  return svg;
}

// bars draws one horizontal bar per row for each series [key, colour,
// title]; each series has its own scale unless shared.
function bars(rows, series, shared = false) {
  const rowH = 18 * series.length + 12, W = 860, L = 200, H = rows.length * rowH + 30;
  const svg = el("svg:svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "hardware comparison" });
  let maxes = series.map(([k]) => Math.max(...rows.map(r => r[k] || 0), 1));
  if (shared) maxes = maxes.map(() => Math.max(...maxes));
  rows.forEach((r, i) => {
    const y0 = i * rowH + 4;
    svg.append(el("svg:text", { x: 4, y: y0 + 14, text: r.label }));
    series.forEach(([k, c, t], j) => {
      const v = r[k] || 0, w = ((W - L - 190) * v) / maxes[j];
      svg.append(el("svg:rect", { x: L, y: y0 + j * 18, width: Math.max(w, 0), height: 14, fill: c }));
      svg.append(el("svg:text", { x: L + w + 6, y: y0 + j * 18 + 12, text: v ? `${num(v)} ${t}` : "does not fit" }));
    });
  });
  return svg;
}

// ---- screens ----

// shape is a configuration's devices: " TP8", " TP8 × PP2 over 2 nodes",
// " 4 devices over 2 nodes (RPC)" for llama.cpp's layer split.
function shape(c) {
  const ggml = c.engine === "llama.cpp" || c.engine === "ollama" || c.engine === "ik_llama.cpp";
  if (c.nodes > 1) return ggml ? ` ${c.tensor_parallel} devices over ${c.nodes} nodes (RPC)` : ` TP${c.tensor_parallel} × PP${c.nodes} over ${c.nodes} nodes`;
  return c.tensor_parallel > 1 ? " TP" + c.tensor_parallel : "";
}

function scenarioBody(v) {
  const b = { model: v.model, hardware: v.hardware, devices: +v.devices || 0, engine: v.engine, quant: v.quant, context: v.context, users: +v.users || 0 };
  for (const k of Object.keys(b)) if (b[k] === "" || b[k] === 0) delete b[k];
  return b;
}

function planBody(v) {
  const b = { model: v.model, hardware: v.hardware, devices: +v.devices || 0, nodes: +v.nodes > 1 ? +v.nodes : 0, workload: v.workload, slo: v.slo };
  for (const k of Object.keys(b)) if (b[k] === "" || b[k] === 0) delete b[k];
  return b;
}

async function fit(v) {
  const r = await api("POST", "api/fit", scenarioBody(v));
  const f = r.fit, s = r.scenario;
  const card = el("div", { class: "card" },
    el("div", { class: "verdict " + verdictClass(f.verdict), text: f.verdict.replace(/^./, c => c.toUpperCase()) }),
    el("p", { text: `${s.model} on ${s.devices} × ${s.hardware} with ${s.engine} (${f.backend}), ${s.quant} weights, ${s.kv_type} KV cache` }),
    r.machine ? el("p", { class: "muted", text: r.machine }) : null,
    r.automatic ? el("p", { text: r.automatic }) : null);
  const ul = el("ul");
  for (const x of [...(f.reasons || []), ...(r.limits || [])]) ul.append(el("li", { text: typeof x === "string" ? x : x.message || JSON.stringify(x) }));
  card.append(ul, memoryBar(f.breakdown));
  if (r.speed) card.append(el("p", { text: `One user: ${num(r.speed.decode_tps)} tok/s decode, TTFT ${ms(r.speed.ttft_ms)}, prefill ${num(r.speed.prefill_tps, 0)} tok/s [${r.speed.source}]` }));
  card.append(el("p", { class: "muted", text: `Context ${f.context} tokens × ${f.concurrency}; longest context at this concurrency ${f.max_context_at_concurrency}; most sequences at this context ${f.max_concurrency_at_context}.` }));
  $("#out").replaceChildren(card);
  done(`fit: ${f.verdict}`, { verdict: f.verdict });
}

// pattern reads the arrival pattern of a workload the server accepted
// (planner.ParseWorkload's keys): users in a loop, a rate, a burst or an
// offline batch, which the summary and the table's count follow.
// countHeader names what a plan's or compare's count column counts under
// an arrival pattern (planner.Pattern's kind): users in a loop, slots at
// a rate, sequences at once in a burst or an offline batch.
function countHeader(kind) {
  return ({ rate: "slots", burst: "at once", offline: "at once" })[kind] || "users";
}

// planSummary says what the best configuration does under the plan's
// arrival pattern, as the planner parsed it (the answer's workload).
function planSummary(best, pat) {
  const p = best.prediction, tail = `TTFT ${ms(p.ttft_ms)}, TPOT ${ms(p.tpot_ms)} [${best.source}]${best.meets_slo ? "" : " — misses the target"}`;
  switch (pat.kind) {
    case "burst": {
      const wait = best.concurrency < pat.burst ? `; the other ${pat.burst - best.concurrency} wait for a slot` : "";
      return `All ${pat.burst} prompts answered in ${p.req_per_s > 0 ? ms(pat.burst / p.req_per_s * 1000) : "-"} (${num(p.total_tps, 0)} tok/s total), ${best.concurrency} at once${wait}; mean ${tail}`;
    }
    case "offline":
      return `${num(p.total_tps, 0)} tok/s total at ${best.concurrency} sequences at once (its largest batch), ${tail}`;
    case "rate":
      return `${num(p.total_tps, 0)} tok/s total, ${num(p.decode_tps)} tok/s per request, ${num(100 * (best.utilization || 0), 0)}% of its capacity (${num(best.capacity_req_per_s)} req/s) with ${best.concurrency} slots, ${tail}`;
  }
  return `${best.concurrency} users at ${num(p.decode_tps)} tok/s each (${num(p.total_tps, 0)} total), ${tail}`;
}

// kindText names a workload kind's runs, as `headroom plan` does
// (planner.WorkloadKind.Plural).
const kindText = { single: "single streams", closed: "closed loops of users", burst: "bursts of prompts sent at once",
  rate: "requests arriving at a rate", offline: "offline batch runs", batched: "batched benchmarks" };

// bandLine says how far the figures typically are from measurements
// (the candidate's error_band: median error on sources held out of the
// fit, of the plan's workload kind where it has its own).
function bandLine(best, kind) {
  // Rounded half to even, as the CLI's %.0f prints them (18.5 → 18).
  const even = x => { const f = Math.floor(x), d = x - f; return d > 0.5 || (d === 0.5 && f % 2) ? f + 1 : f; };
  const b = best.error_band || {}, part = (name, m) => b[m] > 0 ? `${name} ±${even(b[m])}%` : null;
  const parts = [part("decode", "tg_tps"), part("prefill", "pp_tps"), part("output throughput", "total_out_tps"), part("TTFT", "ttft_ms"), part("TPOT", "tpot_ms")].filter(Boolean);
  if (!parts.length) return null;
  const scope = kind && kindText[kind] ? `, for ${kindText[kind]}` : "";
  return el("p", { class: "muted band", text: `Typical error (median, on sources held out of the fit${scope}): ${parts.join(", ")}.` });
}

async function plan(v) {
  const r = await api("POST", "api/plan", planBody(v));
  const out = [];
  if (!r.ranked || !r.ranked.length) {
    out.push(el("div", { class: "card" }, el("div", { class: "verdict nofit", text: "Nothing fits" })));
    $("#out").replaceChildren(...out);
    done("plan: nothing fits", { plan: "none" });
    return;
  }
  const best = r.ranked[0], label = c => `${c.engine} ${c.quant} (${c.kv_type} KV)${shape(c)}`, pat = r.workload || { kind: "closed" };
  const fl = best.fleet;
  out.push(el("div", { class: "card" },
    el("div", { class: "verdict fits", text: `Best: ${label(best)}` }),
    el("p", { text: planSummary(best, pat) }),
    bandLine(best, r.error_band_workload),
    fl && fl.replicas > 1 ? el("p", { class: "fleet", text: `Fleet: ${fl.replicas} replicas × ${fl.devices_per_replica} device${fl.devices_per_replica > 1 ? "s" : ""} = ${fl.devices} devices, each at ${num(100 * fl.utilization, 0)}% of its ${num(fl.capacity_req_per_s)} req/s (ceiling ${num(100 * fl.ceiling, 0)}%): TTFT ${ms(fl.prediction.ttft_ms)}, TPOT ${ms(fl.prediction.tpot_ms)} per replica, ${fl.meets_slo ? "within the target" : "missing the target"}` }) : null,
    scatter(r.ranked.slice(0, 40).map((c, i) => ({ x: c.prediction.total_tps, y: c.prediction.decode_tps, label: label(c), hi: i === 0 })), "total tok/s", "tok/s per user")));
  const t = el("table", {}, el("tr", {}, ...["#", "config", countHeader(pat.kind), "TTFT", "TPOT", "tok/s/user", "total tok/s", "SLO", "why not first"].map(h => el("th", { text: h }))));
  r.ranked.slice(0, 15).forEach((c, i) => t.append(el("tr", {}, el("td", { text: i + 1 }), el("td", { text: label(c) }), el("td", { class: "num", text: c.concurrency }),
    el("td", { class: "num", text: ms(c.prediction.ttft_ms) }), el("td", { class: "num", text: ms(c.prediction.tpot_ms) }), el("td", { class: "num", text: num(c.prediction.decode_tps) }),
    el("td", { class: "num", text: num(c.prediction.total_tps, 0) }), el("td", { text: c.meets_slo ? "ok" : "miss" }), el("td", { text: c.why || "" }))));
  out.push(el("div", { class: "card" }, t));
  if (r.notes && r.notes.length) out.push(el("div", { class: "card muted" }, ...r.notes.map(n => el("p", { text: n }))));
  $("#out").replaceChildren(...out);
  done(`plan: ${label(best)}`, { plan: label(best) });
}

async function compare(v) {
  const b = planBody(v);
  b.hardware = v.machines;
  delete b.devices;
  const rows = await api("POST", "api/compare", b);
  const chart = bars(rows.map(r => ({ label: (r.devices > 1 ? r.devices + "× " : "") + r.hardware, one: r.fits ? r.single_user_tps : 0, total: r.fits ? r.total_tps : 0 })),
    [["one", "#3358d4", "tok/s, one user"], ["total", "#2f9e8f", "tok/s, all users"]]);
  const kind = rows.length && rows[0].workload ? rows[0].workload.kind : "closed";
  const t = el("table", {}, el("tr", {}, ...["hardware", "verdict", "best", "1-user tok/s", "TTFT", "total tok/s", countHeader(kind), "tok/s per $1k", "tok/s per W"].map(h => el("th", { text: h }))));
  for (const r of rows) t.append(el("tr", {}, el("td", { text: (r.devices > 1 ? r.devices + "× " : "") + r.hardware }), el("td", { class: verdictClass(r.verdict), text: r.verdict }),
    el("td", { text: r.best || r.why || "" }), el("td", { class: "num", text: r.fits ? num(r.single_user_tps) : "-" }), el("td", { class: "num", text: r.fits ? ms(r.ttft_ms) : "-" }),
    el("td", { class: "num", text: r.fits ? num(r.total_tps, 0) : "-" }), el("td", { class: "num", text: r.fits ? r.max_users : "-" }),
    el("td", { class: "num", text: r.price_usd ? num(r.tps_per_kusd, 2) : "-" }), el("td", { class: "num", text: r.watts ? num(r.tps_per_watt, 2) : "-" })));
  $("#out").replaceChildren(el("div", { class: "card" }, chart), el("div", { class: "card" }, t));
  done(`compare: ${rows.length} machines`, { compare: rows.length });
}

async function exportPlan(v) {
  const b = planBody(v);
  b.format = v.format || "toml";
  const text = await api("POST", "api/export", b);
  const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  $("#out").replaceChildren(el("div", { class: "card" },
    el("p", {}, el("a", { href: url, download: "headroom-plan." + b.format, text: "Save headroom-plan." + b.format })), el("pre", { text: text })));
  done(`export: ${b.format}`, { export: b.format });
}

async function machine() {
  const r = await api("GET", "api/probe");
  const m = r.machine, card = el("div", { class: "card" },
    el("p", { text: `CPU ${m.cpu.model || "-"}: ${m.cpu.cores} cores, ${m.cpu.threads} threads; memory ${gib(m.memory.total)} (${gib(m.memory.available)} available)` }),
    bars([{ label: "system RAM", total: m.memory.total / GiB, avail: m.memory.available / GiB }], [["total", "#718096", "GiB to the OS"], ["avail", "#2f9e8f", "GiB available"]], true));
  for (const d of r.matches || []) {
    card.append(el("h3", { text: `${d.device.name} → ${d.hardware.id} (${d.matched_by || "match"})` }));
    if (d.usable && d.usable.length) {
      const t = el("table", {}, el("tr", {}, el("th", { text: "engine" }), el("th", { text: "usable" }), el("th", { text: "rule" })));
      for (const u of d.usable) t.append(el("tr", {}, el("td", { text: u.policy }), el("td", { class: "num", text: gib(u.bytes) }), el("td", { text: u.rule })));
      card.append(bars(d.usable.map(u => ({ label: u.policy + (u.backend ? " (" + u.backend + ")" : ""), gib: u.bytes / GiB })), [["gib", "#3358d4", "GiB usable"]]), t);
    } else card.append(el("p", { class: "muted", text: "CPU inference from system RAM" }));
  }
  $("#out").replaceChildren(card);
  done("machine: " + ((r.matches && r.matches[0] && r.matches[0].hardware.id) || "probed"), { machine: "ready" });
}

const screens = { fit, plan, compare, export: exportPlan, machine };

async function answer() {
  $("#error").hidden = true;
  document.body.dataset.state = "busy";
  try {
    await screens[tab](values());
  } catch (e) {
    $("#error").textContent = e.message + (e.suggestions && e.suggestions.length ? " — did you mean: " + e.suggestions.join(", ") : "");
    $("#error").hidden = false;
    document.body.dataset.state = "error";
    document.title = "Headroom — error";
  }
}

async function fillLists() {
  try {
    const [models, hardware, engines, quants] = await Promise.all(["models", "hardware", "engines", "quants"].map(k => api("GET", "api/list/" + k)));
    $("#models").replaceChildren(...models.map(m => el("option", { value: m.id })));
    $("#hardware").replaceChildren(...hardware.map(h => el("option", { value: h.id, label: h.name })));
    const f = $("#inputs");
    f.elements.engine.append(...engines.map(e => el("option", { value: e.id, text: e.name || e.id })));
    f.elements.quant.append(...quants.map(q => el("option", { value: q.id, text: q.id })));
  } catch (e) { /* the lists are a convenience; answers still work */ }
}

async function init() {
  document.querySelectorAll("#tabs button").forEach(b => b.addEventListener("click", () => showTab(b.dataset.tab)));
  $("#inputs").addEventListener("submit", ev => { ev.preventDefault(); answer(); });
  await fillLists();
  const q = new URLSearchParams(location.search);
  const f = $("#inputs");
  let given = false;
  for (const n of fields) if (q.has(n) && f.elements[n]) { f.elements[n].value = q.get(n); given = true; }
  showTab(screens[q.get("tab")] ? q.get("tab") : "fit");
  document.body.dataset.state = "idle";
  if (given || q.has("tab")) await answer();
}

document.addEventListener("DOMContentLoaded", init);
