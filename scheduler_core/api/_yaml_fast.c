/* A fast path for reading Kubernetes objects from YAML: libyaml's events turned into Python values
 * in C, skipping the fields a plan drops, for the ordinary shape of a dump only.
 *
 * Anything else — an anchor, alias, explicit tag, merge key, non-scalar or duplicate key, a
 * document whose root is not a mapping, a syntax error, an object near the node or depth limits,
 * a scalar whose construction fails — raises `Fallback`, and the caller reads the whole stream
 * again with the exact (pure-Python-over-libyaml) reader, which gives the located error or the
 * value. Plain scalars are typed by the caller's `scalar` function (PyYAML's YAML 1.1 resolver and
 * constructor), except those whose first character no implicit resolver starts with: PyYAML makes
 * those strings without looking further (Resolver.resolve), and so does this module.
 *
 * Built by scheduler_core/api/build_yaml_fast.py; its Python side is yaml_reading.py (`_fast_objects`).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <yaml.h>

static PyObject *Fallback;

typedef struct {
    PyObject_HEAD
    yaml_parser_t parser;
    int parser_ready;
    PyObject *text;      /* bytes (UTF-8), kept alive while libyaml reads them */
    PyObject *plan_of;   /* kind -> Plan | None */
    PyObject *skip_all;  /* the plan of a kind that is not read */
    PyObject *scalar;    /* plain scalar text -> value (YAML 1.1) */
    PyObject *cache;     /* plain scalar text -> value, shared with `scalar` */
    PyObject *skipped;   /* sentinel of a skipped value */
    PyObject *keys;      /* mapping keys seen, so that equal keys are one string (as json's memo) */
    char resolved_first[128]; /* ASCII first characters some implicit resolver starts with */
    int known_rules;     /* the resolvers are PyYAML's YAML 1.1 ones (see plain_value) */
    yaml_event_t event;  /* the next event, when `peeked` */
    int peeked;
    yaml_mark_t last_end; /* end of the last consumed event */
    long nodes, max_nodes;
    int depth, max_depth;
    /* where the reader is in the stream */
    int state;           /* 0: between documents, 1: in a document's root mapping, 2: in its items, 3: done */
    PyObject *header;    /* the root mapping being built */
    PyObject *header_plan;
    int header_skipped, items_seen;
    long items_line, index;
    yaml_mark_t header_start;
} Reader;

static PyObject *fallback(const char *why) {
    PyErr_SetString(Fallback, why);
    return NULL;
}

static int peek(Reader *r) {
    if (!r->peeked) {
        if (!yaml_parser_parse(&r->parser, &r->event)) {
            PyErr_Format(Fallback, "syntax: %s", r->parser.problem ? r->parser.problem : "?");
            return -1;
        }
        r->peeked = 1;
    }
    return 0;
}

static void consume(Reader *r) {
    r->last_end = r->event.end_mark;
    yaml_event_delete(&r->event);
    r->peeked = 0;
}

static int count_node(Reader *r) {
    if (++r->nodes > r->max_nodes) {
        PyErr_SetString(Fallback, "nodes");
        return -1;
    }
    return 0;
}

static int enter(Reader *r) {
    if (++r->depth > r->max_depth) {
        PyErr_SetString(Fallback, "depth");
        return -1;
    }
    return 0;
}

/* What a plain scalar is, without asking the resolver where the answer is certain: 0 a string,
 * 1 a decimal integer, 2 unknown (the resolver decides).
 *
 * PyYAML's Resolver.resolve tries only the implicit resolvers keyed by the scalar's first character
 * (the strict rules have none applying whatever the first character: yaml_reading.py checks), so a
 * plain scalar starting with a character no resolver is keyed by is a string. With PyYAML's YAML
 * 1.1 resolvers (`known_rules`, checked in yaml_reading.py):
 * - a letter starts only the bool and null patterns (yes|no|true|false|on|off|null in their
 *   spellings), none longer than 5 ASCII characters: a longer scalar is a string;
 * - a digit starts only the float and int patterns; beyond the `0b` and `0x` prefixes these use
 *   only the characters 0-9 _ . : e E + - and at most one `.`: any other character, or a second
 *   `.`, makes a string; and digits alone without a leading zero match only the decimal integer,
 *   which SafeConstructor.construct_yaml_int makes `int(value)`. */
