/* Draws a rocesw page from the JSON document the C code writes into <script id="rsw-page">:
 * tables, text, xy charts (lines or true steps), bar charts, timelines, a topology and heat maps, with
 * uPlot (inlined above this script). Every chart the page draws is kept in
 * window.rswPage.charts[id] (the uPlot instance: .data is what the library plots), so tests can
 * read back the plotted values. Nothing is fetched. */
(function () {
  "use strict";
  var spec = JSON.parse(document.getElementById("rsw-page").textContent);
  var page = { spec: spec, charts: {}, heatmaps: {}, errors: [] };
  window.rswPage = page;
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
                 "#e377c2", "#7f7f7f", "#bcbd22"];

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /* "1.50" → "1.5", "2.00" → "2"; digits before the point are never touched */
  function trim(s) { return s.indexOf(".") < 0 || /e/.test(s) ? s : s.replace(/\.?0+$/, ""); }

  /* Numbers with SI or binary prefixes and the unit, as an axis or a legend shows them. */
  function fmt(v, unit) {
    if (v === null || v === undefined || isNaN(v)) return "–";
    var a = Math.abs(v);
    if (unit === "B") {
      /* decimal prefixes (kB = 1000 B), so the axis ticks uPlot picks read as round numbers */
      var u = ["B", "kB", "MB", "GB"], i = 0;
      while (a >= 1000 && i < 3) { a /= 1000; v /= 1000; i++; }
      return (i ? trim(v.toFixed(a < 10 ? 2 : a < 100 ? 1 : 0)) : v.toFixed(0)) + " " + u[i];
    }
    if (unit === "%") return v.toFixed(a < 10 ? 2 : 1) + " %";
    var p = "", prefixed = unit && unit !== "µs"; /* times stay in µs, as their axis */
    if (prefixed && a >= 1e6) { v /= 1e6; p = "M"; }
    else if (prefixed && a >= 1e4) { v /= 1e3; p = "k"; }
    var s = Number.isInteger(v) ? String(v) : trim(v.toPrecision(4));
    return s + (unit ? " " + p + unit : p);
  }
  page.fmt = fmt;

  function axisLabel(a) { return a.label + (a.unit ? " (" + a.unit + ")" : ""); }

  function width(b) { return b.width || (b.half ? 440 : 900); }

  function yRange(b) {
    return function (u, mn, mx) {
      var top = b.ymax !== undefined ? b.ymax : (mx > 0 ? mx * 1.05 : 1);
      return [b.ymin !== undefined ? b.ymin : 0, top];
    };
  }

  function markHook(b) {
    return function (u) {
      var ctx = u.ctx;
      ctx.save();
      ctx.font = "12px sans-serif";
      (b.marks || []).forEach(function (m, i) {
        var x = u.valToPos(m.x, "x", true);
        if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
        ctx.strokeStyle = "#444";
        ctx.setLineDash([4, 3]);
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.fillStyle = "#222";
        ctx.fillText(m.label, x + 4, u.bbox.top + 14 + 14 * i);
      });
      ctx.restore();
    };
  }

  function xy(b, box) {
    var series = [{ label: axisLabel(b.x), value: function (u, v) { return fmt(v, b.x.unit); } }];
    b.series.forEach(function (s, i) {
      series.push({
        label: s.label,
        stroke: s.color || palette[i % palette.length],
        width: 1.5,
        spanGaps: !!b.spanGaps,
        points: { show: !!b.points },
        paths: b.step ? uPlot.paths.stepped({ align: 1 }) : undefined,
        value: function (u, v) { return fmt(v, b.y.unit); }
      });
    });
    var opts = {
      title: b.title, width: width(b), height: b.height || 300,
      scales: { x: b.xrange ? { time: false, range: function () { return b.xrange.slice(); } } : { time: false },
                y: { range: yRange(b) } },
      axes: [
        { label: axisLabel(b.x), values: function (u, sp) { return sp.map(function (v) { return fmt(v, ""); }); } },
        { label: axisLabel(b.y), size: 70, values: function (u, sp) { return sp.map(function (v) { return fmt(v, b.y.unit); }); } }
      ],
      series: series,
      cursor: { drag: { x: true, y: false } },
      hooks: { draw: [markHook(b)] }
    };
    return new uPlot(opts, b.data, box);
  }

  function bars(b, box) {
    var n = b.categories.length, step = Math.max(1, Math.ceil(n / 40));
    var x = b.categories.map(function (_, i) { return i; });
    var longest = b.categories.reduce(function (m, c) { return Math.max(m, c.length); }, 1);
    var rot = n > 8 || longest > 10;
    var opts = {
      title: b.title, width: width(b), height: (b.height || 260) + (rot ? longest * 6 : 0),
      scales: { x: { time: false, range: [-0.5, n - 0.5] }, y: { range: yRange(b) } },
      // a label rotated 60 degrees reaches half its length to the right of its bar: room for the last
      padding: [null, rot ? Math.ceil(longest * 3.2) + 8 : null, null, null],
      axes: [
        { label: b.x ? axisLabel(b.x) : "", rotate: rot ? -60 : 0, size: rot ? longest * 6 + 30 : 40,
          splits: function () { return x.filter(function (i) { return i % step === 0; }); },
          values: function (u, sp) { return sp.map(function (v) { return b.categories[v] || ""; }); } },
        { label: axisLabel(b.y), size: 70, values: function (u, sp) { return sp.map(function (v) { return fmt(v, b.y.unit); }); } }
      ],
      series: [{ label: b.x ? b.x.label : "", value: function (u, v) { return v === null ? "–" : b.categories[v]; } }]
        .concat(b.series.map(function (s, i) {
          return { label: s.label, fill: (s.color || palette[i % palette.length]) + "cc",
                   stroke: s.color || palette[i % palette.length],
                   paths: uPlot.paths.bars({ size: [0.7, 60], align: 0 }),
                   points: { show: false },
                   value: function (u, v) { return fmt(v, b.y.unit); } };
        })),
      cursor: { drag: { x: true, y: false } },
      hooks: { draw: [markHook(b)] }
    };
    return new uPlot(opts, [x].concat(b.data), box);
  }

  /* Rows of spans (a PFC priority's XOFF in force, say) on a time axis; uPlot draws the axes,
   * zoom and cursor, a draw hook the spans, and the readout names the span under the cursor. */
  function timeline(b, box) {
    var rows = b.rows, readout = el("div", { "class": "readout" }, " ");
    var opts = {
      title: b.title, width: width(b), height: Math.max(120, rows.length * 18 + 70),
      scales: { x: { time: false }, y: { range: [0, rows.length] } },
      axes: [
        { label: axisLabel(b.x), values: function (u, sp) { return sp.map(function (v) { return fmt(v, ""); }); } },
        { size: 190, splits: function () { return rows.map(function (_, i) { return i + 0.5; }); },
          values: function (u, sp) { return sp.map(function (v) { var r = rows[Math.floor(v)]; return r ? r.label : ""; }); },
          grid: { show: false } }
      ],
      series: [{ label: axisLabel(b.x) }, { label: "XOFF", stroke: "#c0392b", show: true }],
      legend: { show: false },
      cursor: { drag: { x: true, y: false }, points: { show: false } },
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx;
          ctx.save();
          ctx.beginPath();
          ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
          ctx.clip();
          rows.forEach(function (r, i) {
            ctx.fillStyle = r.color || palette[i % palette.length];
            var y0 = u.valToPos(i + 0.85, "y", true), y1 = u.valToPos(i + 0.15, "y", true);
            r.spans.forEach(function (s) {
              var x0 = u.valToPos(s[0], "x", true), x1 = u.valToPos(s[1], "x", true);
              ctx.fillRect(x0, y0, Math.max(1, x1 - x0), y1 - y0);
            });
          });
          ctx.restore();
        }],
        setCursor: [function (u) {
          if (u.cursor.left < 0) return;
          var t = u.posToVal(u.cursor.left, "x"), r = rows[Math.floor(u.posToVal(u.cursor.top, "y"))];
          var txt = fmt(t, b.x.unit);
          if (r) {
            txt = r.label + " at " + txt;
            r.spans.forEach(function (s) {
              if (s[0] <= t && t <= s[1]) txt += ": XOFF " + fmt(s[0], "") + "–" + fmt(s[1], b.x.unit);
            });
          }
          readout.textContent = txt;
        }]
      }
    };
    var u = new uPlot(opts, [b.xrange, [null, null]], box);
    box.appendChild(readout);
    return u;
  }

  function colorOf(u) {
    /* utilization 0 → green, 0.5 → amber, 1 → red */
    var h = 120 - 120 * Math.max(0, Math.min(1, u));
    return "hsl(" + h.toFixed(0) + ",75%,42%)";
  }

  /* Switches and hosts by tier (spine on top, hosts at the bottom), each link coloured by the
   * utilization of its busier direction, drawn thicker and dashed red-outlined when it carried
   * PFC frames. */
  function topology(b, box) {
    var NS = "http://www.w3.org/2000/svg", W = width(b), tiers = {}, maxTier = 0;
    b.nodes.forEach(function (n) { (tiers[n.tier] = tiers[n.tier] || []).push(n); maxTier = Math.max(maxTier, n.tier); });
    var H = 90 * (maxTier + 1) + 60, pos = {};
    Object.keys(tiers).forEach(function (t) {
      var row = tiers[t];
      row.forEach(function (n, i) { pos[n.name] = [W * (i + 0.5) / row.length, 40 + (maxTier - t) * 90]; });
    });
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("width", W);
    svg.setAttribute("height", H + 30);
    svg.setAttribute("id", b.id + "-svg");
    function add(tag, attrs, text) {
      var e = document.createElementNS(NS, tag);
      for (var k in attrs) e.setAttribute(k, attrs[k]);
      if (text !== undefined) e.textContent = text;
      svg.appendChild(e);
      return e;
    }
    b.links.forEach(function (l) {
      var a = pos[l.a_node], c = pos[l.b_node];
      if (!a || !c) return;
      var u = Math.max(l.util[0], l.util[1]);
      if (l.pfc > 0)
        add("line", { x1: a[0], y1: a[1], x2: c[0], y2: c[1], stroke: "#c0392b", "stroke-width": 7,
                      "stroke-dasharray": "6 4", "class": "pfc" });
      var line = add("line", { x1: a[0], y1: a[1], x2: c[0], y2: c[1], stroke: colorOf(u),
                               "stroke-width": 3, "class": "link", "data-util": u.toFixed(4),
                               "data-pfc": l.pfc });
      var t = document.createElementNS(NS, "title");
      t.textContent = l.a + " → " + l.b + ": " + fmt(100 * l.util[0], "%") + "\n" + l.b + " → " +
        l.a + ": " + fmt(100 * l.util[1], "%") + "\nPFC frames: " + l.pfc;
      line.appendChild(t);
    });
    if (b.deadlock) deadlockCycle(b.deadlock, pos, add, NS);
    b.nodes.forEach(function (n) {
      var p = pos[n.name], sw = n.tier > 0;
      add("rect", { x: p[0] - (sw ? 34 : 20), y: p[1] - 11, width: sw ? 68 : 40, height: 22, rx: 4,
                    fill: sw ? "#dde6f3" : "#eee", stroke: "#555" });
      add("text", { x: p[0], y: p[1] + 4, "text-anchor": "middle", "font-size": 12 }, n.name);
    });
    for (var i = 0; i <= 10; i++)
      add("rect", { x: 10 + i * 24, y: H, width: 24, height: 10, fill: colorOf(i / 10) });
    add("text", { x: 10, y: H + 24, "font-size": 11 }, "0 %");
    add("text", { x: 250, y: H + 24, "font-size": 11 }, "100 % utilization (busier direction)");
    add("line", { x1: 520, y1: H + 5, x2: 560, y2: H + 5, stroke: "#c0392b", "stroke-width": 7, "stroke-dasharray": "6 4" });
    add("text", { x: 566, y: H + 10, "font-size": 11 }, "carried PFC frames");
    if (b.deadlock) {
      svg.setAttribute("height", H + 46);
      add("line", { x1: 520, y1: H + 27, x2: 560, y2: H + 27, stroke: "#7b2cbf", "stroke-width": 3,
                    "marker-end": "url(#dl-arrow)" });
      add("text", { x: 566, y: H + 32, "font-size": 11 }, "PFC deadlock formed at " +
          fmt(b.deadlock.formed_us, "µs") + ": queue n waits on n + 1");
    }
    box.appendChild(svg);
    return null;
  }

  /* A deadlock's cycle on the topology: an arrow per member, from its switch to the switch whose
   * PG pauses it (a curve beside the link, so the cycle reads as a loop), numbered in wait order.
   * Each arrow is a path.deadlock-hop carrying its order, ends and queue, for the page tests. */
  function deadlockCycle(dl, pos, add, NS) {
    var defs = add("defs", {}), m = document.createElementNS(NS, "marker");
    [["id", "dl-arrow"], ["viewBox", "0 0 10 10"], ["refX", "9"], ["refY", "5"],
     ["markerWidth", "7"], ["markerHeight", "7"], ["orient", "auto-start-reverse"]]
      .forEach(function (kv) { m.setAttribute(kv[0], kv[1]); });
    var tip = document.createElementNS(NS, "path");
    tip.setAttribute("d", "M0,0 L10,5 L0,10 z");
    tip.setAttribute("fill", "#7b2cbf");
    m.appendChild(tip);
    defs.appendChild(m);
    dl.hops.forEach(function (h) {
      var a = pos[h.from], c = pos[h.to];
      if (!a || !c) return;
      var dx = c[0] - a[0], dy = c[1] - a[1], len = Math.sqrt(dx * dx + dy * dy) || 1;
      var ux = dx / len, uy = dy / len, nx = -uy * 22, ny = ux * 22; /* to the arrow's left */
      var x1 = a[0] + ux * 16, y1 = a[1] + uy * 16, x2 = c[0] - ux * 16, y2 = c[1] - uy * 16;
      var mx = (x1 + x2) / 2 + nx, my = (y1 + y2) / 2 + ny;
      var p = add("path", { d: "M" + x1 + "," + y1 + " Q" + mx + "," + my + " " + x2 + "," + y2,
                            fill: "none", stroke: "#7b2cbf", "stroke-width": 3,
                            "marker-end": "url(#dl-arrow)", "class": "deadlock-hop",
                            "data-order": h.order, "data-from": h.from, "data-to": h.to,
                            "data-port": h.port });
      var t = document.createElementNS(NS, "title");
      t.textContent = h.order + ". " + h.port + " priority " + h.priority + " → " + h.peer +
        ": paused, its frames wait on the next member";
      p.appendChild(t);
      var lx = (x1 + x2) / 4 + mx / 2, ly = (y1 + y2) / 4 + my / 2;
      add("circle", { cx: lx, cy: ly, r: 9, fill: "#7b2cbf" });
      add("text", { x: lx, y: ly + 4, "text-anchor": "middle", "font-size": 11, fill: "#fff",
                    "font-weight": "bold" }, String(h.order));
    });
  }

  /* Sequential colour scale for a heat map (ColorBrewer YlOrRd): 0 light yellow, 1 dark red. */
  var heatStops = [[255, 255, 204], [254, 217, 118], [253, 141, 60], [227, 26, 28], [128, 0, 38]];
  function heatColor(f) {
    f = Math.max(0, Math.min(1, f)) * (heatStops.length - 1);
    var i = Math.min(heatStops.length - 2, Math.floor(f)), t = f - i, a = heatStops[i], c = heatStops[i + 1];
    return "rgb(" + [0, 1, 2].map(function (k) { return Math.round(a[k] + (c[k] - a[k]) * t); }).join(",") + ")";
  }

  /* A grid of cells (rows x cols, values in b.unit, 0-100 %), drawn on a canvas with its row
   * and column labels, a colour legend and a readout naming the cell under the cursor. What each
   * cell was coloured by is kept in window.rswPage.heatmaps[id]. */
  function heatmap(b, box) {
    var rows = b.rows, cols = b.cols, nr = rows.length, nc = cols.length;
    var left = 12 + 7 * rows.reduce(function (m, r) { return Math.max(m, r.length); }, 4);
    var cw = Math.max(3, Math.min(40, Math.floor((1250 - left) / Math.max(1, nc))));
    var ch = nr > 24 ? 10 : 16, top = 24, gridW = cw * nc, gridH = ch * nr;
    var step = Math.max(1, Math.ceil(44 / cw)); /* a column label every `step` columns */
    var lh = Math.max(100, gridH); /* the legend's height */
    var W = left + gridW + 80, H = top + Math.max(gridH + 70, lh + 10);
    box.appendChild(el("h3", {}, b.title));
    var cv = el("canvas", { width: W, height: H, id: b.id + "-canvas" });
    cv.style.width = W + "px";
    cv.style.height = H + "px";
    box.appendChild(cv);
    var readout = el("div", { "class": "readout" }, " ");
    box.appendChild(readout);
    var ctx = cv.getContext("2d"), drawn = [];
    ctx.font = "11px sans-serif";
    ctx.fillStyle = "#222";
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    rows.forEach(function (r, i) { ctx.fillText(r, left - 6, top + i * ch + ch / 2); });
    ctx.save();
    ctx.textAlign = "right";
    for (var c = 0; c < nc; c += step) {
      var x = left + c * cw + cw / 2;
      ctx.fillStyle = "#555";
      ctx.fillRect(x, top + gridH, 1, 4);
      ctx.save();
      ctx.translate(x + 3, top + gridH + 8);
      ctx.rotate(-Math.PI / 3);
      ctx.fillStyle = "#222";
      ctx.fillText(cols[c], 0, 0);
      ctx.restore();
    }
    ctx.restore();
    for (var i = 0; i < nr; i++) {
      drawn.push([]);
      for (var j = 0; j < nc; j++) {
        var v = b.values[i][j];
        drawn[i].push(v);
        ctx.fillStyle = v === null ? "#fff" : heatColor(v / 100);
        ctx.fillRect(left + j * cw, top + i * ch, cw, ch);
      }
    }
    ctx.strokeStyle = "#888";
    ctx.strokeRect(left - 0.5, top - 0.5, gridW + 1, gridH + 1);
    ctx.textAlign = "center";
    ctx.textBaseline = "alphabetic";
    ctx.fillStyle = "#222";
    ctx.fillText(b.x.label + " (" + nc + ")", left + gridW / 2, top + gridH + 64);
    ctx.save();
    ctx.translate(11, top + gridH / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(b.y.label, 0, 0);
    ctx.restore();
    /* the legend: the scale from 0 to 100 %, and white for no link */
    var lx = left + gridW + 22;
    for (var k = 0; k < lh; k++) {
      ctx.fillStyle = heatColor(1 - k / (lh - 1));
      ctx.fillRect(lx, top + k, 14, 1);
    }
    ctx.strokeRect(lx - 0.5, top - 0.5, 15, lh + 1);
    ctx.textAlign = "left";
    ctx.fillStyle = "#222";
    [0, 25, 50, 75, 100].forEach(function (t) {
      var y = top + (1 - t / 100) * (lh - 1);
      ctx.fillRect(lx + 14, y, 3, 1);
      ctx.fillText(t + " %", lx + 19, y + 4);
    });
    cv.addEventListener("mousemove", function (e) {
      var rc = cv.getBoundingClientRect(), j = Math.floor((e.clientX - rc.left - left) / cw),
          i = Math.floor((e.clientY - rc.top - top) / ch);
      if (i < 0 || j < 0 || i >= nr || j >= nc) { readout.textContent = " "; return; }
      var v = b.values[i][j], t = rows[i] + ", " + b.x.label + " " + cols[j] + ": ";
      t += v === null ? "no link" : fmt(v, "%");
      if (b.count && b.count[i][j] > 1)
        t += " (the busiest of " + b.count[i][j] + " links, " + b.busy[i][j] + " carried frames)";
      readout.textContent = t;
    });
    if (b.note) box.appendChild(el("p", { "class": "note" }, b.note));
    page.heatmaps[b.id] = { rows: rows, cols: cols, values: drawn };
  }

  function table(b, box) {
    var t = el("table", { id: b.id || "" });
    if (b.head) {
      var tr = el("tr");
      b.head.forEach(function (h, i) { tr.appendChild(el("th", (b.left || [0]).indexOf(i) < 0 ? {} : { "class": "k" }, h)); });
      t.appendChild(tr);
    }
    b.rows.forEach(function (r) {
      var tr = el("tr");
      var left = b.left || [0]; // text columns, aligned left; numbers stay right
      r.forEach(function (c, i) { tr.appendChild(el("td", left.indexOf(i) < 0 ? {} : { "class": "k" }, c === null ? "–" : String(c))); });
      t.appendChild(tr);
    });
    box.appendChild(t);
  }

  function draw(b, parent) {
    var box = el("div", { "class": "block " + b.kind + (b.half ? " half" : ""), id: b.id ? "block-" + b.id : "" });
    parent.appendChild(box);
    if (b.kind === "section") {
      box.appendChild(el("h2", {}, b.title));
      if (b.text) box.appendChild(el("p", {}, b.text));
      (b.blocks || []).forEach(function (c) { draw(c, box); });
      return;
    }
    if (b.kind === "grid") {
      (b.blocks || []).forEach(function (c) { draw(c, box); });
      return;
    }
    if (b.heading) box.appendChild(el("h3", {}, b.heading));
    if (b.kind === "text") { box.appendChild(el("p", {}, b.text)); return; }
    if (b.kind === "table") { table(b, box); if (b.note) box.appendChild(el("p", { "class": "note" }, b.note)); return; }
    if (b.kind === "topology") { topology(b, box); return; }
    if (b.kind === "heatmap") { heatmap(b, box); return; }
    if (b.empty) { box.appendChild(el("p", { "class": "empty" }, b.empty)); return; }
    var u = b.kind === "xy" ? xy(b, box) : b.kind === "bars" ? bars(b, box) : timeline(b, box);
    page.charts[b.id] = u;
    if (b.note) box.appendChild(el("p", { "class": "note" }, b.note));
  }

  var root = document.getElementById("rsw-root");
  root.appendChild(el("h1", {}, spec.title));
  if (spec.subtitle) root.appendChild(el("p", {}, spec.subtitle));
  spec.blocks.forEach(function (b) { draw(b, root); });
  page.ready = true;
})();
