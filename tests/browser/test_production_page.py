"""The pages under their Content-Security-Policy in Chromium, and the home page's name field."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import ConsoleMessage, Page, expect

from .conftest import LiveServer, open_cluster

# Recorded before any page script runs (an init script is not subject to the page's CSP).
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
});
"""


def _console(page: Page) -> list[str]:
    messages: list[str] = []

    def record(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            messages.append(message.text)

    page.on("console", record)
    return messages


def test_the_cluster_page_works_under_its_csp_with_no_violation(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    page.add_init_script(RECORD_VIOLATIONS)
    console = _console(page)
    response = page.request.get(api.url)
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    open_cluster(page, api.url)  # the stream is open and the board drawn: the scripts ran
    # An action round trip over the WebSocket (connect-src) and the lesson fetch (fetch) both work.
    page.locator("#board [data-node] .cordon").first.click()
    expect(page.locator("#board [data-node].cordoned")).to_have_count(1)
    assert page.evaluate("window.__cspViolations") == []
    assert not [m for m in console if "Content Security Policy" in m], console


def test_the_home_page_checks_the_name_in_the_browser(page: Page, cv_server: LiveServer) -> None:
    page.add_init_script(RECORD_VIOLATIONS)
    console = _console(page)
    page.goto(cv_server.url + "/")
    field = page.locator("input[name=slug]")
    # Chromium compiles `pattern` with the `v` flag; an invalid one is ignored (with a console error).
    verdicts = {}
    for name in ["good-name", "a", "n01", "Bad", "-x", "x-", "with space", "a_b", "x" * 63]:
        field.fill(name)
        verdicts[name] = field.evaluate("el => el.validity.valid")
    assert verdicts == {
        "good-name": True,
        "a": True,
        "n01": True,
        "Bad": False,
        "-x": False,
        "x-": False,
        "with space": False,
        "a_b": False,
        "x" * 63: True,
    }
    assert not [m for m in console if "pattern" in m.lower()], console
    # An invalid name is not submitted: the browser says why and stays on the page.
    field.fill("Bad_Name")
    page.locator("form.create button[type=submit]").click()
    assert field.evaluate("el => el.validationMessage")
    assert page.url == cv_server.url + "/"
    # A valid one creates the cluster.
    field.fill("from-the-home-page")
    page.locator("form.create button[type=submit]").click()
    page.wait_for_url("**/clusters/from-the-home-page/")
    page.wait_for_selector("#ws-state[data-state=open]")
    assert page.evaluate("window.__cspViolations") == []