static int plain_value(Reader *r, const unsigned char *v, size_t n) {
    if (n == 0) return 2;
    unsigned char first = v[0];
    if (first < 128 && !r->resolved_first[first]) return 0;
    if (!r->known_rules || first >= 128) return 2;
    if ((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z')) return n > 5 ? 0 : 2;
    if (first < '0' || first > '9') return 2;
    if (n > 1 && first == '0' && (v[1] == 'x' || v[1] == 'b')) return 2;
    int digits_only = 1, dots = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = v[i];
        if (c >= '0' && c <= '9') continue;
        digits_only = 0;
        if (c == '.') {
            if (++dots > 1) return 0;
        } else if (!(c == '_' || c == ':' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
            return 0;
        }
    }
    return digits_only && (n == 1 || first != '0') && n <= 18 ? 1 : 2;
}

/* The value of the scalar event being peeked (then consumed). */
static PyObject *scalar_value(Reader *r) {
    yaml_event_t *e = &r->event;
    if (e->data.scalar.anchor || e->data.scalar.tag) return fallback("anchor or tag");
    PyObject *text = PyUnicode_DecodeUTF8((const char *)e->data.scalar.value, e->data.scalar.length, "strict");
    if (!text) return NULL;
    int plain = e->data.scalar.plain_implicit;
    int what = plain ? plain_value(r, e->data.scalar.value, e->data.scalar.length) : 0;
    consume(r);
    if (what == 0) return text;
    if (what == 1) {
        PyObject *number = PyLong_FromUnicodeObject(text, 10);
        Py_DECREF(text);
        return number;
    }
    PyObject *known = PyDict_GetItemWithError(r->cache, text);
    if (known) {
        Py_INCREF(known);
        Py_DECREF(text);
        return known;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(text);
        return NULL;
    }
    PyObject *value = PyObject_CallOneArg(r->scalar, text);
    Py_DECREF(text);
    if (!value) {
        PyErr_Clear();
        return fallback("scalar");
    }
    return value;
}

/* Consume one node's events unread (only anchors and aliases matter there: they fall back). */
static int skip_node(Reader *r) {
    int level = 0;
    do {
        if (peek(r) < 0) return -1;
        switch (r->event.type) {
        case YAML_ALIAS_EVENT:
            PyErr_SetString(Fallback, "alias");
            return -1;
        case YAML_SCALAR_EVENT:
            if (r->event.data.scalar.anchor) goto anchored;
            if (count_node(r) < 0) return -1;
            break;
        case YAML_SEQUENCE_START_EVENT:
            if (r->event.data.sequence_start.anchor) goto anchored;
            if (count_node(r) < 0 || enter(r) < 0) return -1;
            level++;
            break;
        case YAML_MAPPING_START_EVENT:
            if (r->event.data.mapping_start.anchor) goto anchored;
            if (count_node(r) < 0 || enter(r) < 0) return -1;
            level++;
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            r->depth--;
            level--;
            break;
        default:
            PyErr_SetString(Fallback, "structure");
            return -1;
        }
        consume(r);
    } while (level > 0);
    return 0;
anchored:
    PyErr_SetString(Fallback, "anchor");
    return -1;
}

static PyObject *build(Reader *r, PyObject *plan, int root);

/* A plan's fields, read once for a mapping (borrowed: the frozen plan holds them). */
typedef struct {
    PyObject *skip, *keep, *children;
} PlanView;

static int plan_view(PyObject *plan, PlanView *view) {
    static PyObject *names[3];
    if (!names[0]) {
        names[0] = PyUnicode_InternFromString("skip");
        names[1] = PyUnicode_InternFromString("keep");
        names[2] = PyUnicode_InternFromString("children");
        if (!names[0] || !names[1] || !names[2]) return -1;
    }
    PyObject **fields[3] = {&view->skip, &view->keep, &view->children};
    for (int i = 0; i < 3; i++) {
        PyObject *field = PyObject_GetAttr(plan, names[i]);
        if (!field) return -1;
        *fields[i] = field;
        Py_DECREF(field);
    }
    return 0;
}

/* Is `key` skipped by the plan? Sets *child to the plan of its value (borrowed, or NULL). */
static int plan_skips(PlanView *view, PyObject *key, PyObject **child) {
    *child = NULL;
    int in = PySet_Contains(view->skip, key);
    if (in != 0) return in;
    if (view->keep != Py_None) {
        in = PySet_Contains(view->keep, key);
        if (in <= 0) return in < 0 ? -1 : 1;
    }
    if (!PyUnicode_Check(key) || view->children == Py_None) return 0;
    PyObject *found;
    if (PyDict_CheckExact(view->children)) {
        found = PyDict_GetItemWithError(view->children, key);
        if (!found) return PyErr_Occurred() ? -1 : 0;
    } else {
        found = PyObject_GetItem(view->children, key);
        if (!found) {
            if (!PyErr_ExceptionMatches(PyExc_KeyError)) return -1;
            PyErr_Clear();
            return 0;
        }
        Py_DECREF(found); /* held by the plan */
    }
    *child = found == Py_None ? NULL : found;
    return 0;
}

/* The plan of an object once its `kind` is known (a new reference). */
static PyObject *object_plan(Reader *r, PyObject *kind) {
    if (!PyUnicode_Check(kind)) return fallback("kind");
    PyObject *plan = PyObject_CallOneArg(r->plan_of, kind);
    if (!plan) return NULL;
    if (plan == Py_None) {
        Py_DECREF(plan);
        Py_INCREF(r->skip_all);
        return r->skip_all;
    }
    return plan;
}

/* Without the keys whose value is the skipped sentinel (a new reference; steals `result`). */
static PyObject *without_skipped(Reader *r, PyObject *result) {
    PyObject *kept = PyDict_New();
    if (!kept) goto fail;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(result, &pos, &key, &value)) {
        if (value != r->skipped && PyDict_SetItem(kept, key, value) < 0) {
            Py_DECREF(kept);
            goto fail;
        }
    }
    Py_DECREF(result);
    return kept;
fail:
    Py_DECREF(result);
    return NULL;
}

/* The next key of a mapping (its scalar event peeked), refused when it is not a plain value key. */
static PyObject *mapping_key(Reader *r, PyObject *result) {
    yaml_event_t *e = &r->event;
    if (e->type != YAML_SCALAR_EVENT) return fallback("key");
    if (e->data.scalar.plain_implicit && e->data.scalar.length == 2 && e->data.scalar.value[0] == '<' &&
        e->data.scalar.value[1] == '<')
        return fallback("merge");
    if (count_node(r) < 0) return NULL;
    PyObject *key = scalar_value(r);
    if (!key) return NULL;
    if (PyUnicode_CheckExact(key) && PyDict_GET_SIZE(r->keys) < 100000) {
        PyObject *seen = PyDict_SetDefault(r->keys, key, key);
        Py_XINCREF(seen);
        Py_DECREF(key);
        if (!seen) return NULL;
        key = seen;
    }
    int duplicate = PyDict_Contains(result, key);
    if (duplicate != 0) {
        Py_DECREF(key);
        return duplicate < 0 ? NULL : fallback("duplicate");
    }
    return key;
}

static int is_kind(PyObject *key) {
    return PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, "kind") == 0;
}

