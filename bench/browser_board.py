"""Browser benchmark of the node map: a generated cluster of realistic nodes (tests/big_cluster.py) on a
server this script starts on 127.0.0.1, opened in headless Debian Chromium driven by Playwright.

    python bench/browser_board.py --nodes 1000 5000 [--server dev|runserver|uvicorn] [--pods-per-node 1] [-o json]
    python bench/browser_board.py --nodes 5000 --edit-link http://127.0.0.1:8000/clusters/big/?key=...
    python bench/browser_board.py --nodes 5000 --cpu-profile explain.cpuprofile
    python bench/browser_board.py --nodes 1000 5000 --scaleup 1000

Prints, per cluster size and page (`--pages`; the first meets a server that has not read the cluster
yet, and the server's scheduler cache builds are listed with it): page load → map first paint (and
state received → map painted), scroll and zoom frame rates, explain click → what-if shown and →
verdict map with top scores, playback frame rate, and the JS heap after a garbage collection. With
`--scaleup N` instead: a Deployment scaled from 0 to N on the open page, and the seconds until the
map (coloured by pod count) counts them all.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Page, sync_playwright  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

from tests.big_cluster import SCALE_DEPLOYMENT, create_big_cluster, web_pod_yaml  # noqa: E402
from tests.live_server import LiveServer  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
POD = web_pod_yaml("6", "20Gi")

# rAF frames counted while `step` runs each frame for `ms`: frames per second and the longest gap.
FRAME_RATE = """async ([ms, step]) => {
  const run = new Function("i", step);
  const gaps = [];
  let last = performance.now();
  const start = last;
  let i = 0;
  await new Promise((done) => {
    const tick = (now) => {
      gaps.push(now - last);
      last = now;
      run(i++);
      if (now - start < ms) requestAnimationFrame(tick);
      else done();
    };
    requestAnimationFrame(tick);
  });
  const total = performance.now() - start;
  return { fps: (gaps.length / total) * 1000, worstMs: Math.max(...gaps.slice(1)) };
}"""

SCROLL_STEP = """const s = document.querySelector('.map-scroll');
s.scrollTop = (i * 13) % Math.max(1, s.scrollHeight - s.clientHeight);"""
HOVER_STEP = """const c = document.querySelector('.map-canvas'); const r = c.getBoundingClientRect();
c.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + 5 + (i * 7) % Math.max(1, r.width - 20),
  clientY: r.top + 30 + (i * 3) % 200, bubbles: true}));"""


def set_editor(page: Page, text: str) -> None:
    page.evaluate(
        """(text) => { const a = document.querySelector('#editor textarea'); a.value = text;
        a.dispatchEvent(new Event('input')); }""",
        text,
    )


def top_functions(profile: dict[str, Any], count: int = 25) -> list[str]:
    """The functions of a CDP CPU profile that took the most time themselves (ms, function, where)."""
    samples = profile.get("samples") or []
    interval = (profile["endTime"] - profile["startTime"]) / 1000 / max(1, len(samples))
    spent: dict[str, float] = {}
    for node in profile["nodes"]:
        frame = node["callFrame"]
        where = f"{frame['url'].rsplit('/', 1)[-1]}:{frame['lineNumber'] + 1}" if frame["url"] else ""
        key = f"{frame['functionName'] or '(anonymous)'} {where}".strip()
        spent[key] = spent.get(key, 0.0) + node.get("hitCount", 0) * interval
    ranked = sorted(spent.items(), key=lambda item: -item[1])[:count]
    return [f"{ms:8.1f} ms  {name}" for name, ms in ranked]


def measure(page: Page, edit_url: str, url: str, nodes: int, cpu_profile: Path | None = None) -> dict[str, Any]:
    page.set_default_timeout(120_000)
    page.goto(edit_url)  # hold the edit link, as the presenter does
    page.goto(url)
    page.wait_for_function(f"window.__nodeMap && window.__nodeMap.cells === {nodes}")
    page.wait_for_function("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
    timing = page.evaluate(
        """() => {
          const nav = performance.getEntriesByType('navigation')[0];
          const state = performance.getEntriesByType('resource').find((e) => e.name.includes('/state'));
          return { load: nav.loadEventEnd, domContentLoaded: nav.domContentLoadedEventEnd,
                   stateReceived: state ? state.responseEnd : null, firstPaint: window.__nodeMap.firstPaint };
        }"""
    )
    out: dict[str, Any] = {
        "nodes": nodes,
        "page_load_ms": round(timing["load"]),
        "state_received_ms": round(timing["stateReceived"]),
        "map_painted_ms": round(timing["firstPaint"]),
        "load_to_map_ms": round(timing["firstPaint"] - timing["load"]),
        "state_to_map_ms": round(timing["firstPaint"] - timing["stateReceived"]),
    }
    try:  # the map and the what-if do not need the stream; note whether it opened
        page.wait_for_selector("#ws-state[data-state=open]", timeout=30_000)
        out["stream_open"] = True
    except PlaywrightTimeout:
        out["stream_open"] = False
    page.wait_for_timeout(1000)
    box = page.locator(".map-scroll").bounding_box()
    assert box
    scroll = page.evaluate(FRAME_RATE, [2000, SCROLL_STEP])
    out["scroll_fps"], out["scroll_worst_frame_ms"] = round(scroll["fps"], 1), round(scroll["worstMs"], 1)
    zoom = page.evaluate(
        FRAME_RATE,
        [2000, "document.querySelector(i % 8 < 4 ? '.map-zoom-in' : '.map-zoom-out').click();"],
    )
    out["zoom_fps"], out["zoom_worst_frame_ms"] = round(zoom["fps"], 1), round(zoom["worstMs"], 1)
    page.mouse.move(box["x"] + 20, box["y"] + 40)
    hover = page.evaluate(FRAME_RATE, [1500, HOVER_STEP])
    out["hover_fps"] = round(hover["fps"], 1)

    # Explain: click → the what-if is shown (its playback starts), then ⇥ → verdict map and top scores.
    set_editor(page, POD)
    cdp = page.context.new_cdp_session(page)
    if cpu_profile:
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        cdp.send("Profiler.start")
    started = time.perf_counter()
    page.click("[data-editor=explain]")
    page.wait_for_function("document.querySelector('.cycle-info').textContent.includes('what-if')")
    shown = time.perf_counter()
    page.click("[data-player=end]")
    page.wait_for_function(
        "document.querySelector('.map-canvas').dataset.winner && document.querySelector('#detail .top-scores tbody tr')"
    )
    done = time.perf_counter()
    out["explain_to_whatif_ms"] = round((shown - started) * 1000)
    out["explain_to_verdict_map_and_top_scores_ms"] = round((done - started) * 1000)
    out["end_click_to_map_and_scores_ms"] = round((done - shown) * 1000)
    if cpu_profile:
        profile = cdp.send("Profiler.stop")["profile"]
        cpu_profile.write_text(json.dumps(profile))
        print("\n".join(["# explain click → map and scores, self time:", *top_functions(profile)]), file=sys.stderr)

    # Playback of that cycle at ×4 (an event every 55 ms): frames per second while it plays.
    page.select_option("#pipeline select.speed", "4")
    page.click("[data-player=play]")
    play = page.evaluate(FRAME_RATE, [3000, ""])
    out["playback_fps"], out["playback_worst_frame_ms"] = round(play["fps"], 1), round(play["worstMs"], 1)
    out["renders_ms_last"] = round(page.evaluate("window.__nodeMap.lastDrawMs"), 2)

    cdp.send("HeapProfiler.collectGarbage")
    heap = cdp.send("Runtime.getHeapUsage")
    out["js_heap_mib"] = round(heap["usedSize"] / 2**20, 1)
    out["dom_nodes"] = page.evaluate("document.getElementsByTagName('*').length")
    return out


def cache_builds(log: Path) -> list[str]:
    """What the server logged of its scheduler cache builds so far (objects, seconds, CPU seconds)."""
    marker = "scheduler cache built from the store: "
    return [line.split(marker, 1)[1].strip() for line in log.read_text().splitlines() if marker in line]


ACTION = """async (action) => {
  const slug = location.pathname.split('/')[2];
  const response = await fetch(`/api/clusters/${slug}/actions`, {method: 'POST',
    headers: {'Content-Type': 'application/json'}, body: JSON.stringify(action)});
  return response.status;
}"""


def measure_scaleup(page: Page, edit_url: str, url: str, nodes: int, replicas: int) -> dict[str, Any]:
    """Scale a Deployment from 0 to `replicas` from the open page; time until the map counts them."""
    page.set_default_timeout(600_000)
    page.goto(edit_url)
    page.goto(url)
    page.wait_for_function(f"window.__nodeMap && window.__nodeMap.cells === {nodes}")
    page.wait_for_selector("#ws-state[data-state=open]")
    page.select_option(".map-colour", "pods")
    page.wait_for_function("window.__nodeMap.podsCounted !== undefined && window.__nodeMap.podsCounted > 0")
    assert page.evaluate(ACTION, {"action": "create", "yaml": SCALE_DEPLOYMENT}) == 200
    page.wait_for_timeout(1500)  # the ReplicaSet exists, the stream and the counts are quiet
    before = page.evaluate("window.__nodeMap.podsCounted")
    started = time.perf_counter()
    assert page.evaluate(ACTION, {"action": "scale", "name": "scale-web", "replicas": replicas}) == 200
    page.wait_for_function(f"window.__nodeMap.podsCounted >= {before + replicas}", polling=100)
    drawn = time.perf_counter() - started
    frames = page.evaluate(FRAME_RATE, [1000, ""])
    return {
        "nodes": nodes,
        "replicas": replicas,
        "scale_to_map_counts_all_s": round(drawn, 2),
        "fps_after": round(frames["fps"], 1),
        "draws": page.evaluate("window.__nodeMap.draws"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--pods-per-node", type=int, default=1)
    parser.add_argument("--server", choices=["dev", "runserver", "uvicorn"], default="dev")
    parser.add_argument("-o", "--output", choices=["text", "json"], default="text")
    parser.add_argument("--edit-link", help="measure this running cluster (its edit link) instead; --nodes: its size")
    parser.add_argument(
        "--cpu-profile",
        type=Path,
        help="write the browser's CPU profile of explain click → map and scores here (.cpuprofile, for DevTools) "
        "and print its costliest functions",
    )
    parser.add_argument(
        "--pages",
        type=int,
        default=2,
        help="pages measured per cluster: the first meets a server that has not read the cluster yet "
        "(its first what-if waits for the scheduler cache), the next ones a warm server",
    )
    parser.add_argument("--scaleup", type=int, default=0, help="measure a scale-up of this many replicas instead")
    args = parser.parse_args()
    if args.edit_link:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)
            url = args.edit_link.split("?", 1)[0]
            print(json.dumps(measure(page, args.edit_link, url, args.nodes[0], args.cpu_profile)))
            browser.close()
        return
    workdir = Path(tempfile.mkdtemp(prefix="browser-board-"))
    server = LiveServer(workdir, args.server)
    server.env["LOG_LEVEL"] = "INFO"  # for the scheduler cache's build figures
    server.start()
    results = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for nodes in args.nodes:
                t = time.perf_counter()
                edit = create_big_cluster(server, f"map-{nodes}", nodes, args.pods_per_node)
                print(f"# {nodes} nodes imported in {time.perf_counter() - t:.0f} s", file=sys.stderr)
                if args.scaleup:
                    page = browser.new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)
                    url = f"{server.url}/clusters/map-{nodes}/"
                    results.append(measure_scaleup(page, edit, url, nodes, args.scaleup))
                    page.close()
                    if args.output == "text":
                        print(json.dumps(results[-1]), flush=True)
                    continue
                for number in range(1, args.pages + 1):
                    page = browser.new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)
                    url = f"{server.url}/clusters/map-{nodes}/"
                    out = {"page": number, **measure(page, edit, url, nodes, args.cpu_profile)}
                    page.close()
                    if number == 1:
                        out["cache_builds"] = cache_builds(server.log)
                    results.append(out)
                    if args.output == "text":
                        print(json.dumps(results[-1]), flush=True)
            browser.close()
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    if args.output == "json":
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
