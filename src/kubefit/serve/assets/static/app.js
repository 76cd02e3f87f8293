// kubefit serve: the page renders what the server sends; every placement, verdict and score comes from
// kubefit's verbs on the server. No scheduling rule lives here. Text from the scenario is always set as
// textContent (never parsed as HTML).
"use strict";

const CSRF = document.querySelector('meta[name="kubefit-csrf"]').content;
const state = { summary: null, nodePage: 0, podPage: 0, decisionPage: 0, decisionPod: null, validateTimer: null };
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

async function api(path, options) {
  const init = { headers: {}, credentials: "same-origin" };
  if (options && options.method === "POST") {
    init.method = "POST";
    init.headers["X-CSRF-Token"] = CSRF;
    if (options.text !== undefined) { init.body = options.text; init.headers["Content-Type"] = "text/plain"; }
    else { init.body = JSON.stringify(options.json || {}); init.headers["Content-Type"] = "application/json"; }
  }
  const response = await fetch(path, init);
  let data;
  try { data = await response.json(); } catch (e) { data = { error: `${response.status} ${response.statusText}` }; }
  if (!response.ok) throw new Error(data.error || `${response.status}`);
  return data;
}

function showError(message) {
  const box = $("#error");
  box.textContent = message || "";
  box.hidden = !message;
}

// While any request of the page is under way the body has the class "busy" (the tests wait for it to go).
async function guarded(work, messageBox) {
  try {
    showError("");
    if (messageBox) { messageBox.textContent = ""; messageBox.className = "message"; }
    state.busy = (state.busy || 0) + 1;
    document.body.classList.add("busy");
    return await work();
  } catch (e) {
    if (messageBox) { messageBox.textContent = e.message; messageBox.className = "message invalid"; }
    else showError(e.message);
    return null;
  } finally {
    state.busy -= 1;
    if (!state.busy) document.body.classList.remove("busy");
  }
}

function params(obj) {
  return new URLSearchParams(Object.entries(obj).filter(([, v]) => v !== "" && v !== null && v !== undefined)).toString();
}

function fmt(resource, value) {
  if (resource === "cpu") return value >= 1000 || value === 0 ? `${+(value / 1000).toFixed(2)}` : `${value}m`;  // 0, not 0m
  if (resource === "memory" || resource.endsWith("storage")) {
    const units = ["", "Ki", "Mi", "Gi", "Ti"];
    let v = value, i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return `${+v.toFixed(1)}${units[i]}`;
  }
  return String(value);
}

function pager(name, data, go) {
  const box = document.querySelector(`.pager[data-for="${name}"]`);
  box.replaceChildren(
    el("button", { type: "button", disabled: data.page <= 0, onclick: () => go(data.page - 1) }, "‹"),
    el("span", { class: "page-info" }, ` page ${data.page + 1} of ${data.pages} (${data.total}) `),
    el("button", { type: "button", disabled: data.page >= data.pages - 1, onclick: () => go(data.page + 1) }, "›"));
}

// ------------------------------------------------------------------ the summary and the change
function renderSummary(s) {
  state.summary = s;
  const alloc = Object.entries(s.metrics.allocation || {}).map(([r, v]) => `${r} ${v}%`).join(", ");
  $("#summary").replaceChildren(
    el("span", {}, `${s.nodes} nodes · ${s.pods} pods queued · `),
    el("span", { "data-field": "scheduled" }, s.scheduled), " scheduled · ",
    el("span", { "data-field": "unschedulable" }, s.unschedulable), " pending · ",
    el("span", {}, `allocation ${alloc} · kube-scheduler ${s.kubeVersion || ""}`));
  $("#undo").disabled = !s.canUndo;
  $("#history").textContent = s.history.join(" → ");
  $("#warnings").replaceChildren(...s.warnings.map((w) => el("div", { class: "warning" }, w)));
  $("#live-row").hidden = !s.live;
  renderChange(s.change, s.history.length > 1, s.nodeActions, s.refusedDrains);
  fillSelects(s);
  renderWorkloads(s.workloads);
  $("#config-source").textContent = { edited: "edited here", files: "from the files", defaults: `none in the files: kube-scheduler ${s.kubeVersion || ""}'s defaults, ready to edit` }[s.configSource];
  const actions = Object.entries(s.actions).filter(([, v]) => v.length).map(([k, v]) => `${k}: ${v.join(", ")}`);
  $("#whatif-actions").textContent = actions.join("; ");
  renderGroups(s.podGroups || []);
}

