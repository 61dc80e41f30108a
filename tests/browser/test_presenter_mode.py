"""Presenter mode at 1280×720: a whole lesson run from the keyboard alone, with the step, its command,
the question and the tally on one screen at every step (no page scroll), a follower beside it; a
predict step's outcome absent from both pages until the reveal; freezing the followers; toasts clear
of the rail's controls."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, Locator, Page, expect

from clusterviz.lesson_view import touches
from clusterviz.lessons import get_lesson

from .conftest import ClusterApi, open_cluster
from .test_cluster_page import card, no_page_errors

SCREEN = {"width": 1280, "height": 720}


def page_at_1280x720(browser: Browser, url: str) -> Page:
    return open_cluster(browser.new_context(viewport=SCREEN).new_page(), url)


def assert_on_screen(page: Page, *locators: Locator) -> None:
    """Each element is drawn wholly inside the viewport, and the page itself does not scroll."""
    for locator in locators:
        expect(locator).to_be_visible()
        box = locator.bounding_box()
        assert box is not None
        assert box["x"] >= 0 and box["y"] >= 0, (locator, box)
        assert box["x"] + box["width"] <= SCREEN["width"] + 0.5, (locator, box)
        assert box["y"] + box["height"] <= SCREEN["height"] + 0.5, (locator, box)
    height = page.evaluate("Math.max(document.documentElement.scrollHeight, document.body.scrollHeight)")
    assert height <= SCREEN["height"], height


def in_dom(page: Page, text: str) -> bool:
    """Whether the text is anywhere in the page: its text or its markup (attributes included)."""
    return bool(
        page.evaluate(
            "(t) => document.documentElement.textContent.includes(t) || document.documentElement.outerHTML.includes(t)",
            text,
        )
    )


def rail_step(page: Page, number: int, where: str) -> Locator:
    return page.locator(f'#lesson-rail .rail-step[data-step="{number}"][data-where="{where}"]')


def test_a_whole_lesson_from_the_keyboard_on_one_screen(browser: Browser, new_cluster: Any) -> None:
    api: ClusterApi = new_cluster("taints-noschedule")
    lesson = get_lesson("taints-noschedule")
    presenter = page_at_1280x720(browser, api.url + "?present=1")
    follower = page_at_1280x720(browser, api.url + "?role=follower&present=1")
    rail, their_rail = presenter.locator("#lesson-rail"), follower.locator("#lesson-rail")
    expect(rail.locator(".rail-title")).to_have_text(lesson.title)
    forward = rail.locator("[data-rail=forward]")

    for number, step in enumerate(lesson.steps, start=1):
        # The instruction, before the step runs: on both screens, with no outcome anywhere.
        for page in (presenter, follower):
            shown = rail_step(page, number, "next")
            expect(shown.locator(".rail-say")).to_have_text(step.say)
            expect(shown.locator(".rail-command")).to_have_text(step.command)
            assert_on_screen(page, shown.locator(".rail-say"), shown.locator(".rail-command"))
            assert not in_dom(page, step.after), (number, "outcome shown before the step ran")
        assert_on_screen(
            presenter, *(rail.locator(f"[data-rail={b}]") for b in ("forward", "back", "ask", "reveal", "freeze"))
        )
        expect(forward).to_contain_text(f"ask & run step {number}" if step.predict else f"run step {number}")
        for node in touches(step)["nodes"]:  # the board lights the node the step acts on
            expect(card(presenter, node)).to_have_class("node-card touched")

        presenter.keyboard.press("ArrowRight")  # run it (asking its question first)
        if step.predict is not None:
            for page in (presenter, follower):
                asked = rail_step(page, number, "answering")
                expect(asked).to_be_visible()
                question = page.locator("#lesson-rail .rail-question .predict-head")
                expect(question).to_contain_text(step.predict.question)
                assert_on_screen(page, asked.locator(".rail-say"), asked.locator(".rail-command"), question)
                assert not in_dom(page, step.after), (number, "outcome shown before the reveal")
            tally = rail.locator(".predict-tally")
            expect(tally.locator(".hint")).to_have_text("0 answered")
            assert_on_screen(presenter, tally, rail.locator(".rail-controls"))
            expect(forward).to_contain_text("reveal")
            presenter.keyboard.press("r")  # reveal: the scheduler's cycle answers
        for page in (presenter, follower):
            ran = rail_step(page, number, "ran")
            expect(ran).to_be_visible()
            expect(page.locator("#lesson-rail .rail-after-text")).to_have_text(step.after)
            assert_on_screen(page, ran.locator(".rail-say"), ran.locator(".rail-command"))
        if step.predict is not None:
            result = rail.locator(".predict-result")
            # The marks wait until the cycle has played on this board (the player's pace, not the test's).
            expect(result).to_contain_text("default/myapp01 lands on node01", timeout=60_000)
            assert_on_screen(
                presenter, rail.locator(".predict-head"), rail.locator(".predict-tally"), rail.locator(".rail-controls")
            )
        if number < len(lesson.steps):
            presenter.keyboard.press("ArrowRight")  # on to the next step's instruction

    expect(forward).to_contain_text("lesson complete")
    expect(forward).to_be_disabled()
    assert api.state()["cluster"]["lessonStep"] == len(lesson.steps)
    pods = api.objects("Pod")
    assert pods["default/myapp01"]["spec"]["nodeName"] == "node01"
    assert pods["default/myapp02"]["spec"]["nodeName"] == "node01"
    assert not [key for key, pod in pods.items() if not pod["spec"].get("nodeName")]

    # ← goes back through what ran, → comes forward again; the follower's rail goes along.
    presenter.keyboard.press("ArrowLeft")
    presenter.keyboard.press("ArrowLeft")
    for page in (presenter, follower):
        expect(page.locator("#lesson-rail .rail-after-text")).to_have_text(lesson.steps[4].after)
        expect(rail_step(page, 5, "ran")).to_be_visible()
    presenter.keyboard.press("ArrowRight")
    expect(rail_step(follower, 6, "ran")).to_be_visible()
    expect(their_rail.locator(".rail-controls button")).to_have_count(0)  # a follower has no controls
    for page in (presenter, follower):
        no_page_errors(page)


def test_freeze_holds_the_followers_and_toasts_stay_clear_of_the_rail(browser: Browser, new_cluster: Any) -> None:
    api: ClusterApi = new_cluster("nodeselector")
    lesson = get_lesson("nodeselector")
    presenter = page_at_1280x720(browser, api.url + "?present=1")
    follower = page_at_1280x720(browser, api.url + "?role=follower&present=1")
    presenter.keyboard.press("ArrowRight")  # run step 1
    expect(rail_step(follower, 1, "ran")).to_be_visible()
    presenter.keyboard.press("ArrowRight")  # step 2's instruction
    expect(rail_step(follower, 2, "next")).to_be_visible()

    presenter.keyboard.press("f")
    expect(presenter.locator("#lesson-rail .rail-frozen")).to_have_text("❄ followers frozen")
    expect(follower.locator("#lesson-rail .rail-frozen")).to_have_text("❄ held by the presenter")
    presenter.keyboard.press("ArrowLeft")  # the presenter looks back; the class stays on step 2
    expect(rail_step(presenter, 1, "ran")).to_be_visible()
    presenter.locator("#detail [data-tab=events]").click()
    expect(presenter.locator("#detail .tab.active")).to_have_text("Events")
    expect(rail_step(follower, 2, "next")).to_be_visible()
    expect(follower.locator("#detail .tab.active")).not_to_have_text("Events")
    assert api.state()["cluster"]["presenterView"]["frozen"] is True

    presenter.keyboard.press("F")  # thawed: the followers catch up
    expect(follower.locator("#lesson-rail .rail-frozen")).to_have_count(0)
    expect(rail_step(follower, 1, "ran")).to_be_visible()
    expect(follower.locator("#detail .tab.active")).to_have_text("Events")

    # P on a step that asks nothing says so in a toast, which never covers the rail's controls.
    presenter.keyboard.press("p")
    toast = presenter.locator("#toasts .toast").last
    expect(toast).to_have_text("step 1 asks the class nothing")
    box = toast.bounding_box()
    controls = presenter.locator("#lesson-rail .rail-controls").bounding_box()
    assert box is not None and controls is not None
    assert box["x"] + box["width"] <= controls["x"] or box["y"] + box["height"] <= controls["y"], (box, controls)
    assert lesson.steps[2].after not in presenter.content()
    for page in (presenter, follower):
        no_page_errors(page)


def test_a_predict_steps_outcome_is_absent_from_both_pages_until_the_reveal(browser: Browser, new_cluster: Any) -> None:
    """Outside presenter mode too: the Lesson tab of the presenter and of a follower."""
    api: ClusterApi = new_cluster("nodeselector")
    lesson = get_lesson("nodeselector")
    asked = lesson.steps[2]
    presenter = open_cluster(browser.new_context(viewport=SCREEN).new_page(), api.url + "?tab=lesson")
    follower = open_cluster(browser.new_context(viewport=SCREEN).new_page(), api.url + "?role=follower")
    follower.locator("#detail [data-tab=lesson]").click()
    panel = presenter.locator("[data-panel=lesson]")
    for number in (1, 2, 3):
        panel.locator("button.next-step").click()
        expect(panel.locator(f'li[data-step="{number}"]')).to_have_class("done")
    for page in (presenter, follower):
        assert asked.predict is not None
        expect(page.locator("#prediction .predict-head")).to_contain_text(asked.predict.question)
        expect(page.locator(".pending-lane [data-pod='default/pod-example']")).to_be_visible()
        assert not in_dom(page, asked.after)
        assert in_dom(page, lesson.steps[1].after)  # the steps before it: what happened is shown
    presenter.locator("#prediction [data-predict=reveal]").click()
    for page in (presenter, follower):
        expect(page.locator('[data-panel=lesson] li[data-step="3"] .after')).to_have_text(asked.after)
    assert api.objects("Pod")["default/pod-example"]["spec"].get("nodeName") is None  # the answer: it stays Pending
    for page in (presenter, follower):
        no_page_errors(page)


def test_the_join_code_and_its_qr_code_on_the_presenters_screen(browser: Browser, new_cluster: Any) -> None:
    api: ClusterApi = new_cluster("taints-noschedule")
    presenter = page_at_1280x720(browser, api.url + "?present=1")
    join = presenter.locator("#join-card")
    assert_on_screen(presenter, join)
    code = join.locator(".join-code").inner_text()
    dialog = presenter.locator("#join-dialog")
    expect(dialog).to_be_hidden()
    presenter.keyboard.press("j")
    expect(dialog).to_be_visible()
    assert_on_screen(presenter, dialog.locator(".join-qr svg"), dialog.locator(".join-code-big"))
    expect(dialog.locator(".join-code-big")).to_have_text(code)
    expect(dialog.locator(".join-url")).to_have_text(f"{api.server.url}/join")
    expect(dialog.locator(".join-follower-url")).to_have_text(f"{api.url}?role=follower")
    box = dialog.locator(".join-qr svg").bounding_box()
    assert box and box["width"] >= 250, box  # scannable from the back of a classroom
    presenter.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    join.click()
    expect(dialog).to_be_visible()
    # a follower's page has neither
    follower = page_at_1280x720(browser, api.url + "?role=follower")
    expect(follower.locator("#join-card")).to_have_count(0)
    for page in (presenter, follower):
        no_page_errors(page)


def test_start_a_class_from_the_catalog(browser: Browser, cv_server: Any) -> None:
    """The home page's catalog: a lesson card's "start a class" opens presenter mode with the join code."""
    page = browser.new_context(viewport=SCREEN).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(cv_server.url + "/")
    topic = page.locator('#catalog .topic[data-topic="taints-tolerations"]')
    lesson = get_lesson("taints-noschedule")
    card = topic.locator('.lesson-card[data-lesson="taints-noschedule"]')
    expect(card.locator(".lesson-title")).to_have_text(lesson.title)
    expect(card.locator(".lesson-counts")).to_have_text("7 steps · 1 question")
    card.get_by_role("button", name="start a class").click()
    page.wait_for_url("**/clusters/taints-noschedule-*/?present=1")
    page.wait_for_selector("#ws-state[data-state=open]")
    rail = page.locator("#lesson-rail")
    expect(rail.locator(".rail-title")).to_have_text(lesson.title)
    assert_on_screen(page, rail.locator(".rail-step"), page.locator("#join-card"))
    assert errors == []


def test_a_class_in_chinese(browser: Browser, new_cluster: Any) -> None:
    """A browser that asks for zh-CN: the presenter's rail, the question and a student's join page in Chinese."""
    from clusterviz.lesson_translations import all_translations

    translation = all_translations()["zh-hans"]["taints-noschedule"]
    api: ClusterApi = new_cluster("taints-noschedule")
    presenter = open_cluster(browser.new_context(viewport=SCREEN, locale="zh-CN").new_page(), api.url + "?present=1")
    rail = presenter.locator("#lesson-rail")
    expect(rail.locator(".rail-title")).to_have_text(translation.title)
    expect(rail.locator(".rail-say")).to_have_text(translation.steps[0].say)
    expect(rail.locator(".rail-number")).to_contain_text("第 1 步，共 7 步")
    expect(rail.locator("[data-rail=freeze]")).to_contain_text("冻结")
    expect(presenter.locator("#ws-state")).to_contain_text("实时")  # the board's own scripts speak Chinese too
    expect(presenter.locator('#detail [data-tab="why"]')).to_have_text("为什么 Pending")
    for number in range(1, 5):  # run steps 1–4, each shown with what happened, in Chinese
        expect(rail_step(presenter, number, "next")).to_be_visible()
        presenter.keyboard.press("ArrowRight")
        expect(rail_step(presenter, number, "ran")).to_be_visible()
        expect(rail.locator(".rail-after-text")).to_have_text(translation.steps[number - 1].after)
        presenter.keyboard.press("ArrowRight")
    expect(rail_step(presenter, 5, "next")).to_be_visible()
    expect(rail.locator(".rail-say")).to_have_text(translation.steps[4].say)
    presenter.keyboard.press("ArrowRight")  # step 5 asks the class first
    question = presenter.locator("#prediction .predict-head")
    expect(question).to_contain_text(f"问题 1：{translation.steps[4].question}")
    expect(question).to_contain_text("正在作答")
    assert not in_dom(presenter, translation.steps[4].after)  # no spoiler, in Chinese either
    student = browser.new_context(viewport=SCREEN, locale="zh-CN").new_page()
    student.goto(f"{api.server.url}/join")
    expect(student.locator("h1")).to_have_text("加入课堂")
    student.locator("input[name=code]").fill("zzz999")
    student.locator(".join-form button[type=submit]").click()
    expect(student.locator("#join-error")).to_have_text(
        'code：未找到 "ZZZ 999"：没有课堂使用这个加入码（请对照屏幕检查）'
    )
    no_page_errors(presenter)