/* A mapping's entries after its start event (consumed), to its end event (consumed). */
static PyObject *build_mapping(Reader *r, PyObject *plan, int root) {
    PyObject *result = PyDict_New();
    PyObject *owned_plan = NULL; /* the object's plan, once its kind is read */
    PlanView view;
    int has_skipped = 0;
    if (!result) return NULL;
    if (plan && plan_view(plan, &view) < 0) goto fail;
    for (;;) {
        if (peek(r) < 0) goto fail;
        if (r->event.type == YAML_MAPPING_END_EVENT) break;
        PyObject *key = mapping_key(r, result);
        if (!key) goto fail;
        if (root && !plan && !is_kind(key)) {
            PyObject *kind = PyDict_GetItemString(result, "kind");
            if (kind) {
                owned_plan = object_plan(r, kind);
                if (!owned_plan) {
                    Py_DECREF(key);
                    goto fail;
                }
                plan = owned_plan;
                if (plan_view(plan, &view) < 0) {
                    Py_DECREF(key);
                    goto fail;
                }
            }
        }
        PyObject *child = NULL, *value;
        if (plan) {
            int skips = plan_skips(&view, key, &child);
            if (skips < 0) {
                Py_DECREF(key);
                goto fail;
            }
            if (skips) {
                if (skip_node(r) < 0) {
                    Py_DECREF(key);
                    goto fail;
                }
                has_skipped = 1;
                int failed = PyDict_SetItem(result, key, r->skipped);
                Py_DECREF(key);
                if (failed < 0) goto fail;
                continue;
            }
        }
        value = build(r, child, 0);
        if (!value) {
            Py_DECREF(key);
            goto fail;
        }
        int failed = PyDict_SetItem(result, key, value);
        Py_DECREF(key);
        Py_DECREF(value);
        if (failed < 0) goto fail;
    }
    consume(r);
    r->depth--;
    Py_XDECREF(owned_plan);
    return has_skipped ? without_skipped(r, result) : result;
fail:
    Py_XDECREF(owned_plan);
    Py_DECREF(result);
    return NULL;
}

