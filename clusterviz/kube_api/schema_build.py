"""Build-time generator of `kube_schema.json`: the fields (JSON name, type, description, required)
of every type reachable from the served kinds, read from the model sources of the official
`kubernetes` Python client (the wheel pinned in requirements-dev.txt; its models are generated from
kube-apiserver's OpenAPI document of release-1.32). Nothing here runs at request time.

The client's models leave out two kinds of description that `kubectl explain` prints: each type's
own ("Affinity is a group of affinity scheduling rules.") and those of the fields whose type is
another struct ("Describes node affinity scheduling rules for the pod."). Both are read from the
docstrings of `lightkube-models` 1.32 (also generated from the release-1.32 OpenAPI document).

    pip download kubernetes==32.0.1 lightkube-models==1.32.0.8 --no-deps -d /tmp/k8s
    python -m clusterviz.kube_api.schema_build /tmp/k8s/kubernetes-32.0.1-py2.py3-none-any.whl \
        /tmp/k8s/lightkube_models-1.32.0.8-py3-none-any.whl

The sources are parsed (ast), never imported: neither package nor its dependencies is needed.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).with_name("kube_schema.json")
MODELS = "kubernetes/client/models/"
# served kind → the client's model class (plus the request/response kinds of the subresources)
ROOTS = {
    "Pod": "V1Pod",
    "Node": "V1Node",
    "Namespace": "V1Namespace",
    "Event": "CoreV1Event",
    "Deployment": "V1Deployment",
    "ReplicaSet": "V1ReplicaSet",
    "PriorityClass": "V1PriorityClass",
    "Lease": "V1Lease",
    "Scale": "V1Scale",
    "Eviction": "V1Eviction",
    "PodDisruptionBudget": "V1PodDisruptionBudget",
    "ControllerRevision": "V1ControllerRevision",
    "DeleteOptions": "V1DeleteOptions",
}
PRIMITIVES = {"str": "string", "int": "integer", "bool": "boolean", "float": "number", "datetime": "Time"}
_REQUIRED = re.compile(r"Invalid value for `(\w+)`, must not be `None`")
_VERSION_PREFIX = re.compile(r"^(Core|Apps|Events|Scheduling|Coordination|Policy|Autoscaling)?V\d+((alpha|beta)\d+)?")


def type_name(model: str) -> str:
    """`V1PodSpec` → `PodSpec`, `CoreV1Event` → `Event` (kubectl explain shows the bare name)."""
    return _VERSION_PREFIX.sub("", model)


def _go_type(python_type: str, refs: list[str]) -> str:
    """The client's type notation → Go-style (`[]Container`, `map[string]string`); refs collected."""
    if python_type.startswith("list[") and python_type.endswith("]"):
        return "[]" + _go_type(python_type[5:-1], refs)
    if python_type.startswith("dict(str, ") and python_type.endswith(")"):
        return "map[string]" + _go_type(python_type[10:-1], refs)
    if python_type in PRIMITIVES:
        return PRIMITIVES[python_type]
    if python_type == "object":
        return "Object"
    refs.append(python_type)
    return type_name(python_type)


def _description(docstring: str) -> str:
    """The paragraph between a getter's "Gets the x of this Y." line and its `:return:` line."""
    lines = [line.strip() for line in docstring.splitlines()]
    body = []
    for line in lines[1:]:
        if line.startswith(":return:"):
            break
        body.append(line.replace("# noqa: E501", "").strip())
    return " ".join(part for part in body if part).strip()


def _parse_model(source: str) -> tuple[dict[str, str], dict[str, str], dict[str, str], set[str]]:
    tree = ast.parse(source)
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    types: dict[str, str] = {}
    names: dict[str, str] = {}
    docs: dict[str, str] = {}
    for node in cls.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id == "openapi_types":
                types = ast.literal_eval(node.value)
            elif node.targets[0].id == "attribute_map":
                names = ast.literal_eval(node.value)
        elif isinstance(node, ast.FunctionDef) and any(
            isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list
        ):
            docs[node.name] = _description(ast.get_docstring(node, clean=False) or "")
    return types, names, docs, set(_REQUIRED.findall(source))


