"""JSON (what `kubectl get … -o json` writes), read object by object in bounded memory.

The input is decoded chunk by chunk; each object — a top-level object, or an item of a `kind: List`
— is parsed by the standard library's C scanner (`json.JSONDecoder.raw_decode`), so a 1 GB dump
never sits in memory whole, and the consumer drops unread fields before the next object is read.
A List's items printed as kubectl prints them are decoded ~256 KiB at a time by msgspec (1.5×
faster), falling back to the scanner, item by item, for anything msgspec reads otherwise or refuses;
a reader that drops `metadata.managedFields` (the snapshot loader) can have its text cut first.
Errors are located at line and column; a field's line (for validation errors) is found only when
needed, by composing that one object's text again as YAML (JSON is YAML).
"""

from __future__ import annotations

import codecs
import json
import re
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

import msgspec
import yaml

from .errors import InputError, LineOf
from .limits import MAX_OBJECT_BYTES, MAX_YAML_BYTES
from .yaml_reading import RawObject, line_of, size_error

__all__ = ["CHUNK_BYTES", "json_objects", "looks_like_json"]

#: Bytes read at a time.
CHUNK_BYTES = 4 * 1024 * 1024
#: Characters of a List's items decoded at once (see `_Reader.batch`).
BATCH_CHARS = 256 * 1024

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_FAST_DECODER = msgspec.json.Decoder()
_SYNTAX_CHECKER = msgspec.json.Decoder(msgspec.Raw)  # checks a value's syntax without building it
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def looks_like_json(head: bytes | str) -> bool:
    """Whether an input starts (after whitespace and a byte-order mark) with `{` or `[`."""
    if isinstance(head, bytes):
        head = head[:4096].decode("utf-8", "ignore")
    return head.lstrip("\ufeff \t\r\n")[:1] in ("{", "[")