// The pod groups of the run (simulate's podGroups): each one's decision as the server sent it.
function renderGroups(groups) {
  $("#groups-pane").hidden = !groups.length;
  $("#groups tbody").replaceChildren(...groups.map((g) => el("tr", { "data-group": `${g.namespace}/${g.name}`, class: g.bound === g.pods ? null : "pending" },
    el("td", {}, `${g.namespace}/${g.name}`),
    el("td", {}, g.minCount != null ? `gang, minCount ${g.minCount}` : (g.policy || "no PodGroup")),
    el("td", { "data-field": "bound" }, `${g.bound} of ${g.pods}`),
    el("td", {}, g.cycles),
    el("td", {}, g.condition ? `${g.condition.type}=${g.condition.status} (${g.condition.reason})` : (g.gatedBy ? `never queued (${g.gatedBy})` : "")),
    el("td", { class: "why" }, g.why))));
}

// What the drained or removed nodes' pods became, as simulate's nodeActions report says.
function evictions(actions) {
  if (!actions) return null;
  const lost = actions.lost || [];
  const refused = Object.entries(actions.refused || {});
  return el("ul", { id: "evicted" },
    (actions.evicted || []).map((e) => el("li", { "data-pod": e.pod },
      `${e.pod} evicted from ${e.from}: ${e.replacement ? `replaced by ${e.replacement}, ` : ""}${e.to ? `now on ${e.to}` : "pending"}`)),
    lost.map((p) => el("li", { class: "pending" }, `${typeof p === "string" ? p : JSON.stringify(p)}: lost (no controller recreates it)`)),
    refused.map(([node, why]) => el("li", { class: "pending" }, `drain of ${node} refused: ${typeof why === "string" ? why : JSON.stringify(why)}`)));
}

function renderChange(change, edited, actions, refusedDrains) {
  const box = $("#change");
  if (!edited || !change.before) { box.hidden = true; return; }
  const metricRows = Object.keys(change.after.allocation || {}).map((r) =>
    el("tr", {}, el("td", {}, `${r} allocation %`), el("td", {}, change.before.allocation[r] ?? ""), el("td", {}, change.after.allocation[r])));
  const last = state.summary.history[state.summary.history.length - 1];
  box.replaceChildren(el("details", {},
    el("summary", {}, el("strong", {}, `Last change (${last}): `),
      `${change.movedCount} pod(s) moved, ${change.nowPendingCount} now pending, ${change.nowPlacedCount} now placed`,
      ...(refusedDrains || []).map((text) => el("span", { class: "refused-drain" }, ` · ${text}`))),
    el("table", { class: "metrics" }, el("thead", {}, el("tr", {}, el("th", {}, ""), el("th", {}, "before"), el("th", {}, "after"))),
      el("tbody", {}, metricRows,
        el("tr", {}, el("td", {}, "nodes used"), el("td", {}, change.before.nodesUsed), el("td", {}, change.after.nodesUsed)))),
    el("ul", { id: "moved" }, change.moved.map((m) => el("li", { "data-pod": m.pod }, `${m.pod}: ${m.from} → ${m.to}`)),
      change.nowPending.map((p) => el("li", { "data-pod": p, class: "pending" }, `${p}: now pending`)),
      change.nowPlaced.map((p) => el("li", { "data-pod": p }, `${p}: now placed`))),
    evictions(actions)));
  box.hidden = false;
}

function fillSelects(s) {
  const sort = $("#node-sort");
  const keys = sortKeys(s);
  if ([...sort.options].map((o) => o.value).join("\n") !== keys.map(([k]) => k).join("\n")) {  // an edit added a resource
    const chosen = sort.value;
    sort.replaceChildren(...keys.map(([key, label]) => el("option", { value: key }, label)));
    if (keys.some(([k]) => k === chosen)) sort.value = chosen;
  }
  const presets = $("#presets");
  if (!presets.children.length) {
    for (const p of s.presets) {
      presets.append(el("button", { type: "button", "data-preset": p, onclick: () => loadPreset(p) }, p), " ");
    }
    for (const cmp of [$("#compare-preset"), $("#compare-second")]) {
      for (const p of s.presets) cmp.append(el("option", { value: p }, p));
      cmp.append(el("option", { value: "pasted" }, "pasted YAML"));
    }
  }
  if (document.activeElement !== $("#config-text") && !state.configDirty) $("#config-text").value = s.config;
}