/* The value of the next node (`plan`: what to skip in it; `root`: an object, planned by its kind). */
static PyObject *build(Reader *r, PyObject *plan, int root) {
    if (peek(r) < 0) return NULL;
    yaml_event_t *e = &r->event;
    switch (e->type) {
    case YAML_SCALAR_EVENT:
        if (count_node(r) < 0) return NULL;
        return scalar_value(r);
    case YAML_SEQUENCE_START_EVENT: {
        if (e->data.sequence_start.anchor || e->data.sequence_start.tag) return fallback("anchor or tag");
        if (count_node(r) < 0 || enter(r) < 0) return NULL;
        consume(r);
        PyObject *items = PyList_New(0);
        if (!items) return NULL;
        for (;;) {
            if (peek(r) < 0) goto fail;
            if (r->event.type == YAML_SEQUENCE_END_EVENT) break;
            PyObject *item = build(r, plan, 0);
            if (!item) goto fail;
            int failed = PyList_Append(items, item);
            Py_DECREF(item);
            if (failed < 0) goto fail;
        }
        consume(r);
        r->depth--;
        return items;
    fail:
        Py_DECREF(items);
        return NULL;
    }
    case YAML_MAPPING_START_EVENT:
        if (e->data.mapping_start.anchor || e->data.mapping_start.tag) return fallback("anchor or tag");
        if (count_node(r) < 0 || enter(r) < 0) return NULL;
        consume(r);
        return build_mapping(r, plan, root);
    default:
        return fallback("alias");
    }
}

static PyObject *mark_tuple(yaml_mark_t start, yaml_mark_t end) {
    return Py_BuildValue("(nnnn)", (Py_ssize_t)start.line, (Py_ssize_t)start.column, (Py_ssize_t)end.line,
                         (Py_ssize_t)end.column);
}

/* The next thing of the stream: ("item", data, marks, index) for an item of a document's `items`,
 * ("document", data, marks, items_line) at the end of a document whose root is a mapping
 * (`items_line` 0 when it had no items: the document is an object), or None at the end. */
