"""Opens a rocesw page in headless chromium (tests/pages/open_page.js, playwright-core driving
Debian's /usr/bin/chromium) and returns what the page drew: the data each chart handed uPlot,
the topology's links, the tables. Fails the test on any console error, page error or request
for anything but the file itself. Screenshots go to BUILD/page-screenshots/NAME.png."""
import json
import math
import os
import re
import subprocess

from common import BUILD, ROOT

SHOTS = os.path.join(BUILD, "page-screenshots")
DRIVER = os.path.join(ROOT, "tests", "pages", "open_page.js")


def open_page(test, path, name):
    os.makedirs(SHOTS, exist_ok=True)
    with open(path) as f:
        text = f.read()
    # self-contained: no element loads anything (src/href attributes, @import, url())
    test.assertIsNone(re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", text), path)
    r = subprocess.run(["node", DRIVER, path, os.path.join(SHOTS, name + ".png")],
                       capture_output=True, text=True, timeout=180,
                       env=dict(os.environ, NODE_PATH=os.path.join(ROOT, "tests", "pages",
                                                                   "node_modules")))
    test.assertEqual(r.returncode, 0, r.stderr)
    got = json.loads(r.stdout)
    test.assertEqual(got["errors"], [], f"{name}: console errors")
    test.assertEqual(got["requests"], [], f"{name}: the page fetched something")
    test.assertTrue(got["ready"], f"{name}: the page's script did not finish")
    return got


def close(a, b, rel=1e-6):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


def blocks(spec):
    """Every block of a page spec, depth first."""
    for b in spec.get("blocks", []):
        yield b
        yield from blocks(b)


def wire_util(bytes_, frames, speed_mbps, start, end):
    """REFERENCE: wire bits (frame + 24 bytes of FCS, preamble, gap) over the window from the
    first frame in to the end of the last frame out, which cannot end before the last start plus
    the largest frame's (9216 B) wire time at this speed; in percent."""
    window = end - start + (9216 + 24) * 8 * 1e3 / speed_mbps
    return (bytes_ + 24 * frames) * 8 * 1e3 / speed_mbps / window * 100


def events(run):
    with open(os.path.join(run, "events.jsonl")) as f:
        return [json.loads(line) for line in f]


def check_replay_page(test, got, run, suffix=""):
    """The charts of one run (ids end in suffix on a compare page) against summary.json and
    events.jsonl, each value recomputed here."""
    with open(os.path.join(run, "summary.json")) as f:
        s = json.load(f)
    ev = events(run)
    charts = got["charts"]
    spec = {b.get("id"): b for b in blocks(got["spec"]) if b.get("id")}
    t0, t1 = s["start_ns"], s["end_ns"]
    key = lambda e: (e["switch"] + "|" if "switch" in e else "") + e["port"]
    # queue depth: the 6 deepest queues, each plotted value a sample of events.jsonl (an instant
    # where the queue is not listed is 0), drawn as steps
    ports = ({f"{sw['name']}|{p['name']}": p for sw in s["switches"] for p in sw["ports"]}
             if "switches" in s else {p["name"]: p for p in s["ports"]})
    deep = sorted(((q["max_depth_bytes"], f"{name} q{q['queue']}") for name, p in ports.items()
                   for q in p["queues"] if q["max_depth_bytes"]), reverse=True)
    qd = charts["queue-depth" + suffix]
    labels = qd["series"][1:]
    test.assertEqual(len(labels), min(6, len(deep)))
    test.assertEqual(sorted(d for d, lbl in deep if lbl in labels), sorted(d for d, _ in deep[:6]))
    test.assertTrue(spec["queue-depth" + suffix]["step"])
    samples = {}
    for e in ev:
        if e["event"] == "queue_depth":
            samples.setdefault(e["t"], {})[f"{key(e)} q{e['queue']}"] = e["bytes"]
    test.assertGreater(len(samples), 0)
    xs = qd["data"][0]
    on_instant = 0
    for i, x in enumerate(xs):
        t = round(x * 1e3)
        for j, lbl in enumerate(labels):
            want = samples[t].get(lbl, 0) if t in samples else 0
            test.assertEqual(qd["data"][j + 1][i], want, f"{lbl} at {t} ns")
        on_instant += t in samples
    test.assertEqual(on_instant, len(samples), "every sampling instant plotted")
    # link utilization by tier: the formula above over summary.json's bytes and frames
    util = {}
    if "switches" not in s:
        util = {name: wire_util(p["tx_bytes"], p["tx_packets"], p["speed"], t0, t1)
                for name, p in ports.items() if p["speed"]}
    for link in s.get("links", []):
        for d in link["directions"]:
            util[f"{d['from']}→{d['to']}"] = wire_util(d["bytes"], d["frames"], link["speed"], t0,
                                                      t1)
            test.assertTrue(close(d["utilization"] * 100, util[f"{d['from']}→{d['to']}"]),
                            "summary.json's utilization, same window")
    scale = "fabric-up" + suffix in spec  # a zone in aggregate: tests/py/test_pages.py checks it
    seen = {}
    for cid, c in charts.items() if not scale else ():
        if cid.startswith("util-") and cid.endswith(suffix):
            for cat, v in zip(spec[cid]["categories"], c["data"][1]):
                seen[cat] = v
            test.assertEqual(c["y"], [0, 100], "utilization on a 0-100 % axis")
    if not scale:
        test.assertEqual({k for k in seen if k in util or seen[k]}, util.keys())
    for k, v in util.items() if not scale else ():
        test.assertTrue(close(seen[k], v), f"{k}: {seen[k]} vs {v}")
        test.assertLessEqual(seen[k], 100)
    # PFC timeline: a row per port and priority that sent PFC, its frame count that of
    # summary.json's SAI counter
    tl = spec["pfc-timeline" + suffix]
    want_rows = {}
    for name, p in ports.items():
        for prio in range(8):
            n = p["pfc"][f"SAI_PORT_STAT_PFC_{prio}_TX_PKTS"]
            if n:
                want_rows[(name, prio)] = n
    test.assertEqual({(r["port"], r["priority"]): r["frames"] for r in tl["rows"]}, want_rows)
    for r in tl["rows"]:
        for a, b in r["spans"]:
            test.assertLessEqual(t0 / 1e3, a)
            test.assertLessEqual(a, b)
            test.assertLessEqual(b, t1 / 1e3 + 1e-9)
    # ECN marks: rate x bin width sums to summary.json's marked packets
    marked = sum(q["ecn_marked_packets"] for p in ports.values() for q in p["queues"])
    e = spec["ecn-marks" + suffix]
    if marked:
        c = charts["ecn-marks" + suffix]
        total = sum(v for series in c["data"][1:] for v in series) * e["bin_us"]
        test.assertAlmostEqual(total, marked, places=6)
    else:
        test.assertIn("empty", e)
    # flow completion: the empirical CDF, the median (mean of the two middle values for an even
    # count) and the nearest-rank p99
    done = sorted(f["completion_ns"] for f in s["flows"] if f["completion_ns"] is not None)
    cdf = charts.get("fct-cdf" + suffix)
    if cdf is not None:
        for x, y in zip(cdf["data"][0][1:], cdf["data"][1][1:]):
            test.assertAlmostEqual(y, sum(1 for c in done if c <= round(x * 1e3)) / len(s["flows"]))
        n = len(done)
        med = (done[n // 2] if n % 2 else (done[n // 2 - 1] + done[n // 2]) / 2) / 1e3
        p99 = done[math.ceil(0.99 * n) - 1] / 1e3
        marks = {m["label"].split()[0]: m["x"] for m in spec["fct-cdf" + suffix]["marks"]}
        test.assertAlmostEqual(marks["median"], med, places=6)
        test.assertAlmostEqual(marks["p99"], p99, places=6)
    # topology: every link, coloured by its busier direction, PFC frames of its two ends
    topo = spec.get("topology" + suffix)
    if topo is not None:
        test.assertEqual(len(topo["links"]), len(s["links"]))
        for tl_link, link in zip(topo["links"], s["links"]):
            u = max(util[f"{d['from']}→{d['to']}"] for d in link["directions"]) / 100
            test.assertTrue(close(max(tl_link["util"]), u))
            pfc = sum(ports[e]["pfc"][f"SAI_PORT_STAT_PFC_{i}_TX_PKTS"] for e in
                      (link["a"], link["b"]) if e in ports for i in range(8))
            test.assertEqual(tl_link["pfc"], pfc)
    if not scale:
        check_flows_per_uplink(test, charts, spec, s, suffix)
    return s


def check_flows_per_uplink(test, charts, spec, s, suffix):
    """Zones with leaf -> spine links: a bar per uplink with the number of flows whose path in
    summary.json crosses it, and on a report page (no suffix) the table of the uplinks two or
    more flows share, most flows first (ties in the links' order), with their bytes."""
    links = s.get("links", [])
    leaves = set()  # switches with a host link
    for link in links:
        for host, sw in ((link["a"], link["b"]), (link["b"], link["a"])):
            if "|" not in host:
                leaves.add(sw.split("|")[0])
    ups = [(d["from"], d["to"]) for link in links for d in link["directions"]
           if "|" in d["from"] and "|" in d["to"] and d["from"].split("|")[0] in leaves
           and d["to"].split("|")[0] not in leaves]
    if not ups:
        test.assertNotIn("flows-uplink" + suffix, charts)
        return
    on = {u: [] for u in ups}
    for f in s["flows"]:
        for hop in f["path"]:
            if (hop["from"], hop["to"]) in on:
                on[(hop["from"], hop["to"])].append((f, hop["bytes"]))
    label = [f"{a}→{b.split('|')[0]}" for a, b in ups]
    c = charts["flows-uplink" + suffix]
    test.assertEqual(spec["flows-uplink" + suffix]["categories"], label)
    test.assertEqual(c["data"][1], [len(on[u]) for u in ups])
    if suffix:
        return
    shared = sorted((i for i, u in enumerate(ups) if len(on[ups[i]]) >= 2),
                    key=lambda i: -len(on[ups[i]]))
    rows = spec.get("flow-collisions", {}).get("rows", [])
    test.assertEqual([r[0] for r in rows], [label[i] for i in shared])
    for r, i in zip(rows, shared):
        test.assertEqual(int(r[1]), len(on[ups[i]]))
        test.assertEqual(r[2], f"{sum(b for _, b in on[ups[i]]) / 1e6:.3f}")
        f0 = on[ups[i]][0][0]
        test.assertTrue(r[3].startswith(f"{f0['src']}→{f0['dst']} QP {f0['dest_qp']}"), r[3])