// The cluster table's columns, as the server names them: its sort keys and their headings (a DRA driver's
// device bar sorts as "devices:<driver>").
function sortKeys(s) {
  return [["name", "name"], ...s.resources.map((r) => [r, r]), ...s.drivers.map((d) => [`devices:${d}`, `${d} devices`])];
}

async function refreshNodeChoices() {
  const names = await api("/api/names");
  $("#node-names").replaceChildren(...names.map((n) => el("option", { value: n })));
  for (const id of ["#whatif-node", "#add-template", "#plan-template"]) {
    if (!names.includes($(id).value)) $(id).value = names[0] || "";
  }
}

function renderWorkloads(workloads) {
  $("#workloads tbody").replaceChildren(...workloads.map((w) => {
    const input = el("input", { type: "number", min: 0, value: w.replicas, size: 5 });
    return el("tr", { "data-workload": w.name },
      el("td", {}, `${w.kind} ${w.name}`), el("td", {}, input),
      el("td", {}, el("button", { type: "button", onclick: () => edit("/api/scale", { position: w.position, replicas: +input.value }) }, "Scale")));
  }));
}

async function reloadAll() {
  const s = await api("/api/summary");
  renderSummary(s);
  await Promise.all([loadNodes(), loadPods(), refreshNodeChoices()]);
  if (state.decisionPod) await openDecision(state.decisionPod, state.decisionPage);
}

async function edit(path, json, text, messageBox) {
  return guarded(async () => {
    const s = await api(path, { method: "POST", json, text });
    renderSummary(s);
    await Promise.all([loadNodes(), loadPods(), refreshNodeChoices()]);
    if (state.decisionPod) await openDecision(state.decisionPod, 0).catch(() => closeDetail());
    else if (state.detailNode) await openNode(state.detailNode, true);
    return s;
  }, messageBox);
}

// ------------------------------------------------------------------ cluster
async function loadNodes(page) {
  if (page !== undefined) state.nodePage = page;
  const q = params({ page: state.nodePage, size: 50, sort: $("#node-sort").value || "name",
    order: $("#node-desc").checked ? "desc" : "asc", selector: $("#node-selector").value.trim() });
  const data = await guarded(() => api(`/api/nodes?${q}`));
  if (!data) return;
  const { resources, drivers } = state.summary;
  $("#nodes thead").replaceChildren(el("tr", {}, sortHeader("name", "node"), resources.map((r) => sortHeader(r, r)),
    drivers.map((d) => sortHeader(`devices:${d}`, `${d} devices`, "DRA devices allocated / devices in the node's ResourceSlices")), el("th", {}, "")));
  $("#nodes tbody").replaceChildren(...data.rows.map((row) => el("tr", { "data-node": row.name, class: row.action || (row.unschedulable ? "cordon" : null) },
    el("td", {}, el("a", { href: "#", onclick: (e) => { e.preventDefault(); openNode(row.name); } }, row.name)),
    resources.map((r) => {
      const [used, alloc] = row.resources[r] || [0, 0];
      return barCell({ "data-resource": r }, `${r}: ${fmt(r, used)} of ${fmt(r, alloc)}`, used, alloc, fmt(r, used), fmt(r, alloc));
    }),
    drivers.map((d) => {
      const [allocated, devices] = row.devices[d] || [0, 0];
      return barCell({ "data-driver": d }, `${d}: ${allocated} of ${devices} devices allocated`, allocated, devices, allocated, devices);
    }),
    el("td", {}, row.action ? el("span", { class: "mark" }, row.action) : (row.unschedulable ? el("span", { class: "mark" }, "unschedulable") : "")))));
  for (const fill of document.querySelectorAll("#nodes .fill")) fill.style.width = `${fill.dataset.pct}%`;
  pager("nodes", data, loadNodes);
}