static PyObject *Reader_next(Reader *r, PyObject *Py_UNUSED(ignored)) {
    for (;;) {
        if (r->state == 3) Py_RETURN_NONE;
        if (peek(r) < 0) return NULL;
        yaml_event_t *e = &r->event;
        if (r->state == 0) {
            if (e->type == YAML_STREAM_START_EVENT) {
                consume(r);
                continue;
            }
            if (e->type == YAML_STREAM_END_EVENT) {
                consume(r);
                r->state = 3;
                Py_RETURN_NONE;
            }
            if (e->type != YAML_DOCUMENT_START_EVENT) return fallback("structure");
            consume(r);
            if (peek(r) < 0) return NULL;
            if (e->type != YAML_MAPPING_START_EVENT || e->data.mapping_start.anchor || e->data.mapping_start.tag)
                return fallback("root");
            r->header_start = e->start_mark;
            consume(r);
            r->header = PyDict_New();
            if (!r->header) return NULL;
            Py_CLEAR(r->header_plan);
            r->header_skipped = r->items_seen = 0;
            r->items_line = 0;
            r->nodes = 1;
            r->depth = 1;
            r->state = 1;
            continue;
        }
        if (r->state == 2) {
            if (e->type == YAML_SEQUENCE_END_EVENT) {
                consume(r);
                r->depth = 1;
                r->nodes = 0;
                r->state = 1;
                continue;
            }
            yaml_mark_t start = e->start_mark;
            r->nodes = 0;
            PyObject *data = build(r, NULL, 1);
            if (!data) return NULL;
            PyObject *marks = mark_tuple(start, r->last_end);
            if (!marks) {
                Py_DECREF(data);
                return NULL;
            }
            return Py_BuildValue("(sNNn)", "item", data, marks, (Py_ssize_t)r->index++);
        }
        /* state 1: the next entry of a document's root mapping */
        if (e->type == YAML_MAPPING_END_EVENT) {
            consume(r);
            yaml_mark_t end = r->last_end;
            if (peek(r) < 0) return NULL;
            if (r->event.type != YAML_DOCUMENT_END_EVENT) return fallback("structure");
            consume(r);
            PyObject *data = r->header;
            r->header = NULL;
            r->depth = 0;
            r->state = 0;
            if (r->header_skipped) data = without_skipped(r, data);
            if (!data) return NULL;
            PyObject *marks = mark_tuple(r->header_start, end);
            if (!marks) {
                Py_DECREF(data);
                return NULL;
            }
            return Py_BuildValue("(sNNn)", "document", data, marks, (Py_ssize_t)r->items_line);
        }
        yaml_mark_t key_start = e->start_mark;
        PyObject *key = mapping_key(r, r->header);
        if (!key) return NULL;
        if (peek(r) < 0) {
            Py_DECREF(key);
            return NULL;
        }
        if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, "items") == 0) {
            /* a second `items`, or items that are not a plain sequence: the exact reader decides */
            if (r->items_seen || r->event.type != YAML_SEQUENCE_START_EVENT ||
                r->event.data.sequence_start.anchor || r->event.data.sequence_start.tag) {
                Py_DECREF(key);
                return fallback("items");
            }
            Py_DECREF(key);
            if (count_node(r) < 0 || enter(r) < 0) return NULL;
            consume(r);
            r->items_seen = 1;
            r->items_line = (long)key_start.line + 1;
            r->index = 0;
            r->state = 2;
            continue;
        }
        PyObject *plan = NULL, *child = NULL;
        if (!r->items_seen) { /* before the items, the root is an object: planned by its kind */
            if (!r->header_plan && !is_kind(key)) {
                PyObject *kind = PyDict_GetItemString(r->header, "kind");
                if (kind) {
                    r->header_plan = object_plan(r, kind);
                    if (!r->header_plan) {
                        Py_DECREF(key);
                        return NULL;
                    }
                }
            }
            plan = r->header_plan;
        }
        PlanView view;
        if (plan) {
            int skips = plan_view(plan, &view) < 0 ? -1 : plan_skips(&view, key, &child);
            if (skips < 0) {
                Py_DECREF(key);
                return NULL;
            }
            if (skips) {
                int failed = skip_node(r) < 0 || PyDict_SetItem(r->header, key, r->skipped) < 0;
                Py_DECREF(key);
                if (failed) return NULL;
                r->header_skipped = 1;
                continue;
            }
        }
        PyObject *value = build(r, child, 0);
        if (!value) {
            Py_DECREF(key);
            return NULL;
        }
        int failed = PyDict_SetItem(r->header, key, value);
        Py_DECREF(key);
        Py_DECREF(value);
        if (failed < 0) return NULL;
    }
}

