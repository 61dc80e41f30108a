"""Prediction mode in the browser: a presenter plays a lesson step that asks the class, three followers
(each their own browser session) pick on their own boards, the presenter watches the tally and
reveals; every board plays the scheduler's cycle and marks its pick."""

from __future__ import annotations

import csv
import io
from typing import Any

from playwright.sync_api import Browser, Page, expect

from .conftest import ClusterApi, open_cluster
from .test_cluster_page import card, finish_cycle_of, no_page_errors


def play_round(browser: Browser, api: ClusterApi) -> tuple[Page, list[Page]]:
    """Up to the reveal's marks: the presenter and three followers' pages (Ada right, Bob and Cy wrong)."""
    presenter = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    open_cluster(presenter, api.url)
    # Ada joins as a student does: the code read off the presenter's screen, typed at /join, a nickname.
    code = presenter.locator("#join-card .join-code").inner_text()
    ada = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    ada.goto(f"{api.server.url}/join")
    ada.locator("input[name=code]").fill(code.lower().replace(" ", "-"))
    ada.locator("input[name=nickname]").fill("Ada")
    ada.locator(".join-form button[type=submit]").click()
    ada.wait_for_url(f"{api.url}?role=follower")
    followers = [
        open_cluster(ada, api.url + "?role=follower"),
        *(
            open_cluster(
                browser.new_context(viewport={"width": 1280, "height": 800}).new_page(), api.url + "?role=follower"
            )
            for _ in range(2)
        ),
    ]

    # The lesson's step asks first, then creates the pod, which the scheduler holds Pending.
    presenter.locator("#detail [data-tab=lesson]").click()
    presenter.locator("[data-panel=lesson] .next-step").click()
    for page in (presenter, *followers):
        expect(page.locator("#prediction .predict-head")).to_contain_text(
            "Question 1: pod-kgc has nodeSelector kgc=a. Which node does it go to?"
        )
        expect(page.locator('#board .pending-lane [data-pod="default/pod-kgc"]')).to_be_visible()
    expect(presenter.locator("#prediction .predict-state")).to_have_text("answers open · the pod is held Pending")
    assert "nodeName" not in api.objects("Pod")["default/pod-kgc"]["spec"]

    ada, bob, cy = followers
    card(ada, "node02").click()  # picked on the board
    expect(ada.locator("#prediction input[name=name]")).to_have_value("Ada")  # the nickname given at /join
    bob.locator('#prediction [data-pick="node01"]').click()
    bob.locator("#prediction input[name=name]").fill("Bob")
    cy.locator('#prediction [data-pick="@pending"]').click()
    for page, pick in ((ada, "node02"), (bob, "node01"), (cy, "stays Pending")):
        page.locator("[data-predict=answer]").click()
        expect(page.locator("#prediction .hint").first).to_have_text(f"your answer: {pick} (locked in)")
        expect(page.locator("#prediction [data-pick]").first).to_be_disabled()  # once only
        expect(page.locator("#prediction .predict-tally")).to_have_count(0)  # nobody else's answers

    # The presenter's tally is live, one bar per node and "stays Pending".
    expect(presenter.locator("#prediction .predict-tally .hint")).to_have_text("3 answered")
    bars = presenter.locator("#prediction .predict-bar")
    expect(bars).to_have_count(4)
    expect(bars.locator(".predict-bar-label")).to_have_text(["node01", "node02", "node03", "stays Pending"])
    expect(bars.locator(".predict-bar-count")).to_have_text(["1 · 33%", "1 · 33%", "0", "1 · 33%"])

    presenter.locator("[data-predict=reveal]").click()
    finish_cycle_of(presenter, "default/pod-kgc")  # followers follow the presenter to the cycle's end
    return presenter, followers


def test_a_prediction_round_with_three_followers_to_its_reveal(browser: Browser, new_cluster: Any) -> None:
    api = new_cluster("demo")
    presenter, (ada, bob, cy) = play_round(browser, api)

    # The right answer is the scheduler's: the cycle bound the pod to node02.
    assert api.objects("Pod")["default/pod-kgc"]["spec"]["nodeName"] == "node02"
    for page, mark in ((ada, "✓ right"), (bob, "✗ wrong"), (cy, "✗ wrong")):
        expect(page.locator("#prediction .predict-mark")).to_have_text(mark)
        expect(page.locator("#prediction .predict-score")).to_have_text("class: 1 of 3 right (33%)")
        expect(page.locator("#prediction .predict-bar.right .predict-bar-label")).to_have_text("node02")
    expect(presenter.locator("#prediction .predict-result")).to_contain_text("default/pod-kgc lands on node02 (cycle")
    expect(presenter.locator("#prediction .predict-score")).to_have_text("class: 1 of 3 right (33%)")

    # The presenter's CSV export (the page's session holds the edit link).
    text = presenter.request.get(f"{api.server.url}/api/clusters/{api.slug}/predictions.csv").text()
    rows = list(csv.DictReader(io.StringIO(text)))
    unnamed = "follower-" + rows[2]["follower_id"][:4]  # Cy gave no name
    assert [(r["follower"], r["pick"], r["correct"]) for r in rows] == [
        ("Ada", "node02", "yes"),
        ("Bob", "node01", "no"),
        (unnamed, "stays Pending", "no"),
    ]
    for page in (presenter, ada, bob, cy):
        no_page_errors(page)