// A column heading that sorts the table by its key (the server sorts); clicked again, the other way. It sets
// the "Sort by" choice and the "descending" box, which stay the one place the order is held.
function sortHeader(key, label, title) {
  const sorted = $("#node-sort").value === key;
  const desc = $("#node-desc").checked;
  return el("th", { "data-sort": key, class: "sortable", title, "aria-sort": sorted ? (desc ? "descending" : "ascending") : null,
    onclick: () => {
      if (sorted) $("#node-desc").checked = !desc;
      $("#node-sort").value = key;
      loadNodes(0);
    } }, label, sorted ? (desc ? " ▼" : " ▲") : "");
}

// One bar: `used` of `total` as the fill's length, the amounts beside it ("–": the node has none).
function barCell(attrs, title, used, total, usedText, totalText) {
  const pct = total ? Math.min(100, (100 * used) / total) : 0;
  return el("td", { class: "bar-cell", title },
    el("div", { class: "bar", ...attrs }, el("div", { class: "fill", "data-pct": pct.toFixed(1) })),
    el("span", { class: "amount" }, total ? `${usedText}/${totalText}` : "–"));
}

async function openNode(name, refreshing) {
  const read = () => api(`/api/node?${params({ name })}`);
  const data = refreshing ? await read().catch(() => null) : await guarded(read);  // a removed node: closed
  if (!data) { closeDetail(); return; }
  state.decisionPod = null;
  state.detailNode = name;
  const actions = ["cordon", "drain", "remove"].map((kind) => {  // a node given an action offers to take it back
    const a = state.summary.actions[kind].includes(name) ? `un${kind}` : kind;
    return el("button", { type: "button", "data-node-action": a, onclick: () => edit("/api/action", { action: a, node: name }) }, a);
  });
  showDetail(el("div", { id: "node-detail" },
    el("h2", {}, `Node ${data.name}`), el("p", {}, actions),
    data.unschedulable ? el("p", {}, "unschedulable (cordoned)") : null,
    el("p", { class: "labels" }, Object.entries(data.labels).map(([k, v]) => `${k}=${v}`).join(", ")),
    data.taints.length ? el("p", {}, `taints: ${data.taints.join(", ")}`) : null,
    data.devices.length ? el("p", { id: "node-devices" }, `DRA devices allocated: ${data.devices.join(", ")}`) : null,
    data.pools.length ? devicePools(data.pools) : null,
    el("h3", {}, `${data.pods.length} pods`),
    el("ul", { class: "node-pods" }, data.pods.map((p) => el("li", { "data-pod": p.key },
      p.placed ? el("a", { href: "#", onclick: (e) => { e.preventDefault(); openDecision(p.key, 0); } }, p.key) : p.key,
      p.placed ? " (placed by this run)" : "")))));
}

// ------------------------------------------------------------------ queue and decisions
async function loadPods(page) {
  if (page !== undefined) state.podPage = page;
  const q = params({ page: state.podPage, size: 50, status: $("#pod-status").value, q: $("#pod-find").value.trim() });
  const data = await guarded(() => api(`/api/pods?${q}`));
  if (!data) return;
  $("#pods tbody").replaceChildren(...data.rows.map((r) => el("tr", { "data-pod": r.key, class: r.node ? null : "pending", "data-batch-hint": r.batchHint ? "true" : null },
    el("td", {}, r.position + 1),
    el("td", {}, el("a", { href: "#", onclick: (e) => { e.preventDefault(); openDecision(r.key, 0); } }, r.key),
      r.podGroup ? el("small", { class: "group" }, ` ${r.podGroup}${r.cycle ? `, cycle ${r.cycle}` : ""}`) : null),
    el("td", { class: "node" }, r.node || "pending"),
    el("td", {}, r.feasible ?? ""),
    el("td", {}, r.ties ? (r.tieCount || r.ties.length) : ""),
    el("td", { class: "why" }, [r.message, r.victims ? `preempted ${r.victims.join(", ")} on ${r.nominatedNode}` : null,
      r.preEnqueue ? `held by ${r.preEnqueue}` : null, r.batchHint ? "batch hint (bound unscored)" : null,
      r.devices ? devicesText(r.devices) : null].filter(Boolean).join(" · ")))));
  pager("pods", data, loadPods);
}

