"""English and Simplified Chinese: the language each browser gets, a catalogue with every UI string,
compiled files that match it, lessons in both languages without spoilers in either."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import polib
import pytest
from django.test import Client

from clusterviz import lesson_view, prediction, services
from clusterviz.controllers.runner import reconcile
from clusterviz.lesson_translations import all_translations, parse_translation
from clusterviz.lessons import all_lessons, get_lesson, load_lesson, play_step
from clusterviz.prediction import Pose, Reveal
from scheduler_core.api.loading import InputError
from tests.tools import missing_tool

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES"
DOMAINS = ("django", "djangojs")
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9,en;q=0.5"}

pytestmark = pytest.mark.django_db


# --------------------------------------------------------------------------- the catalogue


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_string_of_the_catalogue_is_translated(domain: str) -> None:
    po = polib.pofile(str(LOCALE / f"{domain}.po"))
    assert po.metadata["Plural-Forms"] == "nplurals=1; plural=0;"
    assert not po.metadata_is_fuzzy
    untranslated = [entry.msgid for entry in po if not entry.translated()]
    assert untranslated == [], f"{domain}.po: untranslated: {untranslated}"
    assert [e.msgid for e in po if "fuzzy" in e.flags] == []


def _marked_strings(tmp_path: Path) -> dict[str, set[str]]:
    """Every string marked for translation in the sources, as makemessages extracts them now."""
    if shutil.which("xgettext") is None:
        missing_tool("xgettext not found: apt-get install gettext")
    for part in ("clusterviz", "templates", "static", "manage.py"):
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, tmp_path / part, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        else:
            shutil.copy(source, tmp_path / part)
    (tmp_path / "locale").mkdir()
    for domain in DOMAINS:
        subprocess.run(
            [sys.executable, "manage.py", "makemessages", "-l", "zh_Hans", "-d", domain, "--no-location", "-v0"],
            cwd=tmp_path,
            check=True,
            capture_output=True,
        )
    catalogue = tmp_path / "locale" / "zh_Hans" / "LC_MESSAGES"
    return {domain: {e.msgid for e in polib.pofile(str(catalogue / f"{domain}.po"))} for domain in DOMAINS}


def test_the_catalogue_holds_every_string_marked_in_the_sources(tmp_path: Path) -> None:
    """A string marked in a template, a Python module or a script but missing from the Chinese
    catalogue fails here (run makemessages and translate it: docs/development.md)."""
    for domain, marked in _marked_strings(tmp_path).items():
        committed = {entry.msgid for entry in polib.pofile(str(LOCALE / f"{domain}.po"))}
        assert marked - committed == set(), f"{domain}: not in the catalogue: {sorted(marked - committed)}"
        assert committed - marked == set(), f"{domain}: no longer used: {sorted(committed - marked)}"


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_compiled_catalogue_is_the_catalogue(domain: str) -> None:
    po = polib.pofile(str(LOCALE / f"{domain}.po"))
    mo = polib.mofile(str(LOCALE / f"{domain}.mo"))
    expected = {(e.msgid, e.msgstr or json.dumps(e.msgstr_plural, sort_keys=True)) for e in po if e.translated()}
    compiled = {(e.msgid, e.msgstr or json.dumps(e.msgstr_plural, sort_keys=True)) for e in mo if e.msgid}
    assert compiled == expected, "run: python manage.py compilemessages -l zh_Hans --ignore '.venv/*'"


# --------------------------------------------------------------------------- pages


class _VisibleText(HTMLParser):
    """The UI's words a person reads on a page: text outside script, style and code, and the
    attributes they see. Lesson texts (their own catalogue, checked below) and code are left out."""

    SEEN_ATTRIBUTES = ("title", "placeholder", "aria-label", "alt")
    SKIPPED_TAGS = ("script", "style", "code", "option", "title")  # options: lesson titles, language names
    # lesson texts, names and codes: not the UI's words
    SKIPPED_CLASSES = (
        "lesson-title",
        "lesson-summary",
        "lesson-name",
        "cluster-name",
        "join-url",
        "join-follower-url",
        "join-code",
        "join-code-big",
    )
    VOID = ("input", "br", "img", "meta", "link", "hr")

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._stack: list[bool] = []  # per open element: whether its text is skipped

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        skipped = tag in self.SKIPPED_TAGS or any(c in self.SKIPPED_CLASSES for c in classes)
        if not (skipped or any(self._stack)):
            self.parts += [value or "" for name, value in attrs if name in self.SEEN_ATTRIBUTES]
        if tag not in self.VOID:
            self._stack.append(skipped)

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and self._stack:
            self._stack.pop()

    def handle_data(self, data: str) -> None:
        if not any(self._stack):
            self.parts.append(data)


# Words that stay as they are in Chinese: names, Kubernetes' and kube-scheduler's own terms, codes.
VERBATIM = {
    "clusterviz",
    "kube-scheduler",
    "Kubernetes",
    "kubectl",
    "Pending",
    "Running",
    "ContainerCreating",
    "Terminating",
    "NoSchedule",
    "PreferNoSchedule",
    "NoExecute",
    "tolerationSeconds",
    "Pod",
    "Node",
    "YAML",
    "CSV",
    "QR",
    "List-Watch",
    "nodeName",
    "nodeSelector",
    "sidecar",
    "overhead",
    "cordon",
    "DRA",
    "Esc",
    "ABC",
    "Deployment",
    "v1.34",
    "python",
    "scheduler_core",
    "explain",
    "my-cluster",
    "J",
    "P",
    "R",
    "F",
    "p0",
    "rv",  # resourceVersion
    "m",  # python -m
}


def english_left(html: str) -> list[str]:
    """The English words left on a page rendered in Chinese (beside VERBATIM's)."""
    parser = _VisibleText()
    parser.feed(html)
    text = re.sub(r"https?://\S+", " ", " ".join(parser.parts))
    words = re.findall(r"(?<![\w.])[A-Za-z](?:[\w.-]*\w)?", text)  # not the unit of "28s"
    return sorted({word for word in words if word not in VERBATIM and not re.fullmatch(r"node\d+|[\w-]+-\d+", word)})


def test_with_accept_language_zh_cn_the_pages_are_in_chinese(make_cluster: Any) -> None:
    browser = Client(**ZH)
    home = browser.get("/").content.decode()
    assert '<html lang="zh-hans">' in home
    assert "<h3>污点与容忍</h3>" in home and "开始上课" in home
    assert english_left(home) == []
    join = browser.get("/join").content.decode()
    assert english_left(join) == [] and "加入课堂" in join
    refused = browser.post("/join", {"code": "ZZZ999"}).content.decode()
    assert "code：未找到 &quot;ZZZ 999&quot;：没有课堂使用这个加入码" in refused
    cluster = make_cluster("class1", lesson="taints-noschedule")
    from clusterviz import access

    browser.get(access.edit_url(cluster))
    page = browser.get("/clusters/class1/").content.decode()
    assert english_left(page) == [], " ".join(english_left(page))
    assert "跟随链接" in page and "加入码" in page
    forbidden = Client(**ZH).get("/clusters/class1/?key=wrong").content.decode()
    assert english_left(forbidden) == ["class1"] and "这个编辑链接无效" in forbidden  # the cluster's name


def test_without_a_choice_the_pages_are_in_english() -> None:
    html = Client(HTTP_ACCEPT_LANGUAGE="fr-FR,fr").get("/").content.decode()
    assert '<html lang="en">' in html and "<h3>Taints and tolerations</h3>" in html


def test_the_language_switch_is_remembered(make_cluster: Any) -> None:
    browser = Client(HTTP_ACCEPT_LANGUAGE="en-US")
    response = browser.post("/i18n/setlang/", {"language": "zh-hans", "next": "/join"})
    assert response.status_code == 302 and response["Location"] == "/join"
    assert "加入课堂" in browser.get("/join").content.decode()  # the cookie wins over Accept-Language
    browser.post("/i18n/setlang/", {"language": "en", "next": "/"})
    assert "Join a class" in browser.get("/join").content.decode()
    # a language that is not offered changes nothing
    assert browser.post("/i18n/setlang/", {"language": "xx", "next": "/"}).status_code == 302
    assert "Join a class" in browser.get("/join").content.decode()


def test_the_script_catalogue_answers_in_the_language() -> None:
    script = Client(**ZH).get("/jsi18n/").content.decode()
    assert "\\u63ed\\u6653" in script or "揭晓" in script  # "reveal"
    assert "揭晓" not in Client().get("/jsi18n/").content.decode()


# --------------------------------------------------------------------------- lessons


def test_every_built_in_lesson_is_in_chinese() -> None:
    assert set(all_translations()["zh-hans"]) == set(all_lessons())


def _translated(name: str) -> str:
    return (ROOT / "clusterviz" / "lessons" / "zh-Hans" / f"{name}.yaml").read_text()


BAD = [
    (
        lambda text: text.replace("- say: 设置容忍：myapp01", "- say: 设置容忍，调度到 node01：myapp01"),
        "t.yaml:14: steps[4].say: gives the answer away: it names node01, where default/myapp01 goes",
    ),
    (lambda text: text.split("- say: 设置容忍")[0], "t.yaml:3: steps: has 4 steps; the lesson taints-noschedule has 7"),
    (
        lambda text: text.replace("  question: >-\n", "  questio: >-\n"),
        "t.yaml:16: steps[4].questio: Extra inputs are not permitted",
    ),
    (lambda text: text.replace("summary: NoSchedule", "summary: |\n  a\n  b\nx: NoSchedule"), "t.yaml:"),
]


@pytest.mark.parametrize(("edit", "error"), BAD)
def test_a_bad_translation_is_refused_at_its_line(edit: Any, error: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_translation(edit(_translated("taints-noschedule")), "t.yaml", get_lesson("taints-noschedule"))
    assert str(caught.value).startswith(error), str(caught.value)


def test_the_lesson_view_carries_chinese_only_as_far_as_it_may_be_seen() -> None:
    cluster = services.create_cluster("c1")
    load_lesson(cluster, "demo")
    reconcile(cluster)
    translation = all_translations()["zh-hans"]["demo"]
    after = translation.steps[0].after
    follower = lesson_view.lesson_view(cluster, presenter=False)
    assert follower is not None
    assert follower["i18n"]["zh-hans"]["title"] == translation.title
    assert follower["items"][0]["i18n"] == {"zh-hans": {"say": translation.steps[0].say}}
    predict = get_lesson("demo").steps[0].predict
    assert predict is not None
    prediction.perform(
        cluster, Pose(action="predict.pose", question=predict.question, pod=predict.pod, ask=predict.ask), None
    )
    play_step(cluster)
    reconcile(cluster)
    for presenter in (True, False):
        view = lesson_view.lesson_view(cluster, presenter=presenter)
        assert view is not None
        assert after not in json.dumps(view, ensure_ascii=False)  # not before the reveal, in no language
        assert view["items"][0]["i18n"]["zh-hans"]["question"] == translation.steps[0].question
    prediction.perform(cluster, Reveal(action="predict.reveal"), None)
    reconcile(cluster)
    view = lesson_view.lesson_view(cluster, presenter=False)
    assert view is not None and view["items"][0]["i18n"]["zh-hans"]["after"] == after


# --------------------------------------------------------------------------- the stream's refusals


def test_a_streams_language_is_the_switchs_then_the_browsers() -> None:
    from clusterviz.languages import language_of_scope

    def scope(**headers: str) -> dict[str, Any]:
        return {"headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]}

    assert language_of_scope(scope(accept_language="zh-CN,zh;q=0.9")) == "zh-hans"
    assert language_of_scope(scope(accept_language="fr, zh-TW;q=0.5")) == "zh-hans"  # the first offered
    assert language_of_scope(scope(accept_language="zh-CN", cookie="django_language=en")) == "en"
    assert language_of_scope(scope(cookie="django_language=zh-hans; sessionid=x")) == "zh-hans"
    assert language_of_scope(scope(cookie='bad"cookie', accept_language="de")) == "en"
    assert language_of_scope({}) == "en"


async def test_a_refusal_on_the_stream_is_in_the_viewers_language(make_cluster: Any, ws_connect: Any) -> None:
    from asgiref.sync import sync_to_async

    await sync_to_async(make_cluster)("class1", lesson="demo")
    chinese = await ws_connect("class1", headers=((b"accept-language", b"zh-CN,zh;q=0.9"),))
    english = await ws_connect("class1")
    for client, text in ((chinese, "当前没有可以揭晓的问题"), (english, "no question is open to reveal")):
        sent = await client.send({"action": "predict.reveal"})
        (reply,) = [m for m in await client.until(lambda m, sent=sent: m.get("id") == sent) if m.get("id") == sent]
        assert (reply["type"], reply["reason"], reply["message"]) == ("error", "Conflict", text)
