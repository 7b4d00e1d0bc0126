// Opens a rocesw page in Debian's chromium, headless, with no network, and prints one JSON
// document: console errors and page errors, requests the page tried to make, whether the page's
// script finished, what each chart handed uPlot (its series labels, data and y scale) and
// what each heat map coloured its cells by.
// Usage: node open_page.js PAGE.html SCREENSHOT.png
"use strict";
const { chromium } = require("playwright-core");
const fs = require("fs");
const os = require("os");
const path = require("path");

(async () => {
  const [page_path, shot] = process.argv.slice(2);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "rocesw-chromium-"));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1000, height: 800 },
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const out = { errors: [], requests: [] };
  try {
    const page = await ctx.newPage();
    page.on("console", (m) => { if (m.type() === "error") out.errors.push(m.text()); });
    page.on("pageerror", (e) => out.errors.push(String(e)));
    page.on("request", (r) => { if (!r.url().startsWith("file:")) out.requests.push(r.url()); });
    await page.goto("file://" + path.resolve(page_path), { waitUntil: "load" });
    out.ready = await page.evaluate(() => !!(window.rswPage && window.rswPage.ready));
    out.charts = await page.evaluate(() => {
      const r = {};
      for (const [id, u] of Object.entries(window.rswPage ? window.rswPage.charts : {})) {
        r[id] = { series: u.series.map((s) => s.label), data: u.data,
                  y: [u.scales.y.min, u.scales.y.max], x: [u.scales.x.min, u.scales.x.max],
                  axes: u.axes.map((a) => a.label || "") };
      }
      return r;
    });
    out.fmt = await page.evaluate(() => window.rswPage && [[1199.99, ""], [1500, "B"], [2000, "B"],
      [120, "B"], [45.5, "%"], [25000, "µs"]].map(([v, u]) => window.rswPage.fmt(v, u)));
    out.spec = await page.evaluate(() => window.rswPage && window.rswPage.spec);
    // what each heat map coloured its cells by, and whether its canvas is on the page
    out.heatmaps = await page.evaluate(() => Object.fromEntries(Object.entries(
      (window.rswPage && window.rswPage.heatmaps) || {}).map(([id, h]) =>
      [id, Object.assign({ canvas: !!document.getElementById(id + "-canvas") }, h)])));
    out.topology = await page.evaluate(() => Array.from(document.querySelectorAll("line.link"))
      .map((l) => ({ util: +l.getAttribute("data-util"), pfc: +l.getAttribute("data-pfc"),
                     title: l.textContent })));
    out.deadlock = await page.evaluate(() => Array.from(document.querySelectorAll("path.deadlock-hop"))
      .map((p) => ({ order: +p.getAttribute("data-order"), from: p.getAttribute("data-from"),
                     to: p.getAttribute("data-to"), port: p.getAttribute("data-port") })));
    out.tables = await page.evaluate(() => Object.fromEntries(Array.from(
      document.querySelectorAll("table[id]")).map((t) => [t.id, Array.from(t.rows)
        .map((r) => Array.from(r.cells).map((c) => c.textContent))])));
    if (shot) await page.screenshot({ path: shot, fullPage: true });
  } catch (e) {
    out.errors.push("driver: " + e);
  }
  await ctx.close();
  fs.rmSync(profile, { recursive: true, force: true });
  process.stdout.write(JSON.stringify(out));
})();