// A node's DRA pools device by device, as the server sends them (simulate's devices[node].pools): allocated or
// free, the pods (else claims) holding each device, its capacity. Rendering only: nothing is computed here.
function devicePools(pools) {
  const holder = (d) => (d.pods || d.claims || []).join(", ") + (d.adminAccess ? " (admin access)" : "");
  const pairs = (o) => Object.entries(o || {}).map(([k, v]) => `${k} ${v}`).join(", ");
  const capacity = (d) => [pairs(d.capacity),
    d.shared ? `shared: ${d.shares || 0} share(s)` + (d.consumedCapacity ? `, ${pairs(d.consumedCapacity)} consumed` : "") : "",
    ...Object.entries(d.consumesCounters || {}).map(([set, c]) => `consumes ${set}: ${pairs(c)}`)].filter(Boolean).join("; ");
  const rows = pools.flatMap((p) => p.devices.map((d) => el("tr", { "data-device": `${p.driver}/${p.pool}/${d.name}`, class: d.allocated ? "allocated" : "free" },
    el("td", {}, `${p.driver}/${p.pool}/${d.name}`), el("td", {}, d.allocated ? "allocated" : "free"),
    el("td", {}, holder(d) || "–"), el("td", {}, capacity(d) || "–"))));
  const counters = pools.flatMap((p) => Object.entries(p.counters || {}).flatMap(([set, values]) =>
    Object.entries(values).map(([name, v]) => el("tr", { "data-counter": `${p.driver}/${p.pool}/${set}/${name}` },
      el("td", {}, `${p.driver}/${p.pool}`), el("td", {}, set), el("td", {}, name),
      el("td", {}, v.consumed), el("td", {}, v.free), el("td", {}, v.capacity)))));
  const head = (names) => el("thead", {}, el("tr", {}, ...names.map((h) => el("th", {}, h))));
  return el("div", {},
    el("table", { id: "node-device-pools" }, head(["device", "state", "held by", "capacity"]), el("tbody", {}, ...rows)),
    counters.length ? el("table", { id: "node-counters" }, head(["pool", "counter set", "counter", "consumed", "free", "capacity"]),
      el("tbody", {}, ...counters)) : null);
}

// A step's DynamicResources allocation: each claim (its name in the pod) and the devices it got.
function devicesText(devices) {
  return Object.entries(devices).map(([claim, got]) => `${claim}: ${got.join(", ")}`).join("; ");
}

