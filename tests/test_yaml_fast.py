"""The YAML reader's C fast path gives what the exact reader gives: the same values (YAML 1.1 typing),
the same lines, and on anything it does not read (anchors, tags, duplicate keys, syntax errors…)
the exact reader's answer, objects already given included."""

from __future__ import annotations

import io
import random
from typing import Any

import pytest
import yaml

from scheduler_core.api import yaml_reading
from scheduler_core.api.errors import InputError
from scheduler_core.api.loading import _plan_of, load_cluster
from scheduler_core.api.yaml_reading import Plan, RawObject, yaml_objects
from scheduler_core.synthetic import SnapshotSpec, dump_yaml, generate_objects
from tests.tools import missing_tool


@pytest.fixture(autouse=True)
def fast_path_built() -> None:
    if yaml_reading._yaml_fast is None:
        missing_tool("the YAML fast path is not built (python -m scheduler_core.api.build_yaml_fast)")
    assert yaml_reading._RESOLVED_FIRST is not None and yaml_reading._KNOWN_RULES


def keep_all(kind: str) -> Plan:
    return Plan()


def fast(text: str, plan_of: Any = _plan_of) -> list[RawObject]:
    return list(yaml_reading._fast_objects(text, "f.yaml", plan_of))


def exact(text: str, plan_of: Any = _plan_of) -> list[RawObject]:
    return list(yaml_reading._exact_objects(text, "f.yaml", plan_of))


def outcome(read: Any, text: str, plan_of: Any = _plan_of) -> Any:
    """The objects and their paths, or the error's message."""
    try:
        return [(data, prefix) for data, _, prefix in read(text, "f.yaml", plan_of)]
    except InputError as exc:
        return str(exc)


def same_outcome(text: str, plan_of: Any = _plan_of) -> Any:
    """`yaml_objects` (fast path, falling back) answers as the exact reader does."""
    answer = outcome(yaml_objects, text, plan_of)
    assert answer == outcome(yaml_reading._exact_objects, text, plan_of)
    return answer


def test_a_synthetic_dump_reads_the_same_without_falling_back() -> None:
    out = io.StringIO()
    dump_yaml(generate_objects(SnapshotSpec(nodes=6, pods=30, seed=3)), out)
    text = out.getvalue()
    quick, slow = fast(text), exact(text)
    assert [(d, p) for d, _, p in quick] == [(d, p) for d, _, p in slow]
    assert len(quick) == len(slow) > 36  # nodes, pods and the namespaces, classes… they use
    pod = next(d for d, _, _ in quick if d["kind"] == "Pod")
    assert "managedFields" not in pod["metadata"] and "env" not in pod["spec"]["containers"][0]
    for (_, fast_lines, _), (_, exact_lines, _) in zip(quick, slow, strict=True):
        for loc in [("metadata", "name"), ("spec",), ("status", "allocatable", "cpu"), ("nope",)]:
            assert fast_lines(loc) == exact_lines(loc)


_SPELLINGS = """
0 00 07 08 010 0o17 0x1F 0X1F 0xg 0b101 0b2 1_000 1__0 _1 1_ 1:30 190:20:30 1:60 1:5:7.5 -1:30
1.5 1. .5 ._ 1.2.3 10.0.0.1 1e3 1e+3 1.0e+3 1.0E-3 1.0e3 .inf -.inf +.INF .NaN .nan .NAN .Nan
+1 -1 +0 -0 +012 -0x1F 123456789012345678 1234567890123456789 12345678901234567890123
yes Yes YES yEs no No NO y Y n N on On ON off Off OFF true True TRUE tRUE false False FALSE
null Null NULL nULL ~ ~x nulls yess truex offf falsee online nothing f t o
2024-01-01 2024-01-01T00:00:00Z 2001-12-14t21:59:43.10-05:00 6b1e4f0a-2c3d 1f3a 12e 1.e5 9:9
== <<x a b.c Ärger été 1é x1 -x +x .x -- ++ -.5 +.5
"""
PLAIN_SCALARS = _SPELLINGS.split()


def plain_document(values: list[str]) -> str:
    lines = ["kind: List", "items:", "- kind: Thing", "  values:"]
    lines += [f"    k{i}: {value}" for i, value in enumerate(values)]
    lines += ["  items:", *(f"  - {value}" for value in values)]
    return "\n".join(lines) + "\n"


