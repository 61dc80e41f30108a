"""Every size limit enforced on user input, in one place.

Upstream Kubernetes has few hard limits (request bodies of 3 MiB, 256 KiB of annotations, names of
253 characters); the rest are ours. They are chosen far above anything a real workload writes, so
that only hostile or broken input meets them, and so that every input is refused or processed
within bounded time and memory. Each refusal is an `InputError` naming the file, line and field.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_UPLOAD_BYTES",
    "MAX_ALIAS_EXPANDED_NODES",
    "MAX_ALIAS_REFERENCES",
    "MAX_ANNOTATIONS_BYTES",
    "MAX_CONTAINERS",
    "MAX_CONTAINER_PORTS",
    "MAX_DECLARED_FEATURES",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_IMAGE_NAMES",
    "MAX_INT_DIGITS",
    "MAX_LABELS",
    "MAX_MATCH_EXPRESSIONS",
    "MAX_NODE_IMAGES",
    "MAX_OBJECTS_PER_REQUEST",
    "MAX_OBJECT_BYTES",
    "MAX_OWNER_REFERENCES",
    "MAX_POD_AFFINITY_TERMS",
    "MAX_QUANTITY_CHARS",
    "MAX_REPLICAS",
    "MAX_RESOURCE_CLAIMS",
    "MAX_RESOURCE_NAMES",
    "MAX_SELECTOR_TERMS",
    "MAX_SELECTOR_VALUES",
    "MAX_TAINTS",
    "MAX_TOLERATIONS",
    "MAX_TOPOLOGY_SPREAD_CONSTRAINTS",
    "MAX_VOLUMES",
    "MAX_YAML_BYTES",
    "MAX_YAML_CHARS",
    "MAX_YAML_NODES",
]

# --- inputs (scheduler_core/api/loading.py, yaml_reading.py, json_reading.py) -----------------------
# A whole input is bounded by its size only; everything else is bounded per object (a document, or
# one item of a `kind: List`), so a 5,000-node / 50,000-pod `kubectl get … -o json` dump (about
# 0.9 GB with managedFields and status) loads, while each hostile class is still refused where it is.

#: A file named on the command line (`explain --cluster`): a 5,000-node / 50,000-pod `-o json` dump
#: is about 0.9 GB (kubectl indents by four spaces), so twice that leaves room.
MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024
#: The app's snapshot upload (import), unless its setting says otherwise (the app passes its value
#: as `max_bytes`): 1,000 nodes / 10,000 pods in `-o json` with room.
DEFAULT_MAX_UPLOAD_BYTES = 256 * 1024 * 1024
#: The default `max_bytes` of the text functions (`load_yaml_documents`, `load_cluster`, `load_pod`).
MAX_YAML_BYTES = 16 * 1024 * 1024
#: The YAML of one action (create / explain over HTTP or the WebSocket); upstream's body limit is 3 MiB.
MAX_YAML_CHARS = 2 * 1024 * 1024
#: One object of a JSON input, as printed (etcd stores at most 1.5 MiB; kubectl's indentation adds ~2×).
MAX_OBJECT_BYTES = 8 * 1024 * 1024
#: YAML nodes (scalars, lists, maps) of one object: bounds its parse time (about 1 s) and memory
#: (tens of MiB). A real pod with managedFields and status has about 1,000.
MAX_YAML_NODES = 100_000
#: Alias references (`*name`) in one stream (kubectl never writes aliases).
MAX_ALIAS_REFERENCES = 10_000
#: Nodes that all aliases together expand to (billion laughs is refused at this bound).
MAX_ALIAS_EXPANDED_NODES = 100_000
#: Nesting of lists and maps.
MAX_DEPTH = 100
#: Digits of a YAML integer (Python's own int/str limit is 4300).
MAX_INT_DIGITS = 4000

# --- objects (scheduler_core/api/objects.py, clusterviz/validation.py) -----------------------------

#: Characters of one resource quantity (`cpu: "100m"`); real ones have fewer than 30.
MAX_QUANTITY_CHARS = 100
#: Labels of one object; entries of a nodeSelector or matchLabels; matchLabelKeys; schedulingGates.
MAX_LABELS = 1000
#: Total size of an object's annotations (keys + values): upstream's TotalAnnotationSizeLimitB.
MAX_ANNOTATIONS_BYTES = 256 * 1024
#: Tolerations of a pod.
MAX_TOLERATIONS = 1000
#: `spec.resourceClaims` of a pod (DRA claims it names or makes from templates).
MAX_RESOURCE_CLAIMS = 128
#: Taints of a node.
MAX_TAINTS = 100
#: nodeSelectorTerms of required node affinity; preferred node-affinity terms.
MAX_SELECTOR_TERMS = 100
#: matchExpressions (and matchFields) of one node selector term or label selector.
MAX_MATCH_EXPRESSIONS = 100
#: values of one selector requirement (`operator: In`); namespaces of a pod affinity term.
MAX_SELECTOR_VALUES = 1000
#: Required or preferred terms of podAffinity / podAntiAffinity (each list).
MAX_POD_AFFINITY_TERMS = 100
#: topologySpreadConstraints of a pod.
MAX_TOPOLOGY_SPREAD_CONSTRAINTS = 100
#: containers, and initContainers, of a pod (each list).
MAX_CONTAINERS = 100
#: ports of one container.
MAX_CONTAINER_PORTS = 100
#: volumes of a pod.
MAX_VOLUMES = 1000
#: images a node reports (the kubelet reports 50 by default: nodeStatusMaxImages).
MAX_NODE_IMAGES = 1000
#: status.declaredFeatures entries (ours: the kubelet declares a handful).
MAX_DECLARED_FEATURES = 1000
#: names of one node image (digest and tags).
MAX_IMAGE_NAMES = 100
#: resource names in one requests, limits, overhead, capacity or allocatable map.
MAX_RESOURCE_NAMES = 100
#: ownerReferences of one object.
MAX_OWNER_REFERENCES = 100

# --- the app (clusterviz/services.py, clusterviz/validation.py) ------------------------------------

#: Objects in one create or import request.
MAX_OBJECTS_PER_REQUEST = 2000
#: spec.replicas of a Deployment or ReplicaSet.
MAX_REPLICAS = 10_000