async function openDecision(pod, page) {
  state.decisionPod = pod;
  state.detailNode = null;
  state.decisionPage = page || 0;
  const data = await api(`/api/decision?${params({ pod, page: state.decisionPage, size: 50 })}`).catch((e) => {
    showDetail(el("div", { id: "decision" }, el("h2", {}, `Pod ${pod}`), el("p", { class: "message invalid" }, e.message)));
    return null;
  });
  if (!data) return;
  const step = data.step || {};
  const head = el("div", {},
    el("h2", {}, `Pod ${data.pod}`),
    el("p", {}, "In the simulation: ", el("strong", { id: "decision-node" }, step.node || "pending"),
      step.ties ? ` (a tie among ${step.tieCount || step.ties.length} nodes, broken by --tie-break)` : ""),
    step.batchHint ? el("p", { id: "batch-hint" }, el("strong", {}, "Bound to the batch's hint, unscored: "),
      `opportunistic batching (v1.35+) took ${step.node} from what the scheduling of the previous pod with the same signature left; kube-scheduler ran the filters on it alone and scored nothing. The table below is the full cycle it would have run without the hint.`) : null,
    step.devices ? el("p", { id: "decision-devices" }, `DRA devices allocated: ${devicesText(step.devices)}`) : null,
    el("p", { class: "note" }, "Its cycle at its turn in the queue (the pods before it bound as the simulation binds them): kubefit score --pod P --detail --explain --at-turn on the scenario as it stands."),
    data.group ? el("p", { id: "decision-group" }, el("strong", {}, `Pod group ${data.group.namespace}/${data.group.name}: `), data.group.why) : null,
    data.preEnqueue ? el("p", {}, `No scheduling cycle: ${data.preEnqueue.plugin}: ${data.preEnqueue.reasons.join(", ")}`) : null,
    data.message ? el("p", { class: "why" }, data.message) : null,
    data.postFilter ? el("p", { id: "victims" }, `Preemption: nominated ${data.postFilter.nominatedNode || "none"}, victims ${(data.postFilter.victims || []).join(", ") || "none"}`) : null,
    data.plugins ? el("p", {}, `${data.feasible} feasible; best: ${data.best.join(", ")}${data.ties ? " (tied)" : ""}`) : null);
  if (!data.plugins) { showDetail(el("div", { id: "decision" }, head)); return; }
  const plugins = data.plugins;
  const rows = data.nodes.rows.map((n) => {
    const cells = plugins.map((p) => {
      const s = n.scores[p];
      return el("td", { "data-plugin": p, title: s ? `raw ${s.raw} · normalized ${s.score} · weight ${s.weight} · weighted ${s.weighted}` : "" },
        s ? [el("span", { "data-kind": "score" }, s.score), el("small", {}, ` raw ${s.raw} ×${s.weight}=${s.weighted}`)] : "");
    });
    const explain = n.explain ? el("details", { class: "explain" }, el("summary", {}, "explain"), explainOf(n.explain)) : "";
    return el("tr", { "data-node": n.node, class: n.best ? "best" : (n.total === null ? "filtered" : null) },
      el("td", {}, n.node), el("td", { class: "verdict" }, n.code, n.reasons.length ? `: ${n.reasons.join(", ")}` : "", n.plugin ? ` (${n.plugin})` : ""),
      cells, el("td", { "data-kind": "total" }, n.total ?? ""), el("td", {}, explain));
  });
  const table = el("table", { id: "decision-nodes" },
    el("thead", {}, el("tr", {}, el("th", {}, "node"), el("th", {}, "filter"), plugins.map((p) => el("th", {}, `${p} (×${data.weights[p]})`)), el("th", {}, "total"), el("th", {}, ""))),
    el("tbody", {}, rows));
  const nav = el("p", {},
    el("button", { type: "button", disabled: data.nodes.page <= 0, onclick: () => openDecision(pod, data.nodes.page - 1) }, "‹"),
    ` nodes page ${data.nodes.page + 1} of ${data.nodes.pages} `,
    el("button", { type: "button", disabled: data.nodes.page >= data.nodes.pages - 1, onclick: () => openDecision(pod, data.nodes.page + 1) }, "›"));
  showDetail(el("div", { id: "decision" }, head, table, nav));
}

// `kubefit score --explain`'s arithmetic of one node, as the server sent it: per plugin its formula, its
// other numbers and a table of its per-resource rows (nothing computed here).
function explainOf(explain) {
  return Object.entries(explain).map(([plugin, parts]) => {
    const rows = Array.isArray(parts.resources) ? parts.resources : [];
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    const scalars = Object.entries(parts).filter(([k, v]) => k !== "resources" && k !== "formula" && typeof v !== "object");
    return el("div", { "data-plugin": plugin },
      el("strong", {}, plugin), parts.formula ? `: ${parts.formula}` : "",
      scalars.length ? el("div", { class: "note" }, scalars.map(([k, v]) => `${k} ${v}`).join(" · ")) : null,
      rows.length ? el("table", { class: "explain-table" },
        el("thead", {}, el("tr", {}, columns.map((c) => el("th", {}, c)))),
        el("tbody", {}, rows.map((r) => el("tr", {}, columns.map((c) => el("td", {}, r[c] === undefined ? "" : String(r[c]))))))) : null);
  });
}

function showDetail(content) {
  $("#detail-body").replaceChildren(content);
  $("#detail").hidden = false;
}

function closeDetail() {
  state.decisionPod = null;
  state.detailNode = null;
  $("#detail").hidden = true;
}

// ------------------------------------------------------------------ configuration
async function loadPreset(name) {
  const data = await guarded(() => api(`/api/preset?${params({ name })}`));
  if (!data) return;
  $("#config-text").value = data.text;
  state.configDirty = true;
  validateNow();
}

function validateSoon() {
  state.configDirty = true;
  clearTimeout(state.validateTimer);
  state.validateTimer = setTimeout(validateNow, 250);
}

async function validateNow() {
  const box = $("#config-message");
  const text = $("#config-text").value;
  try {
    const v = await api("/api/config/validate", { method: "POST", text });
    if ($("#config-text").value !== text) return;  // typed on since: the next answer counts
    box.textContent = v.message;
    box.className = v.valid ? "message valid" : "message invalid";
  } catch (e) {
    box.textContent = e.message;
    box.className = "message invalid";
  }
}