def test_plain_scalars_are_typed_as_yaml_1_1() -> None:
    """Every spelling the resolver's shortcuts in C could get wrong: the exact reader's value and type."""
    text = plain_document(PLAIN_SCALARS)
    (quick, _, _), *_ = fast(text, keep_all)
    (slow, _, _), *_ = exact(text, keep_all)
    typed = [(type(v), v) for v in quick["values"].values()]
    assert typed == [(type(v), v) for v in slow["values"].values()] == [(type(v), v) for v in quick["items"]]
    values = dict(zip(PLAIN_SCALARS, quick["values"].values(), strict=True))
    assert values["0x1F"] == 31 and values["010"] == 8 and values["1:30"] == 90 and values["1_000"] == 1000
    assert values["yes"] is True and values["OFF"] is False and values["~"] is None and values["tRUE"] == "tRUE"
    assert values["2024-01-01"] == "2024-01-01" and values["1e3"] == "1e3" and values["1.0e+3"] == 1000.0
    assert values["1234567890123456789"] == 1234567890123456789 and values["10.0.0.1"] == "10.0.0.1"


def test_random_plain_scalars_are_typed_as_yaml_1_1() -> None:
    """Random spellings over the characters the int, float, bool and null patterns use."""
    rng = random.Random(11)
    alphabet = "0123456789_.:eE+-xbBoO" + "yesnotruefalsnul" + "YNTFO~abcf"
    values = []
    while len(values) < 4000:
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
        try:  # a valid plain scalar, as a value and as an item (not `a: b`, `- x`…)
            events = [e for e in yaml.parse(f"k: {value}\nl:\n- {value}\n") if isinstance(e, yaml.ScalarEvent)]
        except yaml.YAMLError:
            continue
        if [(e.value, e.style) for e in events[1::2]] == [(value, None)] * 2:
            values.append(value)
    text = plain_document(values)
    (quick, _, _), *_ = fast(text, keep_all)
    (slow, _, _), *_ = exact(text, keep_all)
    assert [(type(v), v) for v in quick["values"].values()] == [(type(v), v) for v in slow["values"].values()]
    assert [(type(v), v) for v in quick["values"].values()] != [(str, v) for v in values]  # some are typed


@pytest.mark.parametrize(
    "item",
    [
        "- kind: Node\n  metadata: {name: &n a, labels: {x: *n}}\n",  # anchor and alias
        "- kind: Node\n  metadata: {name: a, labels: {<<: {x: y}}}\n",  # merge key
        "- kind: Node\n  metadata: {name: !!str 5}\n",  # explicit tag
        "- kind: Node\n  metadata: {name: a, name: b}\n",  # duplicate key
        "- kind: Node\n  metadata: {name: a}\n  metadata: {name: b}\n",
        "- kind: Node\n  metadata: {managedFields: [], managedFields: []}\n",  # a skipped key twice
        "- kind: Node\n  metadata: {managedFields: [{a: 1, a: 2}], name: a}\n",  # inside a skipped field
        "- kind: Node\n  metadata: {managedFields: [&x {a: 1}], name: *x}\n",  # an anchor in a skipped field
        "- kind: Node\n  metadata: {name: a}\n  status: {capacity: {pods: 1" + "0" * 4001 + "}}\n",
        "- kind: Node\n  metadata: {name: a}\n  spec: {? [a]: b}\n",  # a key that is not a scalar
        "- kind: Node\n  metadata: {name: a}\n  spec: {x: <<}\n",  # `<<` as a value
        "- kind: Node\n  metadata: {name: a\n",  # syntax error
        "- kind: Node\n  metadata: {name: a}\n  spec: {x: \x07}\n",  # a character YAML does not allow
        "- kind: Node\n  metadata: {name: a}\n  spec: " + "[" * 99 + "]" * 99 + "\n",  # nesting at the limit
        "- kind: Node\n  metadata: {name: a}\n  spec: " + "[" * 101 + "]" * 101 + "\n",  # beyond it
        "- 5\n",  # an item that is not a mapping
        "- kind: 5\n  metadata: {name: a}\n",
        "- kind: Node\n  metadata: {name: a}\n  spec: {x: =}\n",
    ],
)
def test_what_the_fast_path_does_not_read_is_read_exactly(item: str) -> None:
    """After two ordinary objects (given by the fast path), the exact reader's answer, value or error."""
    ordinary = "- kind: Node\n  metadata: {name: n0, managedFields: [{manager: m}]}\n"
    text = "apiVersion: v1\nitems:\n" + ordinary + ordinary.replace("n0", "n1") + item + "kind: List\n"
    same_outcome(text)


