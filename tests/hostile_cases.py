"""The hostile documents: one catalogue for tests/app/test_hostile.py and bench/refusals.py.

Each case is a document that every path taking input must refuse with a clear, located error (its
`pattern`), and the heaviest valid pod (`pod_at_the_limits`). Pure: no Django, no pytest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scheduler_core.api import limits

# --------------------------------------------------------------------------- builders


def pod(spec: str = "", meta: str = "", container: str = "", name: str = "web", cpu: str = "100m") -> str:
    """A Pod with extra lines (already indented) in metadata, spec and its container."""
    return (
        "apiVersion: v1\nkind: Pod\nmetadata:\n"
        f"  name: {name}\n{meta}"
        f"spec:\n{spec}"
        "  containers:\n  - name: c\n    image: nginx\n"
        f"{container}"
        f"    resources:\n      requests:\n        cpu: {cpu}\n"
    )


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first occurrence of `needle`."""
    return text[: text.index(needle)].count("\n") + 1


def flow(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def billion_laughs() -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


def too_many(n: int, limit: int) -> str:
    return re.escape(f"Too many: {n}: must have at most {limit} items") + "$"


EXPR = "{key: zone, operator: In, values: [a]}"
SELECTOR_EXPR = "{key: app, operator: In, values: [a]}"


@dataclass(frozen=True)
class Hostile:
    """One hostile document. `pattern` is a regex with `SRC` standing for the source name; `paths`
    are where it applies: create (HTTP/WS), explain (HTTP/WS), import, cli (as the --pod file)."""

    id: str
    text: str
    pattern: str
    paths: frozenset[str] = frozenset({"create", "explain", "import", "cli"})

    def regex(self, source: str) -> str:
        return self.pattern.replace("SRC", re.escape(source))


ALL = frozenset({"create", "explain", "import", "cli"})
ADMISSION = frozenset({"create", "import"})  # the API server's own checks (names, NUL): not the CLI's
NOT_A_POD = frozenset({"create", "import"})


def _cases() -> list[Hostile]:
    cases: list[Hostile] = []

    def add(id: str, text: str, pattern: str, paths: frozenset[str] = ALL) -> None:
        cases.append(Hostile(id, text, pattern, paths))

    # --- YAML itself
    add("alias-bomb", billion_laughs(), r"^SRC:6:\d+: excessive aliasing: aliases expand to more than 100000 nodes$")
    refs = "a: &a x\nb: [" + ", ".join(["*a"] * (limits.MAX_ALIAS_REFERENCES + 1)) + "]\n"
    add("alias-references", refs, r"^SRC:2:\d+: too many alias references \(limit 10000\)$")
    add("deep-maps", "spec: " + "{a: " * 300 + "1" + "}" * 300 + "\n", r"^SRC:1:\d+: nesting deeper than 100 levels$")
    add("deep-lists", "a: " + "[" * 50_000 + "]" * 50_000 + "\n", r"^SRC:1:\d+: nesting deeper than 100 levels$")
    many = "a: [" + ",".join(["1"] * limits.MAX_YAML_NODES) + "]\n"  # + the map, its key: one over
    add("too-many-yaml-nodes", many, r"^SRC:1:\d+: more than 100000 YAML nodes \(values, lists and maps\)$")
    add(
        "tab-indentation",
        "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: web\n",
        r"^SRC:4:1: found character '\\t' that cannot start any token$",
    )
    text = pod(meta="  name: api\n")
    add("duplicate-key", text, r"^SRC:5:3: duplicate key 'name'$")
    add("huge-integer", pod(spec="  priority: " + "9" * 5000 + "\n"), r"^SRC:6:13: integer with more than 4000 digits$")
    add("control-character", pod().replace("nginx", "ngi\x07nx"), r"^SRC:8:\d+: unacceptable character #x0007")
    add("python-tag", pod().replace("nginx", "!!python/object/apply:os.system [id]"), r"^SRC:8:\d+: could not")

    # --- wrong kinds and types
    add("kind-cronjob", pod().replace("kind: Pod", "kind: CronJob"), r'^SRC:2: kind: unsupported kind "CronJob"')
    add("kind-list-value", pod().replace("kind: Pod", "kind: [Pod]"), r"^SRC:2: kind: unsupported kind")
    add("kind-number", pod().replace("kind: Pod", "kind: 5"), r'^SRC:2: kind: unsupported kind "5"')
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: [1]\n"
    add("spec-is-a-list", text, r'^SRC:4: spec: Invalid value: "\[1\]": must be an object$')
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: abc}\n"
    add("containers-is-a-string", text, r'^SRC:4: spec\.containers: Invalid value: "abc": must be a list$')
    add(
        "priority-word",
        pod(spec="  priority: high\n"),
        r'^SRC:6: spec\.priority: Invalid value: "high": must be an int',
    )
    add(
        "priority-1e100", pod(spec="  priority: 1e100\n"), r'^SRC:6: spec\.priority: Invalid value: "1e100": must be an'
    )
    add(
        "priority-float",
        pod(spec="  priority: 1.5\n"),
        r'^SRC:6: spec\.priority: Invalid value: "1\.5": must be an int',
    )
    add(
        "priority-over-int32",
        pod(spec="  priority: 99999999999\n"),
        r'^SRC:6: spec\.priority: Invalid value: "99999999999": must be less than or equal to 2147483647$',
    )
    add(
        "tolerationSeconds-over-int64",
        pod(spec="  tolerations: [{key: a, operator: Exists, tolerationSeconds: 99999999999999999999}]\n"),
        r"^SRC:6: spec\.tolerations\[0\]\.tolerationSeconds: Invalid value: \"99999999999999999999\": "
        r"must be less than or equal to 9223372036854775807$",
    )
    add("labels-is-a-list", pod(meta="  labels: [a]\n"), r"^SRC:5: metadata\.labels: ", ALL - {"explain", "cli"})

    # --- absurd quantities
    cpu = r"^SRC:11: spec\.containers\[0\]\.resources\.requests"
    add("cpu-negative", pod(cpu='"-1"'), cpu + r'\[cpu\]: Invalid value: "-1": must be greater than or equal to 0$')
    add("cpu-nan", pod(cpu=".nan"), cpu + r"\.cpu: nan is not a valid quantity$")
    add("cpu-NaN-string", pod(cpu="NaN"), cpu + r'\.cpu: "NaN" is not a valid quantity$')
    add("cpu-inf", pod(cpu=".inf"), cpu + r"\.cpu: inf is not a valid quantity$")
    add("cpu-Infinity", pod(cpu="Infinity"), cpu + r'\.cpu: "Infinity" is not a valid quantity$')
    add(
        "cpu-huge-digit-string",
        pod(cpu='"' + "9" * 5000 + '"'),
        cpu + r'\.cpu: "9{64}…" is not a valid quantity: must be no more than 100 characters$',
    )
    text = pod(spec="  overhead: {cpu: '-2'}\n")
    add(
        "overhead-negative",
        text,
        r'^SRC:6: spec\.overhead\.limits\[cpu\]: Invalid value: "-2": must be greater than or equal to 0$',
    )
    text = pod(spec="  resources: {limits: {memory: '-1Gi'}}\n")
    add(
        "pod-resources-negative",
        text,
        r'^SRC:6: spec\.resources\.limits\[memory\]: Invalid value: "-1Gi": must be greater than or equal to 0$',
    )
    text = "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus:\n  allocatable: {cpu: '-1', pods: '110'}\n"
    add(
        "node-allocatable-negative",
        text,
        r'^SRC:5: status\.allocatable\.cpu: Invalid value: "-1": must be greater than or equal to 0$',
        NOT_A_POD,
    )

    # --- thousands of things
    tolerations = flow([f"{{key: k{i}, operator: Exists}}" for i in range(limits.MAX_TOLERATIONS + 1)])
    add(
        "tolerations",
        pod(spec=f"  tolerations: {tolerations}\n"),
        r"^SRC:6: spec\.tolerations: " + too_many(1001, 1000),
    )
    terms = flow([f"{{matchExpressions: [{EXPR}]}}"] * (limits.MAX_SELECTOR_TERMS + 1))
    affinity = (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        f"        nodeSelectorTerms: {terms}\n"
    )
    add(
        "nodeSelectorTerms",
        pod(spec=affinity),
        r"^SRC:9: spec\.affinity\.nodeAffinity\.requiredDuringSchedulingIgnoredDuringExecution\.nodeSelectorTerms: "
        + too_many(101, 100),
    )
    exprs = flow([EXPR] * (limits.MAX_MATCH_EXPRESSIONS + 1))
    affinity = (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        f"        nodeSelectorTerms:\n        - matchExpressions: {exprs}\n"
    )
    add(
        "matchExpressions",
        pod(spec=affinity),
        r"^SRC:10: spec\.affinity\.nodeAffinity\.requiredDuringSchedulingIgnoredDuringExecution\."
        r"nodeSelectorTerms\[0\]\.matchExpressions: " + too_many(101, 100),
    )
    values = flow([f"v{i}" for i in range(limits.MAX_SELECTOR_VALUES + 1)])
    affinity = (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        f"          - {{key: zone, operator: In, values: {values}}}\n"
    )
    add(
        "selector-values",
        pod(spec=affinity),
        r"^SRC:11: spec\.affinity\..*\.matchExpressions\[0\]\.values: " + too_many(1001, 1000),
    )
    preferred = flow([f"{{weight: 1, preference: {{matchExpressions: [{EXPR}]}}}}"] * 101)
    affinity = f"  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution: {preferred}\n"
    add(
        "preferred-terms",
        pod(spec=affinity),
        r"^SRC:8: spec\.affinity\.nodeAffinity\.preferredDuringSchedulingIgnoredDuringExecution: " + too_many(101, 100),
    )
    pod_terms = flow([f"{{topologyKey: zone, labelSelector: {{matchExpressions: [{SELECTOR_EXPR}]}}}}"] * 101)
    affinity = f"  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: {pod_terms}\n"
    add(
        "pod-anti-affinity-terms",
        pod(spec=affinity),
        r"^SRC:8: spec\.affinity\.podAntiAffinity\.requiredDuringSchedulingIgnoredDuringExecution: "
        + too_many(101, 100),
    )
    label_exprs = flow([SELECTOR_EXPR] * 101)
    affinity = (
        "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        f"      - topologyKey: zone\n        labelSelector: {{matchExpressions: {label_exprs}}}\n"
    )
    add(
        "label-selector-expressions",
        pod(spec=affinity),
        r"^SRC:10: spec\.affinity\.podAffinity\.requiredDuringSchedulingIgnoredDuringExecution\[0\]\."
        r"labelSelector\.matchExpressions: " + too_many(101, 100),
    )
    spread = flow([f"{{maxSkew: 1, topologyKey: z{i}, whenUnsatisfiable: ScheduleAnyway}}" for i in range(101)])
    add(
        "topologySpreadConstraints",
        pod(spec=f"  topologySpreadConstraints: {spread}\n"),
        r"^SRC:6: spec\.topologySpreadConstraints: " + too_many(101, 100),
    )
    containers = flow([f"{{name: c{i}, image: nginx}}" for i in range(limits.MAX_CONTAINERS + 1)])
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: web}}\nspec:\n  containers: {containers}\n"
    add("containers", text, r"^SRC:5: spec\.containers: " + too_many(101, 100))
    ports = flow([f"{{containerPort: {i + 1}}}" for i in range(limits.MAX_CONTAINER_PORTS + 1)])
    add(
        "container-ports",
        pod(container=f"    ports: {ports}\n"),
        r"^SRC:9: spec\.containers\[0\]\.ports: " + too_many(101, 100),
    )
    labels = "{" + ", ".join(f"k{i}: v" for i in range(limits.MAX_LABELS + 1)) + "}"
    add("labels", pod(meta=f"  labels: {labels}\n"), r"^SRC:5: metadata\.labels: " + too_many(1001, 1000))
    add(
        "nodeSelector",
        pod(spec=f"  nodeSelector: {labels}\n"),
        r"^SRC:6: spec\.nodeSelector: " + too_many(1001, 1000),
    )
    resources = "".join(f"        example.com/r{i}: '1'\n" for i in range(limits.MAX_RESOURCE_NAMES + 1))
    add(
        "resource-names",
        pod().replace("        cpu: 100m\n", resources),
        r"^SRC:10: spec\.containers\[0\]\.resources\.requests: " + too_many(101, 100),
    )
    annotations = "{a: " + "x" * (limits.MAX_ANNOTATIONS_BYTES) + "}"
    add(
        "annotations-size",
        pod(meta=f"  annotations: {annotations}\n"),
        r"^SRC:5: metadata\.annotations: Too long: must have at most 262144 bytes$",
    )
    taints = flow([f"{{key: t{i}, effect: NoSchedule}}" for i in range(limits.MAX_TAINTS + 1)])
    text = f"apiVersion: v1\nkind: Node\nmetadata: {{name: n2}}\nspec:\n  taints: {taints}\n"
    add("node-taints", text, r"^SRC:5: spec\.taints: " + too_many(101, 100), NOT_A_POD)
    template_containers = flow([f"{{name: c{i}}}" for i in range(101)])
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        f"  template:\n    metadata: {{labels: {{a: b}}}}\n    spec:\n      containers: {template_containers}\n"
    )
    add(
        "deployment-template-containers",
        text,
        r"^SRC:9: spec\.template\.spec\.containers: " + too_many(101, 100),
        NOT_A_POD,
    )
    text = text.replace(f"containers: {template_containers}", "containers: [{name: c}]").replace(
        "spec:\n  selector", "spec:\n  replicas: 1e100\n  selector"
    )
    add(
        "deployment-replicas-1e100",
        text,
        r'^SRC:5: spec\.replicas: Invalid value: "1e100": must be an integer$',
        NOT_A_POD,
    )

    # --- names that are not DNS-1123 (the API server's checks, so not the CLI's)
    rfc1123 = "a lowercase RFC 1123 "
    add(
        "pod-name", pod(name="Web_1"), rf'^SRC:4: metadata\.name: Invalid value: "Web_1": {rfc1123}subdomain', ADMISSION
    )
    add("pod-name-long", pod(name="a" * 254), r"^SRC:4: metadata\.name: Invalid value: .*no more than 253", ADMISSION)
    add(
        "namespace",
        pod(meta="  namespace: Prod\n"),
        rf'^SRC:5: metadata\.namespace: Invalid value: "Prod": {rfc1123}label',
        ADMISSION,
    )
    add(
        "container-name",
        pod().replace("- name: c\n", "- name: C_1\n"),
        rf'^SRC:7: spec\.containers\[0\]\.name: Invalid value: "C_1": {rfc1123}label',
        ADMISSION,
    )
    add(
        "duplicate-container-name",
        pod().replace("  - name: c\n", "  - name: c\n    image: a\n  - name: c\n"),
        r'^SRC:9: spec\.containers\[1\]\.name: Duplicate value: "c"$',
        ADMISSION,
    )
    text = "apiVersion: v1\nkind: Node\nmetadata: {name: 'Node 1'}\n"
    add("node-name", text, rf'^SRC:3: metadata\.name: Invalid value: "Node 1": {rfc1123}subdomain', NOT_A_POD)
    add(
        "label-key",
        pod(meta="  labels: {'-bad-': x}\n"),
        r'^SRC:5: metadata\.labels: Invalid value: "-bad-": name part must consist of',
        ADMISSION,
    )

    # --- NUL characters (PostgreSQL cannot store them in JSON): refused at admission, located
    nul = r"must not contain NUL characters$"
    text = pod().replace("image: nginx", 'image: "ngi\\0nx"')
    add("nul-image", text, rf'^SRC:8: spec\.containers\[0\]\.image: Invalid value: "ngi\\u0000nx": {nul}', ADMISSION)
    text = pod(meta='  annotations: {note: "a\\0b"}\n')
    add("nul-annotation", text, rf'^SRC:5: metadata\.annotations\.note: Invalid value: "a\\u0000b": {nul}', ADMISSION)
    text = pod().replace("kind: Pod\n", 'kind: Pod\nextra: {deep: ["x\\0"]}\n')
    add("nul-unknown-field", text, rf'^SRC:3: extra\.deep\[0\]: Invalid value: "x\\u0000": {nul}', ADMISSION)
    text = pod(meta='  annotations: {"k\\0": v}\n')
    add(
        "nul-key",
        text,
        r'^SRC:5: metadata\.annotations: Invalid value: "k\\u0000": keys must not contain NUL',
        ADMISSION,
    )
    text = pod(name='"we\\0b"')
    add("nul-name", text, rf'^SRC:4: metadata\.name: Invalid value: "we\\u0000b": {nul}', ADMISSION)
    return cases