// ------------------------------------------------------------------ compare and planning
function renderCompare(data) {
  const configs = data.configurations;
  const metricNames = Object.keys(configs[0].metrics.allocation || {});
  const table = el("table", { class: "metrics" },
    el("thead", {}, el("tr", {}, el("th", {}, ""), configs.map((c) => el("th", {}, c.name)))),
    el("tbody", {},
      el("tr", {}, el("td", {}, "scheduled"), configs.map((c) => el("td", {}, c.scheduled))),
      el("tr", {}, el("td", {}, "pending"), configs.map((c) => el("td", {}, c.unschedulable))),
      el("tr", {}, el("td", {}, "nodes used"), configs.map((c) => el("td", {}, c.metrics.nodesUsed))),
      metricNames.map((r) => el("tr", {}, el("td", {}, `${r} allocation %`), configs.map((c) => el("td", {}, c.metrics.allocation[r]))))));
  const diffs = el("table", { id: "differences" },
    el("thead", {}, el("tr", {}, el("th", {}, "pod"), configs.map((c) => el("th", {}, c.name)))),
    el("tbody", {}, data.differences.map((d) => el("tr", { "data-pod": d.pod, class: "different" },
      el("td", {}, d.pod), configs.map((c) => el("td", {}, d.nodes[c.name] || "pending"))))));
  $("#compare-result").replaceChildren(table,
    el("h3", {}, `${data.differenceCount} pod(s) land differently`), diffs,
    el("p", {}, el("a", { href: data.report, target: "_blank", rel: "noopener" }, "the comparison report")));
}

async function runPlanning() {
  const verb = $("#plan-verb").value;
  if (verb === "tune") { await startTune(); return; }
  const data = await guarded(() => api("/api/planning", { method: "POST", json: { verb, pod: $("#plan-pod").value.trim(), template: $("#plan-template").value, requestsFrom: $("#plan-requests").value } }));
  if (data) showPlanning(verb, data);
}

// Only the planning fields of the chosen verb are shown.
function showPlanningFields() {
  const verb = $("#plan-verb").value;
  for (const field of document.querySelectorAll("[data-for-verb]")) field.hidden = field.dataset.forVerb !== verb;
  const tuning = verb === "tune" && state.tune && state.tune.state === "running";
  $("#plan-run").disabled = tuning;
  if (verb === "tune" && state.tune && state.tune.state === "done") showTuned(state.tune);
}

// kubefit tune runs on the server in the background: started, then polled for its trials until it ends.
async function startTune() {
  const json = { objective: $("#tune-objective").value };
  for (const k of ["trials", "batch", "workers"]) json[k] = +$(`#tune-${k}`).value;
  const job = await guarded(() => api("/api/tune/start", { method: "POST", json }));
  if (!job) return;
  $("#plan-result").replaceChildren();
  renderTune(job);
}

async function pollTune() {
  const job = await api("/api/tune").catch((e) => ({ state: "failed", error: e.message }));
  renderTune(job);
}

function renderTune(job) {
  state.tune = job;
  clearTimeout(state.tuneTimer);
  const running = job.state === "running";
  $("#tune-stop").disabled = !running;
  if (!$("#tune-objective").options.length) {
    $("#tune-objective").replaceChildren(...job.objectives.map((o) => el("option", { value: o }, o)));
    for (const [k, v] of Object.entries(job.defaults)) $(`#tune-${k}`).value = v;
  }
  if (job.state === "idle") return;
  $("#tune-progress").max = job.total || 1;
  $("#tune-progress").value = job.done || 0;
  const said = { running: "running", done: "done", stopped: "stopped", failed: "failed" }[job.state];
  $("#tune-text").textContent = `${job.done} of ${job.total} trials · ${said}${job.error ? `: ${job.error}` : ""}`;
  $("#tune-text").className = job.state === "failed" ? "message invalid" : "message";
  $("#tune-note").textContent = job.note || "";
  $("#tune-note").hidden = !job.note;
  if (running) state.tuneTimer = setTimeout(pollTune, 500);
  showPlanningFields();
}

