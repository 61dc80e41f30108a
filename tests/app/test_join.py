"""Joining a class with a code (`/join`), the presenter's join card, and a home page that lists only
this browser's clusters."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
import segno
from django.test import Client

from clusterviz import access, join_codes
from clusterviz.join_views import JOINED_KEY, NICKNAME_KEY
from clusterviz.models import Cluster

pytestmark = pytest.mark.django_db


def presenter_of(cluster: Cluster) -> Client:
    """A browser that opened the cluster's edit link (and so its presenter's page)."""
    browser = Client()
    browser.get(access.edit_url(cluster))
    return browser


def code_on_screen(presenter: Client, slug: str) -> str:
    html = presenter.get(f"/clusters/{slug}/").content.decode()
    match = re.search(r'<strong class="join-code">([A-Z0-9 ]+)</strong>', html)
    assert match, "the presenter's page shows no join code"
    return match.group(1)


def test_the_presenter_sees_a_code_and_the_qr_code_of_the_follower_link(make_cluster: Any) -> None:
    cluster = make_cluster("class1", lesson="demo")
    presenter = presenter_of(cluster)
    html = presenter.get("/clusters/class1/").content.decode()
    code = code_on_screen(presenter, "class1")
    assert re.fullmatch(r"[A-HJKMNP-Z2-9]{3} [A-HJKMNP-Z2-9]{3}", code)
    assert 'class="join-url">http://testserver/join</strong>' in html
    follower_url = "http://testserver/clusters/class1/?role=follower"
    assert f'<span class="join-follower-url">{follower_url}</span>' in html
    # the QR code is the follower link's: the same symbol segno makes of it
    expected = segno.make(follower_url, error="m", micro=False)
    svg = re.search(r"<svg.*?</svg>", html, re.S)
    assert svg and re.search(r' d="([^"]+)"', svg.group(0))[1] in expected.svg_inline(scale=1, border=2)
    # the code stays the class's across the presenter's visits
    assert code_on_screen(presenter, "class1") == code


def test_followers_and_strangers_see_no_join_card(make_cluster: Any) -> None:
    make_cluster("class1")
    html = Client().get("/clusters/class1/?role=follower").content.decode()
    assert "join-card" not in html and "join-dialog" not in html
    assert Cluster.objects.get(slug="class1").join_code == ""  # nobody who may write asked for one


@pytest.mark.parametrize("typed", ["exact", "lower", "spaced", "dashed"])
def test_a_student_joins_with_the_code_as_typed(make_cluster: Any, typed: str) -> None:
    cluster = make_cluster("class1")
    code = code_on_screen(presenter_of(cluster), "class1")
    text = {
        "exact": code,
        "lower": code.lower(),
        "spaced": f"  {code}  ",
        "dashed": code.replace(" ", "-"),
    }[typed]
    student = Client()
    response = student.post("/join", {"code": text, "nickname": " 张三 "})
    assert response.status_code == 302
    assert response["Location"] == "/clusters/class1/?role=follower"
    assert student.session[JOINED_KEY] == ["class1"]
    assert student.session[NICKNAME_KEY] == "张三"
    page = student.get(response["Location"]).content.decode()
    assert 'data-nickname="张三"' in page and 'data-can-write="false"' in page
    home = student.get("/").content.decode()
    assert 'href="/clusters/class1/?role=follower">class1</a> · joined' in home


def test_the_join_form_takes_the_code_from_the_address() -> None:
    html = Client().get("/join?code=ABC234").content.decode()
    assert 'name="code" value="ABC234"' in html and 'action="/join"' in html


def _refused(response: Any, status: int, message: str) -> None:
    assert response.status_code == status, response.content
    html = response.content.decode()
    found = re.search(r'<p class="error" role="alert" id="join-error">(.*?)</p>', html)
    assert found and found.group(1) == message, found and found.group(1)


BAD = [
    ("", "", 400, "code: Required value: type the join code on the presenter&#x27;s screen"),
    ("ABC", "", 400, "code: Invalid value: &quot;ABC&quot;: a join code is 6 letters and digits, like ABC 234"),
    ("ABC10O", "", 400, "code: Invalid value: &quot;ABC10O&quot;: a join code is 6 letters and digits, like ABC 234"),
    ("ZZZ999", "", 404, "code: Not found: &quot;ZZZ 999&quot;: no class has this join code (check it on the screen)"),
    ("LIVE", "x" * 500, 400, "nickname: Too long: must have at most 64 characters (got 500)"),
    (
        "LIVE",
        "<b>Ada</b>",
        400,
        "nickname: Invalid value: &quot;&lt;b&gt;Ada&lt;/b&gt;&quot;: must not contain &lt; or &gt;",
    ),
    ("LIVE", "Ada\x07", 400, "nickname: Invalid value: &quot;Ada\\u0007&quot;: must not contain control characters"),
]


@pytest.mark.parametrize(("code", "nickname", "status", "message"), BAD)
def test_bad_codes_and_nicknames_are_refused_and_change_nothing(
    make_cluster: Any, code: str, nickname: str, status: int, message: str
) -> None:
    cluster = make_cluster("class1")
    live = code_on_screen(presenter_of(cluster), "class1")
    student = Client()
    response = student.post("/join", {"code": live if code == "LIVE" else code, "nickname": nickname})
    _refused(response, status, message)
    assert JOINED_KEY not in student.session and NICKNAME_KEY not in student.session
    assert "class1" not in student.get("/").content.decode()


def test_an_expired_code_is_refused_and_the_presenter_gets_a_new_one(make_cluster: Any) -> None:
    cluster = make_cluster("class1")
    presenter = presenter_of(cluster)
    old = code_on_screen(presenter, "class1")
    Cluster.objects.filter(slug="class1").update(join_code_expires=time.time() - 1)
    _refused(
        Client().post("/join", {"code": old}),
        410,
        f"code: Expired: &quot;{old}&quot;: this join code has expired; ask for the new one",
    )
    new = code_on_screen(presenter, "class1")
    assert new != old
    assert Client().post("/join", {"code": new}).status_code == 302


def test_each_visit_of_the_presenter_extends_the_code(make_cluster: Any) -> None:
    cluster = make_cluster("class1")
    join_codes.issue(cluster, now=1000.0)
    assert cluster.join_code_expires == 1000.0 + join_codes.LIFETIME
    code = cluster.join_code
    assert join_codes.issue(cluster, now=1000.0 + join_codes.LIFETIME - 1) == code
    with pytest.raises(join_codes.InputError, match="Expired"):
        join_codes.find(code, now=1000.0 + 2 * join_codes.LIFETIME)


def test_an_expired_code_issued_again_finds_the_live_class(make_cluster: Any) -> None:
    old, live = make_cluster("old-class"), make_cluster("live-class")
    Cluster.objects.filter(pk=old.pk).update(join_code="ABC234", join_code_expires=time.time() - 10)
    Cluster.objects.filter(pk=live.pk).update(join_code="ABC234", join_code_expires=time.time() + 10)
    assert join_codes.find("abc 234").slug == "live-class"


def test_the_home_page_lists_only_this_browsers_clusters(make_cluster: Any) -> None:
    mine, theirs = make_cluster("mine"), make_cluster("theirs")
    me, them = presenter_of(mine), presenter_of(theirs)
    page = me.get("/").content.decode()
    assert 'href="/clusters/mine/"' in page and "theirs" not in page
    assert "mine" not in them.get("/").content.decode()
    assert "mine" not in Client().get("/").content.decode() and "theirs" not in Client().get("/").content.decode()
    # a cluster this browser created from the form is listed for it
    me.post("/clusters/new", {"slug": "made-here"})
    assert 'href="/clusters/made-here/"' in me.get("/").content.decode()
    # following a class by its link lists it as joined
    stranger = Client()
    stranger.get("/clusters/theirs/?role=follower")
    assert 'href="/clusters/theirs/?role=follower">theirs</a> · joined' in stranger.get("/").content.decode()


def test_the_catalog_groups_the_lessons_by_topic_and_starts_a_class() -> None:
    from clusterviz.lessons import TOPICS, all_lessons

    browser = Client()
    html = browser.get("/").content.decode()
    topics = re.findall(r'<section class="topic" data-topic="([^"]+)">', html)
    assert topics == [key for key in TOPICS if key in topics] and "taints-tolerations" in topics
    assert "<h3>Taints and tolerations</h3>" in html
    listed = re.findall(r'<li class="lesson-card" data-lesson="([^"]+)">', html)
    assert sorted(listed) == sorted(all_lessons())
    card = html[html.index('data-lesson="taints-noschedule"') :]
    assert "7 steps · 1 question" in card[: card.index("</li>")]
    slug = re.search(r'name="slug" value="(taints-noschedule-[0-9a-f]{6})"', card)
    assert slug
    response = browser.post("/clusters/new", {"slug": slug[1], "lesson": "taints-noschedule", "then": "present"})
    assert response["Location"] == f"/clusters/{slug[1]}/?present=1"
    page = browser.get(response["Location"]).content.decode()
    assert 'class="join-code"' in page  # the presenter's join code, at once
    alone = browser.post("/clusters/new", {"slug": "alone-1", "lesson": "nodename", "then": "alone"})
    assert alone["Location"] == "/clusters/alone-1/"