# lightkube's modules, searched in this order for a type's bare name
LIGHTKUBE_MODULES = ("core_v1", "meta_v1", "apps_v1", "policy_v1", "scheduling_v1", "coordination_v1", "autoscaling_v1")
LIGHTKUBE_MODELS = "lightkube/models/"
_PARAMETER = re.compile(r"^\* \*\*(\w+)\*\* ``[^`]*`` - (.*)$")


def _paragraphs(lines: list[str]) -> str:
    """Wrapped docstring lines → the description: lines joined by spaces, paragraphs by a blank line."""
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n\n".join(" ".join(p) for p in paragraphs if p)


def _lightkube_docs(docstring: str) -> tuple[str, dict[str, str]]:
    """(the type's description, field name → description) of a lightkube model's docstring."""
    lines = [line.strip() for line in docstring.splitlines()]
    head: list[str] = []
    fields: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_parameters = False
    for line in lines:
        if line == "**parameters**":
            in_parameters = True
            continue
        if not in_parameters:
            head.append(line)
            continue
        match = _PARAMETER.match(line)
        if match:
            current = fields.setdefault(match.group(1), [match.group(2)])
        elif current is not None and line:
            current.append(line)
    return _paragraphs(head), {name: " ".join(parts) for name, parts in fields.items()}


def lightkube_descriptions(wheel: Path) -> dict[str, tuple[str, dict[str, str]]]:
    """Bare type name → (description, field descriptions), from lightkube-models' docstrings."""
    out: dict[str, tuple[str, dict[str, str]]] = {}
    with zipfile.ZipFile(wheel) as archive:
        for module in LIGHTKUBE_MODULES:
            tree = ast.parse(archive.read(f"{LIGHTKUBE_MODELS}{module}.py").decode())
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and node.name not in out:
                    out[node.name] = _lightkube_docs(ast.get_docstring(node, clean=False) or "")
    return out


def build(wheel: Path, lightkube: Path | None = None) -> dict[str, Any]:
    with zipfile.ZipFile(wheel) as archive:
        sources = {
            name[len(MODELS) : -3]: archive.read(name).decode()
            for name in archive.namelist()
            if name.startswith(MODELS) and name.endswith(".py")
        }
    by_class: dict[str, str] = {}
    for module, source in sources.items():
        match = re.search(r"^class (\w+)\(object\):", source, re.M)
        if match:
            by_class[match.group(1)] = module
    types: dict[str, Any] = {}
    pending = list(ROOTS.values())
    while pending:
        model = pending.pop()
        name = type_name(model)
        if name in types:
            continue
        python_types, json_names, docs, required = _parse_model(sources[by_class[model]])
        fields: dict[str, Any] = {}
        for attribute, python_type in python_types.items():
            refs: list[str] = []
            entry: list[Any] = [_go_type(python_type, refs), docs.get(attribute, "")]
            if attribute in required:
                entry.append(1)
            fields[json_names[attribute]] = entry
            pending.extend(refs)
        types[name] = fields
    descriptions: dict[str, str] = {}
    if lightkube is not None:
        docs = lightkube_descriptions(lightkube)
        for name, fields in types.items():
            description, field_docs = docs.get(name, ("", {}))
            if description:
                descriptions[name] = description
            for json_name, entry in fields.items():
                if not entry[1] and field_docs.get(json_name):
                    entry[1] = field_docs[json_name]
    return {
        "source": f"kubernetes Python client {wheel.name} (kube-apiserver release-1.32 OpenAPI)"
        + (f", descriptions of types and struct fields from {lightkube.name}" if lightkube else ""),
        "kinds": {kind: type_name(model) for kind, model in ROOTS.items()},
        "types": dict(sorted(types.items())),
        "descriptions": dict(sorted(descriptions.items())),
    }


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print(__doc__, file=sys.stderr)
        return 2
    schema = build(Path(argv[0]), Path(argv[1]) if len(argv) == 2 else None)
    OUTPUT.write_text(json.dumps(schema, separators=(",", ":"), sort_keys=False) + "\n")
    print(f"{OUTPUT}: {len(schema['types'])} types, {OUTPUT.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
