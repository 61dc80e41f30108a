"""Join codes: the short code a presenter shows and students type at `/join` to follow a class.

A code is six characters of an alphabet without look-alikes (no 0/O, 1/I/L), shown as `ABC 234`
and read in any case, with or without spaces or dashes. It lives `LIFETIME` seconds after the
presenter last opened the cluster's page (each visit extends it, so a class never loses its code
mid-lesson); an expired code is refused, and the presenter's next visit issues a new one.
"""

from __future__ import annotations

import json
import re
import secrets
import time
import unicodedata

import segno
from django.utils.translation import gettext as _

from scheduler_core.api.loading import InputError

from .models import STAGING_PREFIX, Cluster

__all__ = [
    "ALPHABET",
    "LIFETIME",
    "MAX_NICKNAME",
    "CodeExpired",
    "CodeNotFound",
    "find",
    "issue",
    "nickname",
    "normalize",
    "qr_svg",
    "shown",
]

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
LENGTH = 6
LIFETIME = 12 * 3600.0
MAX_NICKNAME = 64  # as a prediction answer's name (clusterviz/prediction.py)
_SEPARATORS = re.compile(r"[\s\-·.]+")


class CodeNotFound(InputError):
    """No class has the code (404)."""


class CodeExpired(InputError):
    """The code's class exists but the code expired (410)."""


def shown(code: str) -> str:
    """The code as the presenter's screen prints it: two groups of three."""
    return f"{code[:3]} {code[3:]}"


def normalize(text: str) -> str:
    """The code a student typed, upper-cased, without spaces or dashes; a clear error if it cannot be one."""
    code = _SEPARATORS.sub("", text or "").upper()
    if not code:
        raise InputError(_("code: Required value: type the join code on the presenter's screen"))
    if len(code) != LENGTH or any(ch not in ALPHABET for ch in code):
        raise InputError(
            _("code: Invalid value: %(code)s: a join code is %(length)d letters and digits, like %(example)s")
            % {"code": _quoted(text), "length": LENGTH, "example": shown("ABC234")}
        )
    return code


def issue(cluster: Cluster, now: float | None = None) -> str:
    """The cluster's live code (a new one if it has none or it expired), valid `LIFETIME` from now."""
    now = time.time() if now is None else now
    code = cluster.join_code
    if not code or cluster.join_code_expires <= now:
        code = _unused_code(now)
    Cluster.objects.filter(pk=cluster.pk).update(join_code=code, join_code_expires=now + LIFETIME)
    cluster.join_code, cluster.join_code_expires = code, now + LIFETIME
    return code


def find(text: str, now: float | None = None) -> Cluster:
    """The cluster whose live code the student typed; InputError naming the code otherwise."""
    now = time.time() if now is None else now
    code = normalize(text)
    # an expired code may have been issued again to another class: the live one wins
    holders = Cluster.objects.filter(join_code=code).exclude(slug__startswith=STAGING_PREFIX)
    cluster = holders.order_by("-join_code_expires").first()
    if cluster is None:
        message = _('code: Not found: "%(code)s": no class has this join code (check it on the screen)')
        raise CodeNotFound(message % {"code": shown(code)})
    if cluster.join_code_expires <= now:
        raise CodeExpired(
            _('code: Expired: "%(code)s": this join code has expired; ask for the new one') % {"code": shown(code)}
        )
    return cluster


def nickname(text: str) -> str:
    """A student's nickname for the tally: at most MAX_NICKNAME characters of text (no markup, no
    control characters); "" when none was given."""
    name = unicodedata.normalize("NFC", (text or "").strip())
    if len(name) > MAX_NICKNAME:
        raise InputError(
            _("nickname: Too long: must have at most %(limit)d characters (got %(length)d)")
            % {"limit": MAX_NICKNAME, "length": len(name)}
        )
    if any(ch in "<>" for ch in name):
        raise InputError(_("nickname: Invalid value: %(name)s: must not contain < or >") % {"name": _quoted(name)})
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in name):
        raise InputError(
            _("nickname: Invalid value: %(name)s: must not contain control characters") % {"name": _quoted(name)}
        )
    return name


def qr_svg(url: str) -> str:
    """The follower link as an inline SVG QR code (segno; error correction M, scalable)."""
    qr = segno.make(url, error="m", micro=False)
    return qr.svg_inline(scale=1, border=2, omitsize=True, svgclass="join-qr-code", lineclass=None)


def _unused_code(now: float) -> str:
    while True:
        code = "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))
        if not Cluster.objects.filter(join_code=code, join_code_expires__gt=now).exists():
            return code


def _quoted(text: str) -> str:
    short = text if len(text) <= 40 else text[:40] + "…"
    return json.dumps(short, ensure_ascii=False)