class _Reader:
    def __init__(self, stream: BinaryIO, source: str, max_bytes: int, skip_managed_fields: bool = False) -> None:
        self.skip_managed_fields = skip_managed_fields
        self.stream = stream
        self.source = source
        self.max_bytes = max_bytes
        self.utf8 = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.keep = 0  # the buffer is kept from here (the start of the object being read)
        self.line = 1  # the line of buf[0] (the buffer always starts at a line's start)
        self.read = 0
        self.eof = False
        self.slow_until = 0  # items before this position are read one by one (see `batch`)
        self.failed: InputError | None = None  # what reading more gave (raised again if asked again)

    # --- the buffer ----------------------------------------------------------------------------

    def more(self) -> None:
        """Append the next chunk (dropping the lines before `keep`); at the end, set `eof`."""
        if self.failed is not None:
            raise self.failed
        if self.eof:
            return
        chunk = self.stream.read(CHUNK_BYTES)
        self.read += len(chunk)
        if self.read > self.max_bytes:
            self.failed = size_error(self.source, self.max_bytes)
            raise self.failed
        try:
            text = self.utf8.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            good = chunk[: max(exc.start, 0)].decode("utf-8", "ignore")
            buf, self.buf = self.buf, self.buf + good
            line, column = self.where(len(self.buf))
            self.buf = buf
            byte = self.read - len(chunk) + exc.start
            self.failed = InputError(f"{self.source}:{line}:{column}: not valid UTF-8 (byte {byte})")
            raise self.failed from None
        if not chunk:
            self.eof = True
        cut = self.buf.rfind("\n", 0, self.keep) + 1
        if cut > CHUNK_BYTES:
            self.line += self.buf.count("\n", 0, cut)
            self.buf = self.buf[cut:]
            self.pos -= cut
            self.keep -= cut
            self.slow_until -= cut
        self.buf += text

    def where(self, pos: int) -> tuple[int, int]:
        """Line and column (1-based) of a buffer position."""
        line = self.line + self.buf.count("\n", 0, pos)
        return line, pos - (self.buf.rfind("\n", 0, pos) + 1) + 1

    def error(self, pos: int, message: str) -> InputError:
        line, column = self.where(pos)
        return InputError(f"{self.source}:{line}:{column}: {message}")

    def at_end(self, pos: int) -> bool:
        return self.eof and not self.buf[pos:].strip()

    def truncated(self, pos: int) -> InputError:
        return self.error(len(self.buf.rstrip()), "unexpected end of input (a truncated or half-written file?)")

    def skip_space(self) -> str:
        """Skip whitespace; the next character ("" at the end of the input)."""
        while True:
            self.pos = _WHITESPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.eof:
                return ""
            self.more()

    def expect(self, chars: str, message: str) -> str:
        char = self.skip_space()
        if char and char in chars:
            self.pos += 1
            return char
        if not char:
            raise self.truncated(self.pos)
        raise self.error(self.pos, message)

    def value(self) -> tuple[Any, int, int]:
        """The JSON value at the current position, its start and end in the buffer."""
        self.skip_space()
        while True:
            start = self.pos
            try:
                value, end = _DECODER.raw_decode(self.buf, start)
            except json.JSONDecodeError as exc:
                if not self.eof and len(self.buf) - start <= MAX_OBJECT_BYTES:
                    self.more()  # the value may go on in the next chunk
                    continue
                if not self.eof:
                    raise self.error(start, f"object larger than {MAX_OBJECT_BYTES // 2**20} MiB") from None
                if self.at_end(exc.pos) or exc.msg.startswith("Unterminated string"):
                    raise self.truncated(exc.pos) from None
                raise self.error(exc.pos, exc.msg) from None
            except RecursionError:  # the C scanner's own guard (about 1,000 levels)
                raise self.error(start, "nesting too deep") from None
            except ValueError:  # Python's bound on integer digits (sys.get_int_max_str_digits)
                raise self.error(_long_integer_at(self.buf, start), "integer with too many digits") from None
            if end == len(self.buf) and not self.eof:  # a number may go on in the next chunk
                self.more()
                continue
            if end - start > MAX_OBJECT_BYTES:
                raise self.error(start, f"object larger than {MAX_OBJECT_BYTES // 2**20} MiB")
            self.pos = end
            return value, start, end

    def locator(self, start: int, end: int, copy: bool = False) -> LineOf:
        """Lines of fields of the object at buf[start:end], found (only when asked, before the next
        object is read — or at any time with `copy`) by composing its text as YAML."""
        if copy:
            first_line, text = self.where(start)[0], self.buf[start:end]
            return lambda loc: _field_line(text, first_line, 0, len(text), loc)
        base, buf = self.line, self.buf
        return lambda loc: _field_line(buf, base + buf.count("\n", 0, start), start, end, loc)

    def batch_locator(self, start: int, k: int) -> LineOf:
        """`locator` of the k-th item of a batch read from `start` (its place is found when asked)."""
        base, buf = self.line, self.buf

        def line(loc: tuple[int | str, ...]) -> int | None:
            item_start, item_end = _nth_value(buf, start, k)
            return _field_line(buf, base + buf.count("\n", 0, item_start), item_start, item_end, loc)

        return line

    def batch(self) -> tuple[list[dict[str, Any]], int] | None:
        """The items from the current position on, about `BATCH_CHARS` of them, decoded at once by
        msgspec (1.5× faster than item by item with the standard library), with the start
        of the first; None — for `items` to read them one by one as always, with the same result or
        error — when they are not printed as kubectl prints them (each `{` ending its line, its `}`
        alone on a line at the same indentation), do not decode as a JSON array (a syntax error, a
        lone surrogate, NaN, a number out of range…) or are not all objects with a kind.

        A JSON value ends where its own text says, so when the text up to a closing `}` decodes
        as `[` + text + `]`, its values are exactly the items the reader would read one by one."""
        start = self.pos
        if start < self.slow_until or self.buf[start : start + 2] != "{\n":
            return None
        line_start = self.buf.rfind("\n", 0, start) + 1
        closing = "\n" + self.buf[line_start:start] + "}"
        if closing.strip(" \t\n}"):  # the `{` does not start its line
            return None
        while True:
            start = self.pos  # (reading more may move the buffer)
            if start + BATCH_CHARS < len(self.buf):
                end = self.buf.find(closing, start + BATCH_CHARS)
            else:
                end = -1 if not self.eof else self.buf.rfind(closing, start)
            if end >= 0 or self.eof or len(self.buf) - start > BATCH_CHARS + MAX_OBJECT_BYTES:
                break
            try:
                self.more()
            except InputError:  # raised again, at the same place, when reading item by item needs more
                self.slow_until = sys.maxsize
                return None
        end = end + len(closing) if end >= 0 else -1
        if end < 0 or end - start > MAX_OBJECT_BYTES:
            self.slow_until = end if end >= 0 else len(self.buf)
            return None
        try:
            text: str | None = self.buf[start:end]
            if self.skip_managed_fields:
                text = _without_managed_fields(text, closing[1:-1])  # type: ignore[arg-type]
            values = None if text is None else _FAST_DECODER.decode("[" + text + "]")
        except (msgspec.DecodeError, RecursionError):
            values = None
        if values is None or not all(isinstance(value, dict) and "kind" in value for value in values):
            self.slow_until = end
            return None
        self.pos = end
        return values, start

    # --- documents --------------------------------------------------------------------------

    def objects(self) -> Iterator[RawObject]:
        self.more()
        if self.buf.startswith("\ufeff"):
            self.pos = 1
        while True:
            char = self.skip_space()
            if not char:
                return
            self.keep = self.pos
            if char == "{":
                yield from self.document()
            else:
                value, start, _ = self.value()
                kind = type(value).__name__
                raise self.error(start, f"expected a Kubernetes object (a mapping), got {kind}")

    def document(self) -> Iterator[RawObject]:
        """A top-level object: an object, or a List whose items are read one by one (items without
        a kind, as typed lists such as NodeList print them, wait for the list's kind)."""
        start = self.pos
        self.pos += 1
        header: dict[str, Any] = {}
        items_at: int | None = None
        waiting: list[tuple[dict[str, Any], LineOf, int]] = []
        if self.skip_space() == "}":
            self.pos += 1
        else:
            while True:
                if self.skip_space() != '"':
                    if not self.skip_space():
                        raise self.truncated(self.pos)
                    raise self.error(self.pos, "Expecting property name enclosed in double quotes")
                key, key_at, _ = self.value()
                self.expect(":", "Expecting ':' delimiter")
                if key == "items" and items_at is None and self.skip_space() == "[":
                    items_at = self.where(key_at)[0]
                    yield from self.items(waiting)
                else:
                    if items_at is None and self.pos - start > MAX_OBJECT_BYTES:
                        raise self.error(start, f"object larger than {MAX_OBJECT_BYTES // 2**20} MiB")
                    header[key], _, _ = self.value()
                if self.expect(",}", "Expecting ',' delimiter") == "}":
                    break
        if items_at is None:
            yield header, self.locator(start, self.pos), ()
            return
        kind = header.get("kind")
        if isinstance(kind, str) and kind and not kind.endswith("List"):
            raise InputError(f"{self.source}:{items_at}: items: a {kind} has no items (only a List has)")
        if kind is None:
            raise InputError(
                f"{self.source}:{self.where(self.pos)[0]}: kind: Required value (items without a List's kind)"
            )
        item_kind = kind[: -len("List")] if isinstance(kind, str) else ""
        for data, locate, index in waiting:
            if item_kind:
                data["kind"] = item_kind
            yield data, locate, ("items", index)

    def items(self, waiting: list[tuple[dict[str, Any], LineOf, int]]) -> Iterator[RawObject]:
        self.pos += 1  # [
        if self.skip_space() == "]":
            self.pos += 1
            return
        index = 0
        while True:
            self.skip_space()
            self.keep = self.pos
            batch = self.batch()
            if batch is not None:
                values, start = batch
                for k, data in enumerate(values):
                    yield data, self.batch_locator(start, k), ("items", index + k)
                index += len(values)
                if self.expect(",]", "Expecting ',' delimiter") == "]":
                    return
                continue
            data, start, end = self.value()
            if isinstance(data, dict) and "kind" not in data:
                waiting.append((data, self.locator(start, end, copy=True), index))
            else:
                yield data, self.locator(start, end), ("items", index)
            index += 1
            if self.expect(",]", "Expecting ',' delimiter") == "]":
                return