static int Reader_init(Reader *r, PyObject *args, PyObject *kwds) {
    static char *names[] = {"text", "plan_of", "skip_all", "scalar", "cache", "resolved_first", "known_rules",
                            "max_nodes", "max_depth", NULL};
    PyObject *text, *plan_of, *skip_all, *scalar, *cache;
    const char *first;
    Py_ssize_t first_len;
    long max_nodes;
    int max_depth, known_rules;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "SOOOO!s#pli", names, &text, &plan_of, &skip_all, &scalar,
                                     &PyDict_Type, &cache, &first, &first_len, &known_rules, &max_nodes,
                                     &max_depth))
        return -1;
    if (r->parser_ready) {
        PyErr_SetString(PyExc_RuntimeError, "a Reader is initialized once");
        return -1;
    }
    Py_INCREF(text);
    r->text = text;
    Py_INCREF(plan_of);
    r->plan_of = plan_of;
    Py_INCREF(skip_all);
    r->skip_all = skip_all;
    Py_INCREF(scalar);
    r->scalar = scalar;
    Py_INCREF(cache);
    r->cache = cache;
    r->skipped = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    r->keys = PyDict_New();
    if (!r->skipped || !r->keys) return -1;
    memset(r->resolved_first, 0, sizeof r->resolved_first);
    for (Py_ssize_t i = 0; i < first_len; i++)
        if ((unsigned char)first[i] < 128) r->resolved_first[(unsigned char)first[i]] = 1;
    r->known_rules = known_rules;
    r->max_nodes = max_nodes;
    r->max_depth = max_depth;
    if (!yaml_parser_initialize(&r->parser)) {
        PyErr_NoMemory();
        return -1;
    }
    yaml_parser_set_input_string(&r->parser, (const unsigned char *)PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text));
    r->parser_ready = 1;
    return 0;
}

static void Reader_dealloc(Reader *r) {
    if (r->peeked) yaml_event_delete(&r->event);
    if (r->parser_ready) yaml_parser_delete(&r->parser);
    Py_XDECREF(r->text);
    Py_XDECREF(r->plan_of);
    Py_XDECREF(r->skip_all);
    Py_XDECREF(r->scalar);
    Py_XDECREF(r->cache);
    Py_XDECREF(r->skipped);
    Py_XDECREF(r->keys);
    Py_XDECREF(r->header);
    Py_XDECREF(r->header_plan);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyMethodDef Reader_methods[] = {
    {"next", (PyCFunction)Reader_next, METH_NOARGS, "The next item or document of the stream, or None."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "scheduler_core.api._yaml_fast.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Kubernetes objects of a YAML stream, built from libyaml's events (ordinary dumps only).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Reader_init,
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_methods = Reader_methods,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_yaml_fast", .m_size = -1};

PyMODINIT_FUNC PyInit__yaml_fast(void) {
    if (PyType_Ready(&ReaderType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Fallback = PyErr_NewException("scheduler_core.api._yaml_fast.Fallback", NULL, NULL);
    if (!Fallback || PyModule_AddObjectRef(m, "Fallback", Fallback) < 0 ||
        PyModule_AddObjectRef(m, "Reader", (PyObject *)&ReaderType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