CASES = _cases()


def pod_at_the_limits() -> str:
    """1000 tolerations, 100 required terms of 10 expressions (the last failing), 100 preferred terms,
    100 pod (anti-)affinity terms and 100 spread constraints: heavy, but valid."""
    exprs = ", ".join(["{key: zone, operator: In, values: [z0, z1, z2]}"] * 9 + ["{key: zone, operator: Exists}"])
    failing = exprs.replace("operator: Exists", "operator: DoesNotExist")
    terms = flow([f"{{matchExpressions: [{failing}]}}"] * 99 + [f"{{matchExpressions: [{exprs}]}}"])
    preferred = flow([f"{{weight: 1, preference: {{matchExpressions: [{exprs}]}}}}"] * 100)
    selector = "{matchExpressions: [{key: app, operator: NotIn, values: [x]}]}"
    weighted = flow([f"{{weight: 1, podAffinityTerm: {{topologyKey: zone, labelSelector: {selector}}}}}"] * 100)
    anti = flow(
        [
            f"{{topologyKey: kubernetes.io/hostname, labelSelector: {{matchLabels: {{app: nope{i}}}}}}}"
            for i in range(100)
        ]
    )
    spread = flow(
        [f"{{maxSkew: 5, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {selector}}}"] * 100
    )
    tolerations = flow([f"{{key: k{i}, operator: Exists}}" for i in range(limits.MAX_TOLERATIONS)])
    spec = (
        f"  tolerations: {tolerations}\n  topologySpreadConstraints: {spread}\n  affinity:\n"
        f"    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: {terms}}}\n"
        f"      preferredDuringSchedulingIgnoredDuringExecution: {preferred}\n"
        f"    podAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: {weighted}}}\n"
        f"    podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {anti}}}\n"
    )
    return pod(spec=spec, name="heavy")


def busy_cluster(nodes: int = 30, pods: int = 300) -> str:
    """The cluster the pod at the limits is explained on: `nodes` nodes in three zones, `pods` pods
    of seven apps bound round-robin."""
    out = [
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{zone: z{i % 3}}}}}\n"
        "status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n"
        for i in range(nodes)
    ]
    out += [
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: e{i}, labels: {{app: a{i % 7}}}}}\n"
        f"spec: {{nodeName: n{i % nodes}, containers: [{{name: c, image: nginx, "
        "resources: {requests: {cpu: 10m}}}]}\n"
        for i in range(pods)
    ]
    return "---\n".join(out)