def _field_line(text: str, first: int, start: int, end: int, loc: tuple[int | str, ...]) -> int:
    """The line of the field at `loc` of the object at text[start:end], which starts on line `first`."""
    try:
        node = yaml.compose(text[start:end], Loader=_LOADER)
    except (yaml.YAMLError, RecursionError):
        return first
    relative = line_of(node, loc)
    return first + relative - 1 if relative else first


_LONG_INTEGER = re.compile(rf"-?[0-9]{{{sys.get_int_max_str_digits() + 1},}}")


def _long_integer_at(text: str, start: int) -> int:
    """Where the first integer longer than Python converts begins, from `start` (`start` if none)."""
    found = _LONG_INTEGER.search(text, start)
    return found.start() if found else start


def _nth_value(text: str, start: int, k: int) -> tuple[int, int]:
    """Start and end of the k-th (0-based) value of the comma-separated values from `start`."""
    for _ in range(k):
        _, start = _DECODER.raw_decode(text, start)
        start = _WHITESPACE.match(text, _WHITESPACE.match(text, start).end() + 1).end()  # type: ignore[union-attr]
    return start, _DECODER.raw_decode(text, start)[1]


def _without_managed_fields(items: str, indent: str) -> str | None:
    """A batch of items, kubectl-printed at `indent`, without the text of their
    `metadata.managedFields` (a third of a dump, and dropped by every reader of a snapshot); None
    — read the batch whole — when one is not plainly metadata's own field followed by another, or
    is not valid JSON: its syntax is still checked (without building it), so a broken one is
    refused, at its place, by the item-by-item reading."""
    keys = items[2 : len(items) - len(items[2:].lstrip(" "))]  # `{\n` then the first key's indentation
    inner = keys + keys[len(indent) :]  # metadata's keys, one step deeper
    field, close, key = f'\n{inner}"managedFields": [', f"\n{inner}],", f'\n{keys}"'
    kept: list[str] = []
    last = 0
    at = items.find(field)
    while at >= 0:
        stop = at + len(field) + 2 - len(close) if items.startswith("],", at + len(field)) else items.find(close, at)
        owner = items.rfind(key, 0, at)  # the item's key the field is under
        if not items.startswith(f'{key}metadata": {{', owner):  # another managedFields: kept
            at = items.find(field, at + len(field))
            continue
        if stop < 0:
            return None
        before = items[items.index("{", owner) : at].rstrip()  # metadata's fields before it
        before = before[:-1] if before.endswith(",") else before
        try:  # metadata's own field, and valid JSON
            if not isinstance(_FAST_DECODER.decode(before + "}"), dict):
                return None
            _SYNTAX_CHECKER.decode(items[at + len(field) - 1 : stop + len(close) - 1])
        except (msgspec.DecodeError, RecursionError):
            return None
        kept.append(items[last:at])
        last = stop + len(close)
        at = items.find(field, last)
    kept.append(items[last:])
    return "".join(kept)


def json_objects(
    stream: BinaryIO, source: str, max_bytes: int = MAX_YAML_BYTES, skip_managed_fields: bool = False
) -> Iterator[RawObject]:
    """Every object of a JSON input — a top-level object (several may follow one another), or an
    item of a `kind: List` — one at a time, with a locator of its fields' lines. With
    `skip_managed_fields`, items read in a batch may come without their `metadata.managedFields`
    (for a consumer that drops it anyway; a broken one is still refused)."""
    return _Reader(stream, source, max_bytes, skip_managed_fields).objects()