def test_a_duplicate_key_inside_a_skipped_field_is_not_read() -> None:
    """managedFields (like every field the scheduler never reads) is passed over unread: only its
    syntax, anchors and size count, so a duplicate key inside it is not refused; a second
    managedFields key, in a List's item or in an object of its own, is."""
    inside = "kind: Node\nmetadata:\n  name: a\n  managedFields:\n  - {manager: m, manager: n}\n"
    assert same_outcome(inside) == [({"kind": "Node", "metadata": {"name": "a"}}, ())]
    assert load_cluster(inside, "f.yaml").nodes[0].name == "a"
    twice = "kind: Node\nmetadata:\n  name: a\n  managedFields: []\n  managedFields: []\n"
    assert same_outcome(twice) == "f.yaml:5:3: duplicate key 'managedFields'"
    listed = "kind: List\nitems:\n- " + twice.replace("\n", "\n  ").rstrip() + "\n"
    assert same_outcome(listed) == "f.yaml:7:5: duplicate key 'managedFields'"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "---\n",
        "--- 5\n",
        "kind: Node\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n",
        "kind: NodeList\nitems:\n- metadata: {name: a}\n- metadata: {name: b}\n",  # items take the list's kind
        "apiVersion: v1\nitems:\n- kind: Node\n  metadata: {name: a}\n",  # a List cut short
        "kind: Pod\nitems: []\n",
        "kind: List\nitems: []\nitems: []\n",
        "kind: List\nitems: {}\n",
        "kind: List\nitems: {a: 1}\n",
        "&a kind: List\n",
        "kind: List\nmetadata: {resourceVersion: ''}\nitems:\n- kind: Secret\n  data: {a: b}\n",
        "\ufeffkind: Node\nmetadata: {name: é}\n",
    ],
)
def test_documents_and_lists_read_as_the_exact_reader_reads_them(text: str) -> None:
    same_outcome(text)
    same_outcome(text, keep_all)


def test_bytes_are_read_as_their_text() -> None:
    text = "kind: Node\nmetadata: {name: é, labels: {a: yes}}\n"
    assert (
        outcome(yaml_objects, text.encode())
        == outcome(yaml_objects, text)
        == outcome(yaml_reading._exact_objects, text)
    )


def test_an_error_in_a_dump_given_as_bytes_names_its_line() -> None:
    """ASCII bytes are read without being decoded; the text is decoded only to find an error's line."""
    text = (
        "kind: List\nitems:\n- kind: Node\n  metadata: {name: a}\n- kind: Pod\n  metadata: {name: p}\n"
        "  spec:\n    containers:\n    - name: c\n      resources:\n        requests: {cpu: 1x}\n"
    )
    message = r"^f\.yaml:11: items\[1\]\.spec\.containers\[0\]\.resources\.requests\.cpu: .*1x"
    for given in (text, text.encode()):
        with pytest.raises(InputError, match=message):
            load_cluster(given, "f.yaml")


MUTATION_PIECES = (":", "-", " ", "\n", "&a", "*a", "!!str", "'", '"', "{", "}", "[", "]", ",", "#", "|", ">",
                   "?", "\t", "\x00", "é", "\ufeff", "<<", "%YAML 1.1\n", "---\n", "...\n", "0x1F", "yes", "~",
                   "1e3", "\\", "\r")  # fmt: skip


def mutated(text: str, rng: random.Random) -> str:
    """`text` with one to four random edits: a piece inserted, a span cut, the end cut, a line
    repeated elsewhere, a line re-indented."""
    for _ in range(rng.randint(1, 4)):
        at, edit = rng.randrange(len(text) + 1), rng.random()
        if edit < 0.3:
            text = text[:at] + rng.choice(MUTATION_PIECES) + text[at:]
        elif edit < 0.5:
            text = text[:at] + text[at + rng.randint(1, 40) :]
        elif edit < 0.6:
            text = text[:at]
        else:
            lines = text.split("\n")
            line = rng.randrange(len(lines))
            if edit < 0.8:
                lines.insert(line, lines[rng.randrange(len(lines))])
            else:
                lines[line] = " " * rng.randint(0, 6) + lines[line].lstrip()
            text = "\n".join(lines)
    return text


@pytest.mark.parametrize("seed", range(4))
def test_mangled_dumps_read_as_the_exact_reader_reads_them(seed: int) -> None:
    """Random edits of a real-looking dump (a fuzzer over the C reader: 3,000 such inputs agreed when
    it was written): text and bytes give the exact reader's objects or its located error."""
    out = io.StringIO()
    dump_yaml(generate_objects(SnapshotSpec(nodes=3, pods=8, seed=5)), out)
    rng = random.Random(seed)
    for _ in range(40):
        text = mutated(out.getvalue(), rng)
        expected = outcome(yaml_reading._exact_objects, text)
        assert outcome(yaml_objects, text) == expected
        assert outcome(yaml_objects, text.encode("utf-8", "surrogatepass")) == expected
