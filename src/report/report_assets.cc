#include "report/report_assets.h"

namespace autopar::report {

const std::string_view kReportCss = R"CSS(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330;
  margin: 0; background: #f4f5f8; }
header { background: #1f2a44; color: #fff; padding: 14px 24px; }
header h1 { font-size: 20px; margin: 0 0 8px; font-weight: 600; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; }
.card { background: rgba(255,255,255,.1); border-radius: 6px; padding: 6px 12px; }
.card b { display: block; font-size: 17px; }
.card.bad b { color: #ff9a8a; }
main { padding: 12px 24px 40px; }
section { background: #fff; border-radius: 8px; box-shadow: 0 1px 3px rgba(0,0,0,.12);
  padding: 12px 16px; margin-bottom: 16px; }
h2 { font-size: 16px; margin: 0 0 8px; }
.row { display: flex; gap: 16px; flex-wrap: wrap; align-items: flex-start; }
.row > section { flex: 1 1 520px; min-width: 0; }
pre { font: 12px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; overflow-x: auto; margin: 0; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #e3e6ee; vertical-align: top; }
th { background: #f0f2f7; }
td.num { text-align: right; white-space: nowrap; }
code { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; background: #f0f2f7;
  padding: 1px 4px; border-radius: 3px; white-space: nowrap; }
.toolbar { display: flex; gap: 10px; align-items: center; margin-bottom: 8px; flex-wrap: wrap; }
button { font: inherit; padding: 3px 10px; border: 1px solid #b8bfd0; border-radius: 4px;
  background: #fff; cursor: pointer; }
button:hover { background: #eef1f7; }
#graph-pane { height: 560px; overflow: auto; border: 1px solid #e3e6ee; border-radius: 6px;
  background: #fbfcfe; }
#graph svg text { font: 11px system-ui, sans-serif; }
.group rect.box { stroke: #5b6786; stroke-width: 1; rx: 5; }
.group.collapsed { cursor: zoom-in; }
.group .head { cursor: zoom-out; }
.group text.title { font-weight: 600; font-size: 12px; }
.node rect { stroke: #7a849c; stroke-width: .6; rx: 3; }
.edge { fill: none; stroke: #9aa3b5; stroke-width: 1; }
.edge.comm { stroke: #d6336c; stroke-width: 1.6; }
.elabel { fill: #b02a5b; font-size: 9.5px !important; }
.legend { display: flex; align-items: center; gap: 6px; font-size: 12px; }
.scale { width: 160px; height: 10px; border: 1px solid #ccc; }
.plot { width: 100%; height: auto; max-width: 720px; }
.plot .grid { stroke: #e3e6ee; }
.plot .tick { font-size: 11px; fill: #555; }
.plot .total { fill: none; stroke: #333; stroke-width: 1; }
.plot .budget { stroke: #c92a2a; stroke-dasharray: 6 4; }
.plot .peak { stroke: #c92a2a; stroke-dasharray: 2 3; }
.plot circle { fill: #c92a2a; }
.plot .peak-label { font-size: 12px; font-weight: 600; fill: #c92a2a; }
.muted { color: #667; font-size: 12px; }
)CSS";

// Layout units: the C++ side gives each node a (row, column) inside its
// group; the script turns them into pixels and stacks the group boxes.
const std::string_view kReportScript = R"JS(
"use strict";
window.addEventListener("error", e => { document.body.dataset.status = "error: " + e.message; });
(function () {
  const data = JSON.parse(document.getElementById("graph-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const COLW = 168, ROWH = 34, NODEW = 150, NODEH = 22, HEADH = 36, GAP = 26, LEFT = 90;
  const BOXW = 420, PAD = 12;
  const expanded = new Set();
  const nodes = data.nodes, groups = data.groups;
  // Log scale from the smallest to the largest output, so MiB-sized
  // activations next to GiB-sized ones still differ in colour.
  const sizes = nodes.map(n => n[5]).filter(b => b > 0);
  const lo = Math.log(Math.min(...sizes, data.max_bytes || 1)), hi = Math.log(data.max_bytes || 1);
  function color(bytes) {
    const t = bytes > 0 ? (hi > lo ? (Math.log(bytes) - lo) / (hi - lo) : 1) : 0;
    const stops = [[255, 247, 236], [253, 212, 158], [252, 141, 89], [215, 48, 31], [127, 0, 0]];
    const x = Math.min(0.999, Math.max(0, t)) * (stops.length - 1), i = Math.floor(x), f = x - i;
    const c = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * f));
    return ["rgb(" + c.join(",") + ")", t > 0.62 ? "#fff" : "#1d2330"];
  }
  function el(tag, attrs, parent, text) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function short(s, n) { return s.length > n ? s.slice(0, n - 1) + "\u2026" : s; }
  function fmtBytes(b) {
    const u = ["B", "KiB", "MiB", "GiB", "TiB"]; let i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(b < 10 ? 2 : 1) : b.toFixed(0)) + " " + u[i];
  }
  function fmtTime(s) { return s >= 1e-3 ? (s * 1e3).toFixed(2) + " ms" : (s * 1e6).toFixed(1) + " us"; }
  // Group boxes stacked top to bottom; an expanded one is as big as its layout.
  function place() {
    let y = PAD;
    return groups.map((g, i) => {
      const open = expanded.has(i);
      const w = open ? Math.max(BOXW, g.cols * COLW + 2 * PAD) : BOXW;
      const h = open ? HEADH + g.rows * ROWH + PAD : HEADH;
      const box = { x: LEFT, y: y, w: w, h: h, open: open };
      y += h + GAP;
      return box;
    });
  }
  function groupEdges() {
    const agg = new Map();
    for (const e of data.edges) {
      const a = nodes[e[0]][2], b = nodes[e[1]][2];
      if (a === b) continue;
      const key = a + "," + b;
      const v = agg.get(key) || { a: a, b: b, n: 0, comm: 0, coll: 0 };
      v.n++; v.comm += e[3]; if (e[2] >= 0) v.coll++;
      agg.set(key, v);
    }
    return [...agg.values()].sort((p, q) => p.a - q.a || p.b - q.b);
  }
  const crossEdges = groupEdges();
  function drawCross(svg, boxes) {
    for (const e of crossEdges) {
      const A = boxes[e.a], B = boxes[e.b], down = e.b > e.a;
      let d;
      if (Math.abs(e.b - e.a) === 1) {
        const x = LEFT + (down ? 40 : 90);
        d = down ? `M${x},${A.y + A.h} L${x},${B.y}` : `M${x},${A.y} L${x},${B.y + B.h}`;
      } else {
        const y1 = A.y + Math.min(A.h, HEADH) / 2, y2 = B.y + Math.min(B.h, HEADH) / 2;
        const bow = 12 + 9 * Math.log2(Math.abs(e.b - e.a));
        d = `M${LEFT},${y1} C${LEFT - bow},${y1} ${LEFT - bow},${y2} ${LEFT},${y2}`;
      }
      const p = el("path", { d: d, class: "edge" + (e.coll ? " comm" : ""), "marker-end": "url(#arrow)" }, svg);
      el("title", {}, p, `${groups[e.a].name} \u2192 ${groups[e.b].name}: ${e.n} tensors` +
        (e.coll ? `, ${e.coll} redistributed (${fmtTime(e.comm)})` : ""));
      if (e.coll && Math.abs(e.b - e.a) === 1) {
        const x = LEFT + (down ? 46 : 96), y = down ? A.y + A.h + GAP / 2 + 4 : B.y + B.h + GAP / 2 + 4;
        el("text", { x: x, y: y, class: "elabel" }, svg, `${e.coll}\u00d7 ${fmtTime(e.comm)}`);
      }
    }
  }
  function drawNodes(svg, g, box) {
    const pos = i => [box.x + PAD + nodes[i][4] * COLW, box.y + HEADH + nodes[i][3] * ROWH];
    for (const e of data.edges) {
      if (nodes[e[0]][2] !== g || nodes[e[1]][2] !== g) continue;
      const [x1, y1] = pos(e[0]), [x2, y2] = pos(e[1]);
      const p = el("path", { d: `M${x1 + NODEW / 2},${y1 + NODEH} L${x2 + NODEW / 2},${y2}`,
        class: "edge" + (e[2] >= 0 ? " comm" : "") }, svg);
      if (e[2] >= 0) {
        el("title", {}, p, data.labels[e[2]] + " " + fmtTime(e[3]));
        el("text", { x: (x1 + x2) / 2 + NODEW / 2 + 3, y: (y1 + NODEH + y2) / 2 + 3, class: "elabel" },
           svg, short(data.labels[e[2]], 34));
      }
    }
    for (const i of groups[g].nodes) {
      const n = nodes[i], [x, y] = pos(i), [fill, ink] = color(n[5]);
      const gEl = el("g", { class: "node", "data-node": n[0] }, svg);
      el("rect", { x: x, y: y, width: NODEW, height: NODEH, fill: fill }, gEl);
      el("text", { x: x + 5, y: y + 15, fill: ink }, gEl, short(n[0], 23));
      el("title", {}, gEl, `${n[0]} (${n[1]})\n${n[7]} as ${n[6] || "-"}: ${fmtBytes(n[5])} per device` +
        (n[8] > 0 ? `\nredistributions in: ${fmtTime(n[8])}` : ""));
      rendered++;
    }
  }
  let rendered = 0;
  function render() {
    const boxes = place(), host = document.getElementById("graph");
    const width = Math.max(...boxes.map(b => b.x + b.w)) + PAD;
    const height = boxes.length ? boxes[boxes.length - 1].y + boxes[boxes.length - 1].h + PAD : 0;
    const svg = el("svg", { width: width, height: height, id: "graph-svg" });
    const defs = el("defs", {}, svg);
    const m = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
                             markerHeight: 7, orient: "auto-start-reverse" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#7a849c" }, m);
    rendered = 0;
    drawCross(svg, boxes);
    groups.forEach((g, i) => {
      const b = boxes[i], [fill, ink] = color(b.open ? 0 : g.max);
      const gEl = el("g", { class: "group " + (b.open ? "open" : "collapsed"), "data-group": g.name }, svg);
      el("rect", { class: "box", x: b.x, y: b.y, width: b.w, height: b.h, fill: b.open ? "#f7f8fb" : fill }, gEl);
      const head = el("g", { class: "head" }, gEl);
      el("rect", { x: b.x, y: b.y, width: b.w, height: HEADH, fill: "transparent" }, head);
      el("text", { x: b.x + 10, y: b.y + 15, class: "title", fill: b.open ? "#1d2330" : ink }, head,
         (b.open ? "\u25be " : "\u25b8 ") + g.name);
      el("text", { x: b.x + 10, y: b.y + 29, fill: b.open ? "#1d2330" : ink }, head,
         `${g.nodes.length} nodes \u00b7 outputs ${fmtBytes(g.bytes)} \u00b7 largest ${fmtBytes(g.max)}` +
         (g.coll ? ` \u00b7 ${g.coll} collectives ${fmtTime(g.comm)}` : ""));
      el("title", {}, head, b.open ? "click to collapse" : "click to expand");
      (b.open ? head : gEl).addEventListener("click", () => {
        if (expanded.has(i)) expanded.delete(i); else expanded.add(i);
        render();
      });
      rendered++;
      if (b.open) drawNodes(svg, i, b);
    });
    host.replaceChildren(svg);
    document.body.dataset.renderedNodes = rendered;
    document.body.dataset.expandedGroups = expanded.size;
  }
  document.getElementById("expand-all").onclick = () => { groups.forEach((g, i) => expanded.add(i)); render(); };
  document.getElementById("collapse-all").onclick = () => { expanded.clear(); render(); };
  const want = decodeURIComponent((location.hash.match(/expand=([^&]*)/) || [])[1] || "");
  groups.forEach((g, i) => { if (want === "all" || want.split(",").includes(g.name)) expanded.add(i); });
  if (groups.length <= 3) groups.forEach((g, i) => expanded.add(i));
  render();
  document.body.dataset.groups = groups.length;
  document.body.dataset.status = "ready";
  document.title = "ready: " + document.title;
})();
)JS";

}  // namespace autopar::report
