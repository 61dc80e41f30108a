"""Build-time generator of `kube_schema.json`: for each supported release (1.34 to 1.37), the fields
(JSON name, type, description, required) of every type reachable from the served kinds, read from the
model sources of that release's official `kubernetes` Python client (generated from kube-apiserver's
OpenAPI document of the release branch). Nothing here runs at request time.

The client's models leave out two kinds of description that `kubectl explain` prints: each type's
own ("Affinity is a group of affinity scheduling rules.") and those of the fields whose type is
another struct ("Describes node affinity scheduling rules for the pod."). Both are read from the
docstrings of the same release's `lightkube-models`.

    pip download --no-deps -d /tmp/k8s kubernetes==34.1.0 kubernetes==35.0.0 kubernetes==36.0.3 \
        kubernetes==37.0.3 lightkube-models==1.34.0.8 lightkube-models==1.35.0.8 \
        lightkube-models==1.36.3.8 lightkube-models==1.37.0.8
    python -m clusterviz.kube_api.schema_build /tmp/k8s

The file keeps release 1.34 whole and, for each later release, only the types and descriptions that
differ from 1.34's (`schema.py` puts a release back together). Releases up to 36 generate classic
models (`openapi_types`, getters with docstrings); release 37's client generates pydantic models
(`Field(description=...)`): both are read. The sources are parsed (ast), never imported.
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
    """The client's type notation (`list[Container]`, `dict(str, str)`, `dict[str, str]`; release 37:
    `List[…]`, `Dict[str, …]`) → Go-style (`[]Container`, `map[string]string`); refs collected."""
    if python_type.startswith(("list[", "List[")) and python_type.endswith("]"):
        return "[]" + _go_type(python_type[5:-1], refs)
    if python_type.startswith("dict(str, ") and python_type.endswith(")"):
        return "map[string]" + _go_type(python_type[10:-1], refs)
    if python_type.startswith(("Dict[str, ", "dict[str, ")) and python_type.endswith("]"):
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
    """(attribute → client type, attribute → JSON name, attribute → description, required attributes)."""
    tree = ast.parse(source)
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    types: dict[str, str] = {}
    names: dict[str, str] = {}
    docs: dict[str, str] = {}
    required = set(_REQUIRED.findall(source))  # classic models: the setter refuses None
    for node in cls.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(target, ast.Name) and node.value:
            if target.id == "openapi_types":
                types = ast.literal_eval(node.value)
            elif target.id == "attribute_map":
                names = ast.literal_eval(node.value)
            elif isinstance(node, ast.AnnAssign):  # a pydantic field (release 37)
                _pydantic_field(target.id, node, docs, required)
        elif isinstance(node, ast.AnnAssign) and isinstance(target, ast.Name) and not target.id.startswith("_"):
            required.add(target.id)  # `name: StrictStr` with no default at all
        elif isinstance(node, ast.FunctionDef) and any(
            isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list
        ):
            docs[node.name] = _description(ast.get_docstring(node, clean=False) or "")
    return types, names, docs, required


def _pydantic_field(attribute: str, node: ast.AnnAssign, docs: dict[str, str], required: set[str]) -> None:
    """`x: Optional[T] = Field(default=None, description="…")`: its description; required when it has no
    default (`x: T = Field(description="…")`)."""
    value = node.value
    keywords = {kw.arg: kw.value for kw in value.keywords} if isinstance(value, ast.Call) else {}
    description = keywords.get("description")
    if isinstance(description, ast.Constant) and isinstance(description.value, str):
        docs[attribute] = description.value
    if isinstance(value, ast.Call) and "default" not in keywords and "default_factory" not in keywords:
        required.add(attribute)


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
        match = re.search(r"^class (\w+)\((?:object|BaseModel)\):", source, re.M)
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


def build(wheel: Path, lightkube: Path | None = None) -> dict[str, Any]:
    """One release's schema: the served kinds, every type they reach, and the types' descriptions."""
    types: dict[str, Any] = {}
    descriptions: dict[str, str] = {}
    _collect(ROOTS, _model_sources(wheel), types)
    if lightkube is not None:
        _describe(types, lightkube, set(types), descriptions)
    source = f"{wheel.name}" + (f", descriptions of types and struct fields from {lightkube.name}" if lightkube else "")
    return {
        "source": source,
        "kinds": {kind: type_name(model) for kind, model in ROOTS.items()},
        "types": dict(sorted(types.items())),
        "descriptions": dict(sorted(descriptions.items())),
    }


# release minor → (client wheel, lightkube-models wheel) file name prefixes
RELEASES = {
    34: ("kubernetes-34.1.0", "lightkube_models-1.34.0.8"),
    35: ("kubernetes-35.0.0", "lightkube_models-1.35.0.8"),
    36: ("kubernetes-36.0.3", "lightkube_models-1.36.3.8"),
    37: ("kubernetes-37.0.3", "lightkube_models-1.37.0.8"),
}
BASE = min(RELEASES)


def _delta(base: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """What `other` changes of `base`: the fields added or changed per type (a new type whole), the
    fields and types removed, and the descriptions added, changed or removed."""
    types: dict[str, Any] = {}
    removed_fields: dict[str, list[str]] = {}
    for name, fields in other["types"].items():
        before = base["types"].get(name, {})
        changed = {field: entry for field, entry in fields.items() if before.get(field) != entry}
        if changed or name not in base["types"]:
            types[name] = changed
        gone = sorted(set(before) - set(fields))
        if gone:
            removed_fields[name] = gone
    before_descriptions = base["descriptions"]
    descriptions = {k: text for k, text in other["descriptions"].items() if before_descriptions.get(k) != text}
    return {
        "source": other["source"],
        "types": types,
        "removed_fields": removed_fields,
        "removed_types": sorted(set(base["types"]) - set(other["types"])),
        "descriptions": descriptions,
        "removed_descriptions": sorted(set(base["descriptions"]) - set(other["descriptions"])),
    }


def build_all(directory: Path) -> dict[str, Any]:
    """Every release in RELEASES, from the wheels in `directory`: 1.34 whole, the others as deltas."""
    schemas = {}
    for minor, (client, lightkube) in RELEASES.items():
        wheel = next(directory.glob(f"{client}-*.whl"))
        models = next(directory.glob(f"{lightkube}-*.whl"))
        schemas[minor] = build(wheel, models)
    base = schemas[BASE]
    return {
        "base": BASE,
        **base,
        "releases": {str(minor): _delta(base, schema) for minor, schema in schemas.items() if minor != BASE},
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print(__doc__, file=sys.stderr)
        return 2
    schema = build_all(Path(argv[0]))
    OUTPUT.write_text(json.dumps(schema, separators=(",", ":"), sort_keys=False) + "\n")
    changed = {minor: len(delta["types"]) for minor, delta in schema["releases"].items()}
    size = OUTPUT.stat().st_size // 1024
    print(f"{OUTPUT}: {len(schema['types'])} types in 1.{BASE}, changed later: {changed}, {size} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