// A finished tune (once; not over another verb's answer being looked at), with its configuration to edit.
function showTuned(job) {
  if ($("#plan-verb").value !== "tune" || $("#plan-result").dataset.report === job.report) return;
  const apply = el("button", { type: "button", id: "tune-edit", onclick: () => {
    $("#config-text").value = job.config;
    state.configDirty = true;
    document.querySelector("#tabs button[data-tab=config]").click();
    validateNow();
  } }, "Open the tuned configuration in the editor");
  showPlanning("tune", job, apply);
}

// A planning verb's answer: its headline numbers, its notes and its HTML report in a sandboxed frame.
function showPlanning(verb, data, ...extra) {
  const dl = el("dl", { id: "plan-headline" }, Object.entries(data.headline).map(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))]));
  $("#plan-result").replaceChildren(dl, ...data.warnings.map((w) => el("div", { class: "warning" }, w)), ...extra,
    el("iframe", { src: data.report, title: `${verb} report`, class: "report", sandbox: "allow-scripts" }));
  $("#plan-result").dataset.report = data.report;
}

// ------------------------------------------------------------------ wiring
function wire() {
  for (const tab of document.querySelectorAll("#tabs button")) {
    tab.addEventListener("click", () => {
      for (const t of document.querySelectorAll("#tabs button")) t.classList.toggle("active", t === tab);
      for (const s of document.querySelectorAll(".tab")) s.hidden = s.id !== `tab-${tab.dataset.tab}`;
    });
  }
  $("#undo").addEventListener("click", () => edit("/api/undo", {}));
  $("#detail-close").addEventListener("click", closeDetail);
  let nodeTimer = null;
  $("#node-selector").addEventListener("input", () => { clearTimeout(nodeTimer); nodeTimer = setTimeout(() => loadNodes(0), 250); });
  $("#node-sort").addEventListener("change", () => loadNodes(0));
  $("#node-desc").addEventListener("change", () => loadNodes(0));
  let podTimer = null;
  $("#pod-find").addEventListener("input", () => { clearTimeout(podTimer); podTimer = setTimeout(() => loadPods(0), 250); });
  $("#pod-status").addEventListener("change", () => loadPods(0));
  $("#config-text").addEventListener("input", validateSoon);
  $("#config-apply").addEventListener("click", async () => {
    const s = await edit("/api/config", null, $("#config-text").value, $("#config-message"));
    if (s) { state.configDirty = false; $("#config-message").textContent = "applied"; $("#config-message").className = "message valid"; }
  });
  for (const b of document.querySelectorAll("[data-action]")) {
    b.addEventListener("click", () => edit("/api/action", { action: b.dataset.action, node: $("#whatif-node").value }));
  }
  $("#add-nodes").addEventListener("click", () => edit("/api/nodes/add", { template: $("#add-template").value, count: +$("#add-count").value }));
  $("#add-apply").addEventListener("click", async () => {
    const s = await edit("/api/add", null, $("#add-yaml").value, $("#add-message"));
    if (s) { $("#add-message").textContent = "added"; $("#add-message").className = "message valid"; }
  });
  $("#compare-run").addEventListener("click", async () => {
    const chosen = [$("#compare-preset").value, $("#compare-second").value].filter(Boolean);
    const json = { configurations: chosen.map((c) => (c === "pasted" ? $("#compare-text").value : c)) };
    const data = await guarded(() => api("/api/compare", { method: "POST", json }), $("#compare-message"));
    if (data) renderCompare(data);
  });
  $("#compare-versions-run").addEventListener("click", async () => {
    const versions = $("#compare-versions").value.split(",").map((v) => v.trim()).filter(Boolean);
    const data = await guarded(() => api("/api/compare", { method: "POST", json: { versions } }), $("#compare-message"));
    if (data) renderCompare(data);
  });
  $("#plan-run").addEventListener("click", runPlanning);
  $("#plan-verb").addEventListener("change", showPlanningFields);
  $("#tune-stop").addEventListener("click", async () => { const job = await guarded(() => api("/api/tune/stop", { method: "POST" })); if (job) renderTune(job); });
  showPlanningFields();
  $("#refresh").addEventListener("click", () => edit("/api/refresh", {}));
}

document.addEventListener("DOMContentLoaded", async () => {
  wire();
  await guarded(reloadAll);
  await guarded(pollTune);  // the form's choices, and a tune still running since the page was last open
  document.body.dataset.ready = "true";
});
