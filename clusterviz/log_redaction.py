"""No credential in a log line: the owner key of a legacy kubeconfig's server path
(`/k8s/<slug>/key/<key>/…`) and of an edit link (`?key=…`) are replaced by `[redacted]` in every
log record, whichever logger writes it (Django's request log, daphne's and uvicorn's access logs).

Installed as the log record factory (settings.py), so that it holds for loggers and handlers that
other libraries configure themselves; a record's arguments keep their shape (uvicorn's access
formatter reads them as a tuple)."""

from __future__ import annotations

import logging
import re
from typing import Any

__all__ = ["REDACTED", "install", "redact"]

REDACTED = "[redacted]"
_KEY = re.compile(r"(/key/|[?&]key=|%2[Ff]key%2[Ff])[^/\s?&#\"'<>]+")
_installed = False


def redact(text: str) -> str:
    return _KEY.sub(lambda m: m.group(1) + REDACTED, text)


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, bytes):
        return redact(value.decode("utf-8", "replace"))
    return value


def _redact_record(record: logging.LogRecord) -> None:
    if isinstance(record.msg, str):
        record.msg = redact(record.msg)
    args = record.args
    if isinstance(args, dict):
        record.args = {k: _clean(v) for k, v in args.items()}
    elif isinstance(args, tuple):
        record.args = tuple(_clean(v) for v in args)
    if record.exc_info and not record.exc_text:  # a traceback's text is formatted once, here, redacted
        record.exc_text = redact(logging.Formatter().formatException(record.exc_info))


def install() -> None:
    """Wrap the current log record factory once (idempotent)."""
    global _installed
    if _installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        _redact_record(record)
        return record

    logging.setLogRecordFactory(factory)
    _installed = True
