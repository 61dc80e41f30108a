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

The kinds release-1.32 lacks or that the scheduler reads beside them — resource.k8s.io/v1
(DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate; v1 is new in 1.34) and the
storage.k8s.io kinds of VolumeBinding — come from the 1.34 packages, given as two more arguments
(a type both releases have keeps its 1.32 text):

    pip download kubernetes==34.1.0 lightkube-models==1.34.0.8 --no-deps -d /tmp/k8s
    python -m clusterviz.kube_api.schema_build /tmp/k8s/kubernetes-32.0.1-py2.py3-none-any.whl \
        /tmp/k8s/lightkube_models-1.32.0.8-py3-none-any.whl \
        /tmp/k8s/kubernetes-34.1.0-py2.py3-none-any.whl /tmp/k8s/lightkube_models-1.34.0.8-py3-none-any.whl

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
    "LimitRange": "V1LimitRange",
    "ResourceQuota": "V1ResourceQuota",
}
# served kind → model class, from the release-1.34 packages
ROOTS_1_34 = {
    "DeviceClass": "V1DeviceClass",
    "ResourceSlice": "V1ResourceSlice",
    "ResourceClaim": "ResourceV1ResourceClaim",
    "ResourceClaimTemplate": "V1ResourceClaimTemplate",
    "StorageClass": "V1StorageClass",
    "CSIDriver": "V1CSIDriver",
    "CSINode": "V1CSINode",
    "CSIStorageCapacity": "V1CSIStorageCapacity",
    "PersistentVolume": "V1PersistentVolume",
}
# Types whose bare name another type has (a container's resources.claims[] is core/v1 ResourceClaim):
# kept under their package's name (openapi.py names the component after it; explain shows the last part).
RENAMED = {"ResourceV1ResourceClaim": ("resource.v1.ResourceClaim", "resource_v1", "ResourceClaim")}
PRIMITIVES = {"str": "string", "int": "integer", "bool": "boolean", "float": "number", "datetime": "Time"}
_REQUIRED = re.compile(r"Invalid value for `(\w+)`, must not be `None`")
_GROUP_PREFIXES = "Core|Apps|Events|Scheduling|Coordination|Policy|Autoscaling|Resource|Storage"
_VERSION_PREFIX = re.compile(rf"^({_GROUP_PREFIXES})?V\d+((alpha|beta)\d+)?")


def type_name(model: str) -> str:
    """`V1PodSpec` → `PodSpec`, `CoreV1Event` → `Event` (kubectl explain shows the bare name)."""
    if model in RENAMED:
        return RENAMED[model][0]
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
LIGHTKUBE_MODULES = (
    "core_v1",
    "meta_v1",
    "apps_v1",
    "policy_v1",
    "scheduling_v1",
    "coordination_v1",
    "autoscaling_v1",
    "resource_v1",
    "storage_v1",
)
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
    renamed = {(module, bare): name for name, module, bare in RENAMED.values()}
    with zipfile.ZipFile(wheel) as archive:
        for module in LIGHTKUBE_MODULES:
            path = f"{LIGHTKUBE_MODELS}{module}.py"
            if path not in archive.namelist():
                continue
            tree = ast.parse(archive.read(path).decode())
            for node in tree.body:
                if not isinstance(node, ast.ClassDef):
                    continue
                name = renamed.get((module, node.name), node.name)
                if name not in out:
                    out[name] = _lightkube_docs(ast.get_docstring(node, clean=False) or "")
    return out


def _model_sources(wheel: Path) -> dict[str, str]:
    """Model class name → its module's source."""
    with zipfile.ZipFile(wheel) as archive:
        sources = [
            archive.read(name).decode()
            for name in archive.namelist()
            if name.startswith(MODELS) and name.endswith(".py")
        ]
    by_class: dict[str, str] = {}
    for source in sources:
        match = re.search(r"^class (\w+)\(object\):", source, re.M)
        if match:
            by_class[match.group(1)] = source
    return by_class


def _collect(roots: dict[str, str], by_class: dict[str, str], types: dict[str, Any]) -> None:
    """Every type reachable from `roots` into `types` (a type already there is kept)."""
    pending = list(roots.values())
    while pending:
        model = pending.pop()
        name = type_name(model)
        if name in types:
            continue
        python_types, json_names, docs, required = _parse_model(by_class[model])
        fields: dict[str, Any] = {}
        for attribute, python_type in python_types.items():
            refs: list[str] = []
            entry: list[Any] = [_go_type(python_type, refs), docs.get(attribute, "")]
            if attribute in required:
                entry.append(1)
            fields[json_names[attribute]] = entry
            pending.extend(refs)
        types[name] = fields


def _describe(types: dict[str, Any], lightkube: Path, names: set[str], descriptions: dict[str, str]) -> None:
    """Type descriptions and the struct fields' missing ones, from lightkube's docstrings, for `names`."""
    docs = lightkube_descriptions(lightkube)
    for name in names:
        description, field_docs = docs.get(name, ("", {}))
        if description:
            descriptions[name] = description
        for json_name, entry in types[name].items():
            if not entry[1] and field_docs.get(json_name):
                entry[1] = field_docs[json_name]


def build(
    wheel: Path, lightkube: Path | None = None, wheel_1_34: Path | None = None, lightkube_1_34: Path | None = None
) -> dict[str, Any]:
    types: dict[str, Any] = {}
    descriptions: dict[str, str] = {}
    _collect(ROOTS, _model_sources(wheel), types)
    if lightkube is not None:
        _describe(types, lightkube, set(types), descriptions)
    roots = dict(ROOTS)
    source = f"kubernetes Python client {wheel.name} (kube-apiserver release-1.32 OpenAPI)" + (
        f", descriptions of types and struct fields from {lightkube.name}" if lightkube else ""
    )
    if wheel_1_34 is not None:
        before = set(types)
        _collect(ROOTS_1_34, _model_sources(wheel_1_34), types)
        if lightkube_1_34 is not None:
            _describe(types, lightkube_1_34, set(types) - before, descriptions)
        roots.update(ROOTS_1_34)
        source += f"; the resource.k8s.io and storage.k8s.io kinds from {wheel_1_34.name}" + (
            f" and {lightkube_1_34.name}" if lightkube_1_34 else ""
        )
    return {
        "source": source,
        "kinds": {kind: type_name(model) for kind, model in roots.items()},
        "types": dict(sorted(types.items())),
        "descriptions": dict(sorted(descriptions.items())),
    }


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 4:
        print(__doc__, file=sys.stderr)
        return 2
    schema = build(*(Path(arg) for arg in argv))
    OUTPUT.write_text(json.dumps(schema, separators=(",", ":"), sort_keys=False) + "\n")
    print(f"{OUTPUT}: {len(schema['types'])} types, {OUTPUT.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
