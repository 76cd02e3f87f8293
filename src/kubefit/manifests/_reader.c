/* The streaming manifest reader: YAML (libyaml's event API) or JSON → compact JSON, one object at a time.

   kubefit.manifests.stream drives it; kubefit.manifests.k8syaml (YAML) and kubefit.manifests.parse (JSON)
   are the reference it must agree with, value for value. It reads the common part of the language — block
   and flow mappings and sequences, plain, quoted and block scalars, JSON — and raises `Fallback` (never a
   wrong answer) on anything else: anchors, aliases, tags, merge keys, a key given twice, an integer beyond
   int64, a non-finite number, nesting deeper than 100, a key that is not a string, bool or int64, a
   malformed text, invalid UTF-8, NUL. The caller then reads the file with the reference reader, whose
   messages name what was wrong.

   YAML: the text is cut into chunks at lines starting with `---` as apimachinery's YAMLReader cuts it, the
   first document of each chunk is read, and each scalar is resolved as go-yaml v2's resolve.go resolves it
   (see k8syaml.resolve_plain), a float written as Go's json.Marshal writes it. A List's items in kubectl's
   block style are read by a hand-written scanner (see "the fast path"), the rest by libyaml's event API;
   where the scanner cannot vouch for a file, next() raises `Retry` and the caller reads it again with
   Reader(..., fast=False), libyaml alone. JSON: a stream of values, as
   Python's json module reads them (the text is kept, floats are written with 17 digits).

   What it yields (Reader.next()), per document:
     ("map",) then ("member", key, json) for each top-level pair, except a top-level `items` sequence,
        which is ("items",) ("item", json, kind) ... ("end_items",) in its place; then ("end",)
     ("seq",) ("item", json, kind) ... ("end",)      a document that is a sequence
     ("scalar", json)                                a document that is a scalar
   and None at the end. `kind` is the item's top-level `kind` string (or None). In an item whose kind is
   Pod or Node, `metadata.managedFields` is left out (nothing reads it; a snapshot's largest part).
   With Reader(..., objects=True), a mapping document without a top-level `items` sequence (an object, not
   a list) is one event instead of its "map" ... "end":
     ("object", json, kind)                          its members as one compact JSON object, in order
   `kind` as for an item (an escaped JSON string unescaped, as Python reads it), and with cut_objects=True
   (the default) a Pod's or Node's `metadata.managedFields` left out as kubefit.manifests.stream left it out
   when it joined the members itself: where its key is written plainly, or (JSON, escaped) where the
   metadata's text holds `"managedFields"` all the same. The reader holds a document's members until it
   knows (see "objects"); at an `items` sequence it gives the events above, the members before it first.
   With Reader(..., prefetch=N), a thread reads a JSON list's items, or (objects=True) the documents while
   each is an object, ahead of next() (see "prefetch"): the same events and errors.
   Every allocation failure is a MemoryError, never an abort. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <yaml.h>
#include <errno.h>
#include <pthread.h>
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTH 100

static PyObject *Fallback;
static PyObject *Retry;

/* ------------------------------------------------------------------ errors

   On Python's thread an error is Python's error indicator (Fallback, Retry, MemoryError). The prefetch
   thread (see "prefetch") holds no GIL and must not touch it: there a thread-local Sink keeps the first
   error, which the consumer raises (sink_raise) once it has handed out every item or document read before
   it. */

typedef struct {
    int kind;            /* 0: none, 1: Fallback (reason, line), 2: no memory, 3: Retry (reason, line) */
    const char *reason;  /* a string literal (every reason is) */
    long line;
} Sink;

static _Thread_local Sink *sink;

static int no_memory(void) {
    if (sink) { if (!sink->kind) sink->kind = 2; }
    else PyErr_NoMemory();
    return -1;
}

/* The first error (`type` Fallback or Retry), "reason (line N)". */
static int reason_error(PyObject *type, int kind, const char *reason, long line) {
    if (sink) {
        if (!sink->kind) { sink->kind = kind; sink->reason = reason; sink->line = line; }
        return -1;
    }
    if (!PyErr_Occurred()) PyErr_Format(type, "%s (line %ld)", reason, line);
    return -1;
}

static int fallback(const char *reason, long line) { return reason_error(Fallback, 1, reason, line); }

/* YAML's fast path cannot vouch for the file (see "the fast path"). */
static int retry(const char *reason, long line) { return reason_error(Retry, 3, reason, line); }

/* A Sink's error raised on Python's thread (kind 0: the thread ended without one where it owed an event). */
static void sink_raise(Sink *error) {
    if (error->kind == 2) PyErr_NoMemory();
    else reason_error(error->kind == 3 ? Retry : Fallback, 0, error->kind ? error->reason : "the reader stopped early",
                      error->line);
}

/* ------------------------------------------------------------------ output buffer */

typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static int buf_grow(Buf *b, size_t more) {
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + more) cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data) return no_memory();
    b->data = data;
    b->cap = cap;
    return 0;
}

/* Room for one more of an array's `n` elements of `size` bytes (`cap` of them, at first `first`). */
static int grow_array(void **items, size_t *cap, size_t n, size_t size, size_t first) {
    if (n < *cap) return 0;
    size_t more = *cap ? *cap * 2 : first;
    void *grown = realloc(*items, more * size);
    if (!grown) return no_memory();
    *items = grown;
    *cap = more;
    return 0;
}

static int buf_put(Buf *b, const char *s, size_t n) {
    if (buf_grow(b, n) < 0) return -1;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return 0;
}

static inline int buf_putc(Buf *b, char c) {
    if (b->len == b->cap && buf_grow(b, 1) < 0) return -1;
    b->data[b->len++] = c;
    return 0;
}

/* ------------------------------------------------------------------ key sets (duplicate keys) */

typedef struct {
    size_t *offs; size_t *lens; uint64_t *hashes;  /* keys as (offset, length) into `text` */
    size_t n, cap;
    size_t *table; size_t tcap;                     /* open addressing once n > 16 */
    Buf text;                                       /* the keys' JSON text (YAML: converted keys) */
} KeySet;

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {  /* eight bytes at a time */
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 1099511628211ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ULL; }
    return h ^ (h >> 32);
}

static void keys_clear(KeySet *k) {
    k->n = 0;
    k->text.len = 0;
    if (k->table) memset(k->table, 0, k->tcap * sizeof(size_t));
}

static void keys_free(KeySet *k) {
    free(k->offs); free(k->lens); free(k->hashes); free(k->table); free(k->text.data);
    memset(k, 0, sizeof(*k));
}

static int keys_same(KeySet *k, size_t i, const char *s, size_t n, uint64_t h) {
    return k->hashes[i] == h && k->lens[i] == n && memcmp(k->text.data + k->offs[i], s, n) == 0;
}

static int table_insert(KeySet *k, size_t i) {
    size_t mask = k->tcap - 1, j = (size_t)k->hashes[i] & mask;
    while (k->table[j]) j = (j + 1) & mask;
    k->table[j] = i + 1;
    return 0;
}

static int table_rebuild(KeySet *k, size_t tcap) {
    size_t *table = calloc(tcap, sizeof(size_t));
    if (!table) return no_memory();
    free(k->table);
    k->table = table;
    k->tcap = tcap;
    for (size_t i = 0; i < k->n; i++) table_insert(k, i);
    return 0;
}

/* Add a key: 1 if it was new, 0 if given before, -1 on error. */
static int keys_add(KeySet *k, const char *s, size_t n) {
    uint64_t h = hash_bytes(s, n);
    if (k->n > 16) {
        if (!k->table || k->n * 2 >= k->tcap) {
            if (table_rebuild(k, k->tcap ? k->tcap * 2 : 64) < 0) return -1;
        }
        size_t mask = k->tcap - 1, j = (size_t)h & mask;
        while (k->table[j]) {
            if (keys_same(k, k->table[j] - 1, s, n, h)) return 0;
            j = (j + 1) & mask;
        }
    } else {
        for (size_t i = 0; i < k->n; i++)
            if (keys_same(k, i, s, n, h)) return 0;
    }
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 16;
        size_t *offs = realloc(k->offs, cap * sizeof(size_t));
        if (offs) k->offs = offs;
        size_t *lens = realloc(k->lens, cap * sizeof(size_t));
        if (lens) k->lens = lens;
        uint64_t *hashes = realloc(k->hashes, cap * sizeof(uint64_t));
        if (hashes) k->hashes = hashes;
        if (!offs || !lens || !hashes) return no_memory();
        k->cap = cap;
    }
    k->offs[k->n] = k->text.len;
    k->lens[k->n] = n;
    k->hashes[k->n] = h;
    if (buf_put(&k->text, s, n) < 0) return -1;
    k->n++;
    if (k->table) {
        if (k->n * 2 >= k->tcap) { if (table_rebuild(k, k->tcap * 2) < 0) return -1; }
        else table_insert(k, k->n - 1);
    }
    return 1;
}

/* ------------------------------------------------------------------ the reader */

typedef struct {
    int active;          /* this level is an item's root, or its metadata */
    int is_metadata;
} Track;

typedef struct {
    size_t key_at, key_len;      /* a held member's key (its JSON text) in Reader.obj */
    size_t value_at, value_len;  /* and its value's JSON */
} Member;

typedef struct {
    PyObject_HEAD
    Py_buffer view;
    const char *data;
    Py_ssize_t size;
    int json;
    Py_ssize_t pos;      /* JSON: scan position; YAML: start of the next chunk */
    Py_ssize_t chunk_start;  /* YAML: the first byte of the text libyaml reads (a chunk, or a span of one) */
    long chunk_line;     /* YAML: the line (0-based) where that text starts */
    long next_line;      /* YAML: where the next one starts */
    int phase;           /* 0: between documents, 1: members of a mapping, 2: its items, 3: items of a sequence */
    int done;
    Buf out;
    Buf scratch;         /* an unescaped JSON key */
    KeySet keys[MAX_DEPTH + 2];
    KeySet top;          /* the document's top-level keys */
    /* the item being written: its kind and where its metadata.managedFields is */
    char kind[64];
    int kind_len;        /* -1: none (or not a plain string) */
    size_t cut_from, cut_to;
    int has_cut;
    /* a mapping document's members held until it shows whether it is an object or a list (see "objects") */
    int objects;         /* Reader(..., objects=True) */
    int cut_objects;     /* an object's managedFields left out of a Pod or Node */
    Buf obj;             /* `{` and the held members, as JSON */
    Member *members;
    size_t n_members, cap_members;
    size_t replay;       /* the next held member handed out as ("member", ...) at an `items` sequence */
    int replaying;
    size_t meta_at, meta_len;  /* the held object's metadata value (has_meta) */
    int has_meta;
    /* YAML */
    yaml_parser_t parser;
    int parser_live;
    yaml_event_t event;
    int has_event;
    /* YAML's fast path (see "the fast path" below) */
    int fast;            /* allowed (Reader(..., fast=True)) */
    int fmode;           /* the current chunk is read by it */
    int in_items;        /* it is in the items of the top-level `items:` */
    int span;            /* libyaml reads a span of the chunk (an item or members the fast path leaves) */
    Py_ssize_t fpos;     /* the next column-0 line of the chunk */
    Py_ssize_t fend;     /* the chunk's end */
    long fline;          /* fpos's line (0-based) */
    Py_ssize_t span_end; /* the members' span libyaml reads */
    long span_lines;
    Py_ssize_t fast_items;  /* items the fast path read (the rest: libyaml) */
    Py_ssize_t fast_members;  /* members of a document's mapping the fast path read (the rest: libyaml) */
    Buf fscratch;        /* an unquoted scalar */
    /* the prefetch thread (see "prefetch") */
    Py_ssize_t prefetch; /* a thread reads ahead when this many bytes are left (-1: never) */
    int ahead;           /* a thread is reading the current items, or the documents */
    int ahead_documents; /* documents (objects), not a JSON list's items */
    Py_ssize_t resume_at;  /* documents are read ahead again from here (after one the thread gave back) */
    pid_t owner;         /* the process that started the thread (a forked child has none) */
    int sync_ready;      /* lock and cond initialised */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct Batch *head, *tail;  /* batches read, not yet handed out */
    size_t waiting;      /* their bytes */
    int finished;        /* the thread has pushed its last batch */
    int stop;            /* the consumer asks the thread to end */
    Sink sink;           /* the thread's first error */
    struct Batch *cur;   /* the batch being handed out */
    size_t cur_i;
    Py_ssize_t cpos;     /* the end of the last item handed out */
} Reader;

/* ------------------------------------------------------------------ JSON */

/* Eight bytes at p (unaligned); whether a word holds a byte below n (n <= 128), or a given byte: the
   bit tricks of "Bit Twiddling Hacks" (S. E. Anderson), exact for whether such a byte exists. */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
static inline uint64_t word_at(const char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint64_t has_below(uint64_t x, unsigned n) { return (x - ONES * n) & ~x & HIGHS; }
static inline uint64_t has_byte(uint64_t x, unsigned char b) { return has_below(x ^ (ONES * b), 1); }

/* Whether eight bytes of a string body need a look one by one: a quote, a backslash, a control
   character or a byte of a multi-byte UTF-8 sequence. */
static inline int word_special(uint64_t x) {
    return (has_below(x, 0x20) | has_byte(x, '"') | has_byte(x, '\\') | (x & HIGHS)) != 0;
}

static void j_space(Reader *r) {
    while (r->pos + 8 <= r->size && word_at(r->data + r->pos) == ONES * ' ') r->pos += 8;  /* indentation */
    while (r->pos < r->size) {
        char c = r->data[r->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') r->pos++;
        else break;
    }
}

static long j_line(Reader *r) {
    long line = 1;
    for (Py_ssize_t i = 0; i < r->pos && i < r->size; i++) line += r->data[i] == '\n';
    return line;
}

static int j_fail(Reader *r, const char *reason) { return fallback(reason, j_line(r)); }

/* The length of a valid UTF-8 sequence at p (n bytes left), or 0. */
static int utf8_len(const unsigned char *p, Py_ssize_t n) {
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return n >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && p[1] < 0xA0) return 0;
        if (c == 0xED && p[1] >= 0xA0) return 0;  /* a surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && p[1] < 0x90) return 0;
        if (c == 0xF4 && p[1] >= 0x90) return 0;
        return 4;
    }
    return 0;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int j_hex4(const char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* A JSON string at r->pos (its opening quote), copied as it is; `escaped` tells whether it held a `\`. */
static int j_string(Reader *r, Buf *out, int *escaped) {
    Py_ssize_t start = r->pos++;
    *escaped = 0;
    while (1) {
        while (r->pos + 8 <= r->size && !word_special(word_at(r->data + r->pos))) r->pos += 8;
        if (r->pos >= r->size) return j_fail(r, "unterminated JSON string");
        unsigned char c = (unsigned char)r->data[r->pos];
        if (c == '"') break;
        if (c < 0x20) return j_fail(r, "a control character in a JSON string");
        if (c == '\\') {
            *escaped = 1;
            if (r->pos + 1 >= r->size) return j_fail(r, "unterminated JSON string");
            char e = r->data[r->pos + 1];
            if (e == 'u') {
                if (r->pos + 6 > r->size) return j_fail(r, "a bad \\u escape");
                int v = j_hex4(r->data + r->pos + 2);
                if (v < 0) return j_fail(r, "a bad \\u escape");
                if (v >= 0xD800 && v <= 0xDBFF) {  /* a surrogate pair, or the reference decides */
                    if (r->pos + 12 > r->size || r->data[r->pos + 6] != '\\' || r->data[r->pos + 7] != 'u')
                        return j_fail(r, "a lone surrogate escape");
                    int w = j_hex4(r->data + r->pos + 8);
                    if (w < 0xDC00 || w > 0xDFFF) return j_fail(r, "a lone surrogate escape");
                    r->pos += 12;
                } else if (v >= 0xDC00 && v <= 0xDFFF) {
                    return j_fail(r, "a lone surrogate escape");
                } else {
                    r->pos += 6;
                }
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || e == 0) return j_fail(r, "a bad escape");
            r->pos += 2;
            continue;
        }
        if (c < 0x80) { r->pos++; continue; }
        int n = utf8_len((const unsigned char *)r->data + r->pos, r->size - r->pos);
        if (!n) return j_fail(r, "invalid UTF-8");
        r->pos += n;
    }
    r->pos++;
    return buf_put(out, r->data + start, r->pos - start);
}

static int put_utf8(Buf *out, unsigned v) {
    char b[4];
    int n;
    if (v < 0x80) { b[0] = (char)v; n = 1; }
    else if (v < 0x800) { b[0] = (char)(0xC0 | v >> 6); b[1] = (char)(0x80 | (v & 0x3F)); n = 2; }
    else if (v < 0x10000) {
        b[0] = (char)(0xE0 | v >> 12); b[1] = (char)(0x80 | (v >> 6 & 0x3F)); b[2] = (char)(0x80 | (v & 0x3F)); n = 3;
    } else {
        b[0] = (char)(0xF0 | v >> 18); b[1] = (char)(0x80 | (v >> 12 & 0x3F));
        b[2] = (char)(0x80 | (v >> 6 & 0x3F)); b[3] = (char)(0x80 | (v & 0x3F)); n = 4;
    }
    return buf_put(out, b, n);
}

/* The text of a valid JSON string body (between its quotes, escapes checked by j_string), into `out`. */
static int j_unescape(const char *s, size_t n, Buf *out) {
    out->len = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') { if (buf_putc(out, s[i]) < 0) return -1; continue; }
        char e = s[++i];
        if (e == 'u') {
            unsigned v = (unsigned)j_hex4(s + i + 1);
            i += 4;
            if (v >= 0xD800 && v <= 0xDBFF) {
                unsigned w = (unsigned)j_hex4(s + i + 3);
                v = 0x10000 + ((v - 0xD800) << 10) + (w - 0xDC00);
                i += 6;
            }
            if (put_utf8(out, v) < 0) return -1;
            continue;
        }
        char c = e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
        if (buf_putc(out, c) < 0) return -1;
    }
    return 0;
}

static int digits_fit_int64(const char *s, size_t n, int negative) {
    while (n > 1 && *s == '0') { s++; n--; }
    if (n < 19) return 1;
    if (n > 19) return 0;
    return memcmp(s, negative ? "9223372036854775808" : "9223372036854775807", 19) <= 0;
}

/* Write a finite double so that Python's float() and msgspec read the same value back, as a float. */
static int put_double(Buf *out, double v) {
    char text[40];
    int n = snprintf(text, sizeof text, "%.17g", v);
    if (n <= 0 || n >= (int)sizeof text) return -1;
    if (!strpbrk(text, ".eE")) { text[n++] = '.'; text[n++] = '0'; }
    return buf_put(out, text, n);
}

static int j_number(Reader *r, Buf *out) {
    Py_ssize_t start = r->pos, p = r->pos;
    const char *d = r->data;
    int negative = 0, is_float = 0;
    if (p < r->size && d[p] == '-') { negative = 1; p++; }
    Py_ssize_t int_start = p;
    if (p < r->size && d[p] == '0') p++;
    else if (p < r->size && d[p] >= '1' && d[p] <= '9') { while (p < r->size && d[p] >= '0' && d[p] <= '9') p++; }
    else return j_fail(r, "a malformed JSON number");  /* also -Infinity */
    Py_ssize_t int_end = p;
    if (p < r->size && d[p] == '.') {
        is_float = 1; p++;
        if (p >= r->size || d[p] < '0' || d[p] > '9') return j_fail(r, "a malformed JSON number");
        while (p < r->size && d[p] >= '0' && d[p] <= '9') p++;
    }
    if (p < r->size && (d[p] == 'e' || d[p] == 'E')) {
        is_float = 1; p++;
        if (p < r->size && (d[p] == '+' || d[p] == '-')) p++;
        if (p >= r->size || d[p] < '0' || d[p] > '9') return j_fail(r, "a malformed JSON number");
        while (p < r->size && d[p] >= '0' && d[p] <= '9') p++;
    }
    r->pos = p;
    if (!is_float) {
        if (!digits_fit_int64(d + int_start, int_end - int_start, negative))
            return j_fail(r, "an integer outside int64");
        return buf_put(out, d + start, p - start);
    }
    if (p - start > 300) return j_fail(r, "a very long JSON number");
    char text[320];
    memcpy(text, d + start, p - start);
    text[p - start] = 0;
    errno = 0;
    double v = strtod(text, NULL);
    if (!isfinite(v)) return j_fail(r, "a number beyond the float64 range");
    return put_double(out, v);
}

static int j_value(Reader *r, Buf *out, int depth, Track track);

static void note_kind(Reader *r, const char *s, size_t n) {
    if (n < sizeof r->kind) { memcpy(r->kind, s, n); r->kind_len = (int)n; }
    else r->kind_len = -1;
}

static int is_cut_kind(Reader *r) {
    return (r->kind_len == 3 && memcmp(r->kind, "Pod", 3) == 0) ||
           (r->kind_len == 4 && memcmp(r->kind, "Node", 4) == 0);
}

/* What a member of an item's root (or of its metadata) is to the reader: its kind, its metadata, or the
   metadata's managedFields (left out of pods and nodes). */
typedef struct { int kind, meta, managed; } Role;

static Role member_role(Track track, const char *key, size_t n) {
    Role role = {0, 0, 0};
    if (!track.active) return role;
    if (!track.is_metadata) {
        role.kind = n == 4 && memcmp(key, "kind", 4) == 0;
        role.meta = n == 8 && memcmp(key, "metadata", 8) == 0;
    } else {
        role.managed = n == 13 && memcmp(key, "managedFields", 13) == 0;
    }
    return role;
}

/* After a member's value (written from `value_at`): note the item's kind, or where managedFields lies
   (from its comma, or to the next one when it comes first). */
static void member_done(Reader *r, Role role, Buf *out, size_t value_at, size_t key_at, size_t member_start,
                        int first) {
    if (role.kind) {
        if (out->data[value_at] == '"' && !memchr(out->data + value_at, '\\', out->len - value_at))
            note_kind(r, out->data + value_at + 1, out->len - value_at - 2);
        else
            r->kind_len = -1;
    }
    if (role.managed) {
        r->cut_from = first ? key_at : member_start;
        r->cut_to = out->len;
        r->has_cut = first ? 2 : 1;
    }
}

static int j_object(Reader *r, Buf *out, int depth, Track track) {
    if (depth > MAX_DEPTH) return j_fail(r, "nested deeper than 100");
    KeySet *keys = &r->keys[depth];
    keys_clear(keys);
    r->pos++;
    if (buf_putc(out, '{') < 0) return -1;
    j_space(r);
    if (r->pos < r->size && r->data[r->pos] == '}') { r->pos++; return buf_putc(out, '}'); }
    int first = 1;
    while (1) {
        j_space(r);
        if (r->pos >= r->size || r->data[r->pos] != '"') return j_fail(r, "a malformed JSON object");
        size_t member_start = out->len;
        if (!first && buf_putc(out, ',') < 0) return -1;
        size_t key_at = out->len;
        int escaped;
        if (j_string(r, out, &escaped) < 0) return -1;
        const char *key = out->data + key_at + 1;
        size_t key_len = out->len - key_at - 2;
        if (escaped) {
            if (j_unescape(key, key_len, &r->scratch) < 0) return -1;
            key = r->scratch.data;
            key_len = r->scratch.len;
        }
        int added = keys_add(keys, key, key_len);
        if (added < 0) return -1;
        if (!added) return j_fail(r, "a duplicate key");
        j_space(r);
        if (r->pos >= r->size || r->data[r->pos] != ':') return j_fail(r, "a malformed JSON object");
        r->pos++;
        if (buf_putc(out, ':') < 0) return -1;
        j_space(r);
        Role role = member_role(track, key, key_len);
        size_t value_at = out->len;
        if (j_value(r, out, depth + 1, role.meta ? (Track){1, 1} : (Track){0, 0}) < 0) return -1;
        member_done(r, role, out, value_at, key_at, member_start, first);
        first = 0;
        j_space(r);
        if (r->pos >= r->size) return j_fail(r, "a malformed JSON object");
        char c = r->data[r->pos++];
        if (c == '}') return buf_putc(out, '}');
        if (c != ',') return j_fail(r, "a malformed JSON object");
    }
}

static int j_array(Reader *r, Buf *out, int depth) {
    if (depth > MAX_DEPTH) return j_fail(r, "nested deeper than 100");
    r->pos++;
    if (buf_putc(out, '[') < 0) return -1;
    j_space(r);
    if (r->pos < r->size && r->data[r->pos] == ']') { r->pos++; return buf_putc(out, ']'); }
    while (1) {
        j_space(r);
        if (j_value(r, out, depth + 1, (Track){0, 0}) < 0) return -1;
        j_space(r);
        if (r->pos >= r->size) return j_fail(r, "a malformed JSON array");
        char c = r->data[r->pos++];
        if (c == ']') return buf_putc(out, ']');
        if (c != ',') return j_fail(r, "a malformed JSON array");
        if (buf_putc(out, ',') < 0) return -1;
    }
}

static int j_literal(Reader *r, Buf *out, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(r->size - r->pos) < n || memcmp(r->data + r->pos, word, n) != 0)
        return j_fail(r, "a malformed JSON value");
    r->pos += n;
    return buf_put(out, word, n);
}

static int j_value(Reader *r, Buf *out, int depth, Track track) {
    if (r->pos >= r->size) return j_fail(r, "a JSON value is missing");
    char c = r->data[r->pos];
    int escaped;
    switch (c) {
    case '{': return j_object(r, out, depth, track);
    case '[': return j_array(r, out, depth);
    case '"': return j_string(r, out, &escaped);
    case 't': return j_literal(r, out, "true");
    case 'f': return j_literal(r, out, "false");
    case 'n': return j_literal(r, out, "null");
    default:
        if (c == '-' || (c >= '0' && c <= '9')) return j_number(r, out);
        return j_fail(r, "a malformed JSON value");  /* NaN, Infinity: the reference reads them */
    }
}

/* ------------------------------------------------------------------ YAML */

static long y_line(Reader *r, yaml_mark_t mark) { return r->chunk_line + (long)mark.line + 1; }

static void y_stop(Reader *r) {
    if (r->has_event) { yaml_event_delete(&r->event); r->has_event = 0; }
    if (r->parser_live) { yaml_parser_delete(&r->parser); r->parser_live = 0; }
}

/* The next event of the chunk into r->event (the previous one freed). */
static int y_next(Reader *r) {
    if (r->has_event) { yaml_event_delete(&r->event); r->has_event = 0; }
    if (!yaml_parser_parse(&r->parser, &r->event)) {
        if (r->parser.error == YAML_MEMORY_ERROR) return no_memory();
        if (r->span) return retry("malformed YAML in a span", r->chunk_line + (long)r->parser.problem_mark.line + 1);
        return fallback("malformed YAML", r->chunk_line + (long)r->parser.problem_mark.line + 1);
    }
    r->has_event = 1;
    if ((r->event.type == YAML_SCALAR_EVENT && r->event.data.scalar.anchor) ||
        (r->event.type == YAML_SEQUENCE_START_EVENT && r->event.data.sequence_start.anchor) ||
        (r->event.type == YAML_MAPPING_START_EVENT && r->event.data.mapping_start.anchor))
        return fallback("a YAML anchor", y_line(r, r->event.start_mark));
    if (r->event.type == YAML_ALIAS_EVENT) return fallback("a YAML alias", y_line(r, r->event.start_mark));
    if ((r->event.type == YAML_SCALAR_EVENT && r->event.data.scalar.tag) ||
        (r->event.type == YAML_SEQUENCE_START_EVENT && r->event.data.sequence_start.tag) ||
        (r->event.type == YAML_MAPPING_START_EVENT && r->event.data.mapping_start.tag))
        return fallback("a YAML tag", y_line(r, r->event.start_mark));
    return 0;
}

/* go-yaml v2 resolve.go for an untagged plain scalar (see k8syaml.resolve_plain). */
enum { R_STR, R_NULL, R_TRUE, R_FALSE, R_INT, R_FLOAT, R_FAIL };

static const char *WORDS_TRUE[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", 0};
static const char *WORDS_FALSE[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", 0};
static const char *WORDS_NULL[] = {"~", "null", "Null", "NULL", 0};
static const char *WORDS_SPECIAL[] = {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
                                      "-.inf", "-.Inf", "-.INF", 0};

static int in_words(const char *s, size_t n, const char **words) {
    for (; *words; words++) {
        const char *w = *words;
        size_t i = 0;
        while (i < n && w[i] && w[i] == s[i]) i++;
        if (i == n && !w[n]) return 1;
    }
    return 0;
}

/* Whether s could be one of the words (letters, `~`, `.`, `+`, `-`). */
static int word_like(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '~' || c == '.' || c == '+' || c == '-'))
            return 0;
    }
    return 1;
}

static int digit_of(char c, int base) {
    int v = hexval(c);
    return v >= 0 && v < base ? v : -1;
}

/* strconv.ParseInt(s, 0, 64) then ParseUint: R_INT with *value, R_FAIL for an unsigned beyond int64, or
   R_STR where neither reads it. */
static int go_parse_int(const char *s, size_t n, long long *value) {
    int sign = 0;
    size_t i = 0;
    if (n && (s[0] == '+' || s[0] == '-')) { sign = s[0] == '-' ? -1 : 1; i = 1; }
    int base = 10;
    if (n - i >= 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) { base = 16; i += 2; }
    else if (n - i >= 2 && s[i] == '0' && (s[i + 1] == 'o' || s[i + 1] == 'O')) { base = 8; i += 2; }
    else if (n - i >= 2 && s[i] == '0' && (s[i + 1] == 'b' || s[i + 1] == 'B')) { base = 2; i += 2; }
    else if (n - i >= 2 && s[i] == '0') { base = 8; i += 1; }
    if (i >= n) return R_STR;
    unsigned long long v = 0;
    int overflow = 0;
    for (; i < n; i++) {
        int d = digit_of(s[i], base);
        if (d < 0) return R_STR;
        if (v > (ULLONG_MAX - (unsigned)d) / (unsigned)base) overflow = 1;
        else v = v * base + d;
    }
    if (overflow) return R_STR;
    if (sign < 0) {
        if (v > 9223372036854775808ULL) return R_STR;
        *value = v == 9223372036854775808ULL ? LLONG_MIN : -(long long)v;
        return R_INT;
    }
    if (v <= 9223372036854775807ULL) { *value = (long long)v; return R_INT; }
    return sign > 0 ? R_STR : R_FAIL;  /* ParseUint takes no sign: "+1e19"-like texts go on to floats */
}

/* resolve.go's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int yaml_style_float(const char *s, size_t n) {
    size_t i = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    if (i < n && s[i] == '.') {
        i++;
        size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return 0;
    } else {
        size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return 0;
        if (i < n && s[i] == '.') { i++; while (i < n && s[i] >= '0' && s[i] <= '9') i++; }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return 0;
    }
    return i == n;
}

/* strconv.ParseFloat(s, 64) of a text in the yamlStyleFloat grammar (no `_`): R_FLOAT, or R_STR if
   beyond the float64 range (Go's ErrRange; go-yaml then keeps the string). */
static int go_parse_float(const char *s, size_t n, double *value) {
    if (n > 300) return R_FAIL;
    char text[320];
    memcpy(text, s, n);
    text[n] = 0;
    errno = 0;
    double v = strtod(text, NULL);
    if (isinf(v)) return R_STR;
    *value = v;
    return R_FLOAT;
}

static int resolve_plain(const char *s, size_t n, long long *iv, double *fv) {
    if (n == 0) return R_NULL;
    char c = s[0];
    switch (c) {  /* what may begin a value other than a string */
    case '+': case '-': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8':
    case '9': case 'y': case 'Y': case 'n': case 'N': case 't': case 'T': case 'f': case 'F': case 'o': case 'O':
    case '~': case '.': break;
    default: return R_STR;
    }
    if (n <= 5 && word_like(s, n)) {  /* the longest of resolveMap's words */
        if (c == '.' || c == '+' || c == '-') {
            if (in_words(s, n, WORDS_SPECIAL)) return R_FAIL;  /* ±Inf, NaN: json.Marshal refuses them */
        } else {  /* the others begin with y Y n N t T f F o O ~ */
            if (in_words(s, n, WORDS_TRUE)) return R_TRUE;
            if (in_words(s, n, WORDS_FALSE)) return R_FALSE;
            if (in_words(s, n, WORDS_NULL)) return R_NULL;
        }
    }
    if (c == '.') {
        /* ParseFloat of `.5`, `.5e3`; `_` (underscoreOK) and other forms: the reference decides */
        if (memchr(s, '_', n)) return R_FAIL;
        if (!yaml_style_float(s, n)) return R_STR;
        return go_parse_float(s, n, fv);
    }
    if (strchr("yYnNtTfFoO~", c)) return R_STR;
    char plain[400];
    size_t m = 0;
    if (n >= sizeof plain) return R_FAIL;
    for (size_t i = 0; i < n; i++) if (s[i] != '_') plain[m++] = s[i];
    int got = go_parse_int(plain, m, iv);
    if (got != R_STR) return got;
    if (yaml_style_float(plain, m)) {
        got = go_parse_float(plain, m, fv);
        return got;
    }
    return R_STR;
}

/* A resolved Go float as json.Marshal writes it and Python reads it back: an integer when Go writes no
   fraction (|v| < 1e21 and whole), else a float with 17 digits. */
static int put_go_float(Buf *out, double v, long line) {
    if (v == floor(v) && fabs(v) < 1e21) {
        if (v >= 9223372036854775808.0 || v < -9223372036854775808.0)
            return fallback("an integer outside int64", line);
        char text[32];
        int n = snprintf(text, sizeof text, "%lld", (long long)v);
        return buf_put(out, text, n);
    }
    return put_double(out, v);
}

static int put_json_string(Buf *out, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    if (buf_grow(out, n + 2) < 0 || buf_putc(out, '"') < 0) return -1;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        if (buf_put(out, s + run, i - run) < 0) return -1;
        run = i + 1;
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t len = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\t': esc[1] = 't'; break;
        case '\r': esc[1] = 'r'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            esc[1] = 'u'; esc[2] = '0'; esc[3] = '0'; esc[4] = hex[c >> 4]; esc[5] = hex[c & 15]; len = 6;
        }
        if (buf_put(out, esc, len) < 0) return -1;
    }
    if (buf_put(out, s + run, n - run) < 0) return -1;
    return buf_putc(out, '"');
}

/* A string of printable ASCII without `"` or `\\`, as JSON. */
static int put_clean_string(Buf *out, const char *s, size_t n) {
    if (buf_grow(out, n + 2) < 0) return -1;
    char *p = out->data + out->len;
    p[0] = '"';
    memcpy(p + 1, s, n);
    p[n + 1] = '"';
    out->len += n + 2;
    return 0;
}

/* The JSON of a scalar: a plain one (`plain`; 2: printable ASCII without `"` or `\\`, the fast path's)
   resolved as go-yaml v2's resolve.go resolves it, a quoted or block one a string; `line` names it in a
   Fallback. */
static int scalar_json(Buf *out, const char *s, size_t n, int plain, long line) {
    if (!plain) return put_json_string(out, s, n);  /* quoted or block */
    long long iv;
    double fv;
    switch (resolve_plain(s, n, &iv, &fv)) {
    case R_STR: return plain == 2 ? put_clean_string(out, s, n) : put_json_string(out, s, n);
    case R_NULL: return buf_put(out, "null", 4);
    case R_TRUE: return buf_put(out, "true", 4);
    case R_FALSE: return buf_put(out, "false", 5);
    case R_INT: {
        char text[32];
        int len = snprintf(text, sizeof text, "%lld", iv);
        return buf_put(out, text, len);
    }
    case R_FLOAT: return put_go_float(out, fv, line);
    default: return fallback("a value the reference reader judges", line);
    }
}

/* A mapping key's scalar as sigs.k8s.io/yaml turns it into a JSON key (only string, bool and int64 keys
   here). */
static int key_json(Buf *out, const char *s, size_t n, int plain, long line) {
    if (!plain) return put_json_string(out, s, n);
    if (n == 2 && s[0] == '<' && s[1] == '<') return fallback("a merge key", line);
    long long iv;
    double fv;
    switch (resolve_plain(s, n, &iv, &fv)) {
    case R_STR: return plain == 2 ? put_clean_string(out, s, n) : put_json_string(out, s, n);
    case R_TRUE: return buf_put(out, "\"true\"", 6);
    case R_FALSE: return buf_put(out, "\"false\"", 7);
    case R_INT: {
        char text[32];
        int len = snprintf(text, sizeof text, "\"%lld\"", iv);
        return buf_put(out, text, len);
    }
    default: return fallback("a mapping key the reference reader converts", line);
    }
}

/* The JSON of a scalar event's value. */
static int y_scalar(Reader *r, Buf *out) {
    yaml_event_t *e = &r->event;
    return scalar_json(out, (const char *)e->data.scalar.value, e->data.scalar.length, e->data.scalar.plain_implicit,
                       y_line(r, e->start_mark));
}

/* A mapping key as sigs.k8s.io/yaml turns it into a JSON key. */
static int y_key(Reader *r, Buf *out) {
    yaml_event_t *e = &r->event;
    long line = y_line(r, e->start_mark);
    if (e->type != YAML_SCALAR_EVENT) return fallback("a mapping key that is not a scalar", line);
    return key_json(out, (const char *)e->data.scalar.value, e->data.scalar.length, e->data.scalar.plain_implicit,
                    line);
}

static int y_node(Reader *r, Buf *out, int depth, Track track);

static int y_mapping(Reader *r, Buf *out, int depth, Track track) {
    if (depth > MAX_DEPTH) return fallback("nested deeper than 100", y_line(r, r->event.start_mark));
    KeySet *keys = &r->keys[depth];
    keys_clear(keys);
    if (buf_putc(out, '{') < 0) return -1;
    int first = 1;
    while (1) {
        if (y_next(r) < 0) return -1;
        if (r->event.type == YAML_MAPPING_END_EVENT) return buf_putc(out, '}');
        size_t member_start = out->len;
        if (!first && buf_putc(out, ',') < 0) return -1;
        size_t key_at = out->len;
        if (y_key(r, out) < 0) return -1;
        const char *key = out->data + key_at + 1;
        size_t key_len = out->len - key_at - 2;
        int added = keys_add(keys, out->data + key_at, out->len - key_at);
        if (added < 0) return -1;
        if (!added) return fallback("a duplicate key", y_line(r, r->event.start_mark));
        Role role = member_role(track, key, key_len);
        if (buf_putc(out, ':') < 0) return -1;
        if (y_next(r) < 0) return -1;
        size_t value_at = out->len;
        if (y_node(r, out, depth + 1, role.meta ? (Track){1, 1} : (Track){0, 0}) < 0) return -1;
        member_done(r, role, out, value_at, key_at, member_start, first);
        first = 0;
    }
}

static int y_sequence(Reader *r, Buf *out, int depth) {
    if (depth > MAX_DEPTH) return fallback("nested deeper than 100", y_line(r, r->event.start_mark));
    if (buf_putc(out, '[') < 0) return -1;
    int first = 1;
    while (1) {
        if (y_next(r) < 0) return -1;
        if (r->event.type == YAML_SEQUENCE_END_EVENT) return buf_putc(out, ']');
        if (!first && buf_putc(out, ',') < 0) return -1;
        if (y_node(r, out, depth + 1, (Track){0, 0}) < 0) return -1;
        first = 0;
    }
}

/* The node whose first event is r->event. */
static int y_node(Reader *r, Buf *out, int depth, Track track) {
    switch (r->event.type) {
    case YAML_SCALAR_EVENT: return y_scalar(r, out);
    case YAML_MAPPING_START_EVENT: return y_mapping(r, out, depth, track);
    case YAML_SEQUENCE_START_EVENT: return y_sequence(r, out, depth);
    default: return fallback("an unexpected YAML event", y_line(r, r->event.start_mark));
    }
}

/* The next chunk (YAMLReader.Read): 1 with the parser on its document's root event, 0 at the end. A line
   starting with `---` ends a chunk that holds a line already (and is dropped), else it is the chunk's
   first line; after the `---` only blanks or a comment may follow. A chunk without a document is skipped.
   2: the fast path reads the chunk (f_open), a mapping. */
static int f_open(Reader *r, Py_ssize_t start, Py_ssize_t end);

static int y_open_chunk(Reader *r) {
    while (r->pos < r->size) {
        Py_ssize_t start = r->pos, p = r->pos, end = r->size, next = r->size;
        long lines = 0;
        int filled = 0, cut = 0;
        while (p < r->size) {
            const char *nl = memchr(r->data + p, '\n', r->size - p);
            Py_ssize_t le = nl ? nl - r->data : r->size;
            if (le - p >= 3 && memcmp(r->data + p, "---", 3) == 0) {
                Py_ssize_t q = p + 3;
                while (q < le && strchr(" \t\r\v\f", r->data[q])) q++;
                if (q < le && r->data[q] != '#')
                    return fallback("an invalid document separator", r->next_line + lines + 1);
                if (filled) { end = p; next = nl ? le + 1 : r->size; cut = 1; break; }
            }
            filled = 1;
            lines++;
            p = nl ? le + 1 : r->size;
        }
        r->chunk_line = r->next_line;
        r->next_line = r->chunk_line + lines + cut;
        r->chunk_start = start;
        r->pos = next;
        if (r->fast && f_open(r, start, end)) return 2;
        if (!yaml_parser_initialize(&r->parser)) return no_memory();
        r->parser_live = 1;
        yaml_parser_set_input_string(&r->parser, (const unsigned char *)r->data + start, end - start);
        if (y_next(r) < 0 || y_next(r) < 0) return -1;  /* the stream's start, then a document's or its end */
        if (r->event.type == YAML_STREAM_END_EVENT) { y_stop(r); continue; }
        if (y_next(r) < 0) return -1;  /* the document's root */
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ items and documents */

static PyObject *S_item, *S_object, *S_Pod, *S_Node;  /* interned: the tags, and the kinds most items have */

/* Leave metadata.managedFields out of a Pod's or Node's text in `b` (where member_done found it). */
static void cut_text(Reader *r, Buf *b) {
    if (r->has_cut && is_cut_kind(r)) {
        size_t from = r->cut_from, to = r->cut_to;
        if (r->has_cut == 2 && to < b->len && b->data[to] == ',') to++;
        memmove(b->data + from, b->data + to, b->len - to);
        b->len -= to - from;
    }
}

static void cut_managed(Reader *r) { cut_text(r, &r->out); }

/* (tag, json, kind): tag "item" or "object" */
static PyObject *text_event(PyObject *tag, const char *text, size_t len, const char *kind, int kind_len) {
    PyObject *json = PyBytes_FromStringAndSize(text, (Py_ssize_t)len);
    if (!json) return NULL;
    PyObject *k;
    if (kind_len < 0) k = Py_NewRef(Py_None);
    else if (kind_len == 3 && memcmp(kind, "Pod", 3) == 0) k = Py_NewRef(S_Pod);
    else if (kind_len == 4 && memcmp(kind, "Node", 4) == 0) k = Py_NewRef(S_Node);
    else k = PyUnicode_DecodeUTF8(kind, kind_len, NULL);
    if (!k) { Py_DECREF(json); return NULL; }
    PyObject *event = PyTuple_New(3);
    if (!event) { Py_DECREF(json); Py_DECREF(k); return NULL; }
    PyTuple_SET_ITEM(event, 0, Py_NewRef(tag));
    PyTuple_SET_ITEM(event, 1, json);
    PyTuple_SET_ITEM(event, 2, k);
    return event;
}

/* ("item", json, kind) */
static PyObject *item_event(const char *text, size_t len, const char *kind, int kind_len) {
    return text_event(S_item, text, len, kind, kind_len);
}

static PyObject *take_item(Reader *r) {
    cut_managed(r);
    return item_event(r->out.data, r->out.len, r->kind, r->kind_len);
}

static void item_start(Reader *r) {
    r->out.len = 0;
    r->kind_len = -1;
    r->has_cut = 0;
}

static PyObject *bytes_of(Reader *r) { return PyBytes_FromStringAndSize(r->out.data, (Py_ssize_t)r->out.len); }

/* The next item of a list (phase 2 or 3) into r->out, and what follows it: 0, or 1
   where it was the last (the phase moves on), -1 on an error. Touches no Python object (see "prefetch"). */
static int j_item(Reader *r) {
    j_space(r);
    item_start(r);
    if (j_value(r, &r->out, 1, (Track){1, 0}) < 0) return -1;
    j_space(r);
    if (r->pos >= r->size) return j_fail(r, "a malformed JSON array");
    char c = r->data[r->pos++];
    int last = c == ']';
    if (last) r->phase = r->phase == 2 ? 6 : 5;
    else if (c != ',') return j_fail(r, "a malformed JSON array");
    return last;
}

/* ------------------------------------------------------------------ prefetch

   Most of a large file is one list's items (a JSON List) or a stream of documents that are objects (a
   multi-document YAML file: Nodes, Pods...), and the caller spends longer decoding one than this reader
   spends finding it. So while Python decodes, a thread of the reader reads ahead — a JSON list's next items
   (j_item), or the next documents while each is an object (document_ahead: hold_object, as objects=True
   reads them, YAML by its fast path or by libyaml, JSON too) — into batches of records (the text, its kind,
   where the reader was after it); next() hands them out in order as the events the reader alone gives
   ("item" or "object"), and then the thread's first error (a Sink: Fallback, Retry, no memory), exactly
   where the reader alone would have raised it (every record before it handed out first; Reader_next turns a
   Fallback into Retry as it would, the state being the thread's at the error). The thread holds no GIL and
   touches no Python object. It owns the scanning state (pos, phase, out, scratch, keys; YAML's chunk, fast
   path and parser; the held object) from its start to its join; the consumer reads only the batches (and
   Reader.position tells the end of the last record handed out).

   A JSON list's thread ends at the list's end (its last record) and the reader reads on. A documents thread
   ends at the text's end, or at a document that is no object (a list, a sequence, a scalar): it gives that
   document back — the state set back to the document's start, as the reader had it before opening it — and
   the reader, once the records before it are handed out and the thread joined, reads it itself (the same
   reading, so the same events or error); documents are read ahead again from `prefetch` bytes further on.

   Batches grow from PREFETCH_FIRST to PREFETCH_BATCH bytes (the consumer waits for the first one only
   briefly); at most PREFETCH_AHEAD bytes wait, so memory stays what the caller keeps. Without a thread
   (pthread_create refused, less than `prefetch` bytes left, objects=False for documents) the reader reads
   itself: the same events, by the same functions. The thread is stopped and joined when the reader is
   deallocated (Python having let go of it mid-stream, after an exception...); a child forked while it ran
   has no thread: there the reader raises on next() and its deallocation leaves the thread's state alone. */

/* What reading a member of a document's mapping found (j_member, y_member, f_member_step): a member,
   written; the mapping's end; its top-level `items` sequence (the phase moved on to its items, nothing
   written); or (YAML) a span for libyaml opened, or closed, the fast path then going on. */
enum { M_END, M_MEMBER, M_ITEMS, M_SPAN };

#define PREFETCH_FIRST ((size_t)16 << 10)
#define PREFETCH_BATCH ((size_t)1 << 20)
#define PREFETCH_AHEAD ((size_t)16 << 20)

typedef struct {
    size_t off, len;     /* the record's text in the batch */
    Py_ssize_t pos;      /* where the reader was after it (Reader.position) */
    int last;            /* the list's last item */
    int kind_len;
    char kind[64];
} Record;

typedef struct Batch {
    struct Batch *next;
    Buf text;
    Record *recs;
    size_t n, cap;
} Batch;

static void batch_free(Batch *b) {
    if (!b) return;
    free(b->text.data);
    free(b->recs);
    free(b);
}

/* The text (`len` bytes), its kind and the position after it, as a record of `b`. */
static int batch_add(Batch *b, const char *text, size_t len, Py_ssize_t pos, int last, Reader *r) {
    if (grow_array((void **)&b->recs, &b->cap, b->n, sizeof(Record), 256) < 0) return -1;
    Record *rec = &b->recs[b->n];
    rec->off = b->text.len;
    rec->len = len;
    rec->pos = pos;
    rec->last = last;
    rec->kind_len = r->kind_len;
    if (r->kind_len > 0) memcpy(rec->kind, r->kind, (size_t)r->kind_len);
    if (buf_put(&b->text, text, len) < 0) return -1;
    b->n++;
    return 0;
}

static Py_ssize_t reader_at(Reader *r);
static int hold_object(Reader *r);
static int open_document(Reader *r);

/* One step of a list's thread: its next item as a record; 1 after the last, -1 on an error, else 0. */
static int item_ahead(Reader *r, Batch *b) {
    int got = j_item(r);
    if (got < 0) return -1;
    cut_managed(r);
    return batch_add(b, r->out.data, r->out.len, r->pos, got, r) < 0 ? -1 : got;
}

/* One step of a documents thread: the next document, an object, as a record (0); or (1) the text's end,
   or a document that is no object, given back (the state as it was before it); -1 on an error. */
static int document_ahead(Reader *r, Batch *b) {
    Py_ssize_t pos = r->pos, fast_items = r->fast_items, fast_members = r->fast_members;
    long next_line = r->next_line;
    int opened = open_document(r), got = opened == 1 ? hold_object(r) : M_ITEMS;
    if (opened < 0 || got < 0) return -1;
    if (got == M_END) return batch_add(b, r->obj.data, r->obj.len, reader_at(r), 0, r) < 0 ? -1 : 0;
    y_stop(r);  /* given back (or the end): the reader opens it again itself */
    r->fmode = r->in_items = r->span = r->replaying = 0;
    r->phase = 0;
    r->pos = pos;
    r->next_line = next_line;
    r->fast_items = fast_items;
    r->fast_members = fast_members;
    r->resume_at = r->prefetch > PY_SSIZE_T_MAX - pos ? PY_SSIZE_T_MAX : pos + r->prefetch;
    return 1;
}

/* The thread: batches of records until its end (the list's, or the documents' it reads), an error, or the
   consumer's stop. */
static void *prefetch_run(void *arg) {
    Reader *r = arg;
    sink = &r->sink;
    int (*step)(Reader *, Batch *) = r->ahead_documents ? document_ahead : item_ahead;
    size_t batch = PREFETCH_FIRST;
    int done = 0;
    while (!done) {
        Batch *b = calloc(1, sizeof(Batch));
        if (!b) { no_memory(); break; }
        while (b->text.len < batch) {
            if (step(r, b)) { done = 1; break; }
        }
        if (batch < PREFETCH_BATCH) batch *= 2;
        pthread_mutex_lock(&r->lock);
        if (b->n) {
            if (r->tail) r->tail->next = b; else r->head = b;
            r->tail = b;
            r->waiting += b->text.len;
        } else {
            batch_free(b);
        }
        pthread_cond_broadcast(&r->cond);
        while (!r->stop && r->waiting > PREFETCH_AHEAD) pthread_cond_wait(&r->cond, &r->lock);
        done |= r->stop;
        pthread_mutex_unlock(&r->lock);
    }
    pthread_mutex_lock(&r->lock);
    r->finished = 1;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* Start the thread for the current list's items, or (`documents`) for the documents from here (1); or
   leave the reading to next() (0). */
static int prefetch_start(Reader *r, int documents) {
    if (r->prefetch < 0 || r->size - r->pos < r->prefetch) return 0;
    if (documents && (!r->objects || r->pos < r->resume_at)) return 0;
    if (!r->sync_ready) {
        if (pthread_mutex_init(&r->lock, NULL) != 0) return 0;
        if (pthread_cond_init(&r->cond, NULL) != 0) { pthread_mutex_destroy(&r->lock); return 0; }
        r->sync_ready = 1;
    }
    r->head = r->tail = NULL;
    r->waiting = 0;
    r->finished = r->stop = 0;
    r->sink.kind = 0;
    r->cpos = reader_at(r);
    r->ahead_documents = documents;
    r->owner = getpid();
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return 0;
    pthread_attr_setstacksize(&attr, (size_t)1 << 20);  /* j_value, y_node, f_node nest at most MAX_DEPTH deep */
    int started = pthread_create(&r->thread, &attr, prefetch_run, r) == 0;
    pthread_attr_destroy(&attr);
    r->ahead = started;
    return started;
}

/* Whether this process is a child forked while the thread ran (it has no thread, and the lock may be held). */
static int forked(Reader *r) { return getpid() != r->owner; }

/* Stop the thread (if still running), wait for it, and drop what it read and was not handed out. */
static void prefetch_end(Reader *r) {
    if (!r->ahead) return;
    r->ahead = 0;
    if (forked(r)) { r->head = r->tail = r->cur = NULL; r->sync_ready = 0; return; }  /* (left as they are) */
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    Py_BEGIN_ALLOW_THREADS
    pthread_join(r->thread, NULL);
    Py_END_ALLOW_THREADS
    while (r->head) { Batch *b = r->head; r->head = b->next; batch_free(b); }
    r->tail = NULL;
    batch_free(r->cur);
    r->cur = NULL;
}

/* The next record the thread read as its event (1, *event; NULL on an error); or 0 where a documents thread
   has ended without an error (joined: the reader reads on itself). A list's thread ends with its last item,
   or its error. */
static int prefetched(Reader *r, PyObject **event) {
    *event = NULL;
    while (!r->cur || r->cur_i == r->cur->n) {
        if (forked(r)) {
            PyErr_SetString(PyExc_RuntimeError, "a reader forked while its thread read ahead cannot go on");
            return 1;
        }
        batch_free(r->cur);
        r->cur = NULL;
        Batch *b;
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&r->lock);
        while (!r->head && !r->finished) pthread_cond_wait(&r->cond, &r->lock);
        b = r->head;
        if (b) {
            r->head = b->next;
            if (!r->head) r->tail = NULL;
            r->waiting -= b->text.len;
            pthread_cond_broadcast(&r->cond);
        }
        pthread_mutex_unlock(&r->lock);
        Py_END_ALLOW_THREADS
        if (!b) {
            Sink error = r->sink;
            int documents = r->ahead_documents;
            prefetch_end(r);
            if (documents && !error.kind) return 0;
            sink_raise(&error);
            return 1;
        }
        r->cur = b;
        r->cur_i = 0;
    }
    Record *rec = &r->cur->recs[r->cur_i++];
    r->cpos = rec->pos;
    *event = text_event(r->ahead_documents ? S_object : S_item, r->cur->text.data + rec->off, rec->len, rec->kind,
                        rec->kind_len);
    if (rec->last) prefetch_end(r);  /* the thread ends with the list: the reader's state is its own again */
    return 1;
}

/* A document's member: its key's JSON, `:` and its value's JSON appended to `out`, *m where they are.
   `tracked`: the document's root as an item's (its kind noted, its metadata's managedFields found). */
static int j_member(Reader *r, Buf *out, Member *m, int tracked);

static PyObject *mapping_start(Reader *r);
static PyObject *member_event(Reader *r);

/* The thread's next event (1; NULL on an error) while it reads ahead, or between documents (phase 0) where
   it may start (the documents from here); 0: the reader reads on itself. Nothing of the scanning state is
   read before: the thread may own it. */
static int ahead_event(Reader *r, PyObject **event) {
    if (!r->ahead && !(r->phase == 0 && prefetch_start(r, 1))) return 0;
    return prefetched(r, event);
}

/* The next JSON document opened (phase 0): 1 a mapping (phase 1, or 4 where it is `{}`; its top keys
   cleared), 2 another value (at its first character), 0 the text's end. */
static int j_open_document(Reader *r) {
    j_space(r);
    if (r->pos >= r->size) return 0;
    if (r->data[r->pos] != '{') return 2;
    r->pos++;
    keys_clear(&r->top);
    j_space(r);
    if (r->pos < r->size && r->data[r->pos] == '}') { r->pos++; r->phase = 4; }
    else r->phase = 1;
    return 1;
}

/* JSON: the next event. */
static PyObject *j_next(Reader *r) {
    PyObject *event;
    if (ahead_event(r, &event)) return event;
    j_space(r);
    if (r->phase == 0) {
        int opened = j_open_document(r);
        if (!opened) { r->done = 1; Py_RETURN_NONE; }
        if (opened == 1) return mapping_start(r);
        char c = r->data[r->pos];
        if (c == '[') {
            r->pos++;
            j_space(r);
            if (r->pos < r->size && r->data[r->pos] == ']') { r->pos++; r->phase = 5; }
            else r->phase = 3;
            return Py_BuildValue("(s)", "seq");
        }
        item_start(r);
        if (j_value(r, &r->out, 1, (Track){0, 0}) < 0) return NULL;
        PyObject *json = bytes_of(r);
        return json ? Py_BuildValue("(sN)", "scalar", json) : NULL;
    }
    if (r->phase == 5) { r->phase = 0; return Py_BuildValue("(s)", "end"); }
    if (r->phase == 1 || r->phase == 4) return member_event(r);
    if (r->phase == 6) {  /* the end of the items: what follows the array */
        if (r->pos >= r->size) { j_fail(r, "a malformed JSON object"); return NULL; }
        char c = r->data[r->pos++];
        if (c == '}') r->phase = 4;
        else if (c == ',') { j_space(r); r->phase = 1; }
        else { j_fail(r, "a malformed JSON object"); return NULL; }
        return Py_BuildValue("(s)", "end_items");
    }
    /* phase 2 or 3: an item */
    if (prefetch_start(r, 0) && prefetched(r, &event)) return event;
    if (j_item(r) < 0) return NULL;
    return take_item(r);
}

static int is_word(const char *s, size_t n, const char *word) { return n == strlen(word) && memcmp(s, word, n) == 0; }

/* A held object's kind from its `kind` member's value (written at value_at): a string's text, unescaped
   as Python decodes it (an item's kind is noted only when plain: see member_done), else none. */
static int object_kind(Reader *r, Buf *out, size_t value_at) {
    const char *v = out->data + value_at;
    size_t n = out->len - value_at;
    r->kind_len = -1;
    if (v[0] != '"') return 0;
    if (!memchr(v, '\\', n)) { note_kind(r, v + 1, n - 2); return 0; }
    if (j_unescape(v + 1, n - 2, &r->scratch) < 0) return -1;
    note_kind(r, r->scratch.data, r->scratch.len);
    return 0;
}

/* After a tracked member's value (m): the object's kind, or where its metadata is. */
static int top_member_done(Reader *r, Buf *out, int is_kind, int is_meta, Member *m) {
    if (is_meta) { r->has_meta = 1; r->meta_at = m->value_at; r->meta_len = m->value_len; }
    return is_kind ? object_kind(r, out, m->value_at) : 0;
}

static int j_member(Reader *r, Buf *out, Member *m, int tracked) {
    if (r->phase == 4) { r->phase = 0; return M_END; }
    if (r->pos >= r->size || r->data[r->pos] != '"') return j_fail(r, "a malformed JSON object");
    size_t key_at = out->len;
    int escaped;
    if (j_string(r, out, &escaped) < 0) return -1;
    if (j_unescape(out->data + key_at + 1, out->len - key_at - 2, &r->scratch) < 0) return -1;
    int added = keys_add(&r->top, r->scratch.data, r->scratch.len);
    if (added < 0) return -1;
    if (!added) return j_fail(r, "a duplicate key");
    j_space(r);
    if (r->pos >= r->size || r->data[r->pos] != ':') return j_fail(r, "a malformed JSON object");
    r->pos++;
    j_space(r);
    const char *key = r->scratch.data;
    size_t key_len = r->scratch.len;
    if (is_word(key, key_len, "items") && r->pos < r->size && r->data[r->pos] == '[') {
        out->len = key_at;
        r->pos++;
        j_space(r);
        if (r->pos < r->size && r->data[r->pos] == ']') { r->pos++; r->phase = 6; }
        else r->phase = 2;
        return M_ITEMS;
    }
    int is_kind = tracked && is_word(key, key_len, "kind"), is_meta = tracked && is_word(key, key_len, "metadata");
    m->key_at = key_at;
    m->key_len = out->len - key_at;
    if (buf_putc(out, ':') < 0) return -1;
    m->value_at = out->len;
    if (j_value(r, out, 1, is_meta ? (Track){1, 1} : (Track){0, 0}) < 0) return -1;
    m->value_len = out->len - m->value_at;
    if (top_member_done(r, out, is_kind, is_meta, m) < 0) return -1;
    j_space(r);
    if (r->pos >= r->size) return j_fail(r, "a malformed JSON object");
    char c = r->data[r->pos++];
    if (c == '}') r->phase = 4;
    else if (c != ',') return j_fail(r, "a malformed JSON object");
    else j_space(r);
    return M_MEMBER;
}

/* ------------------------------------------------------------------ YAML: the fast path

   Most of a large YAML file is the items of one `items:` list, written by kubectl (go-yaml v2's emitter,
   through sigs.k8s.io/yaml) in a small regular part of the language. libyaml's scanner, and its malloc and
   free per token, cost ~7 times what the same content costs as JSON; the fast path reads that part by
   hand and gives libyaml everything else, with the same result, event for event and byte for byte.

   A chunk whose first line is a mapping key at column 0 is read line by line ("fmode"). Its column-0
   lines cut it into spans: `items:` (followed by `- ` lines) opens the items, each `- ` line at column 0
   begins an item that runs to the next column-0 line (blank lines and comments are not column-0 lines
   here), any other line begins members that run to the next column-0 line that is not a `-` line (a
   member's value may be a sequence at column 0). `...` ends the document (the rest of the chunk is not
   read, as before). An item is read by the fast scanner (f_item) if it lies in its subset: block mappings
   and sequences (`- ` at the key's column, as go-yaml v2 writes them, or deeper), scalars (plain and
   single-quoted, on one line or folded over more, as go-yaml wraps long ones; double-quoted on one line
   with \\ \" \/ \n \t \r escapes), `{}`, `[]`, `|` and `|-` literals, bytes 0x20-0x7E only. Anything
   else (tabs, CR, comments and blank lines inside it, anchors, aliases, tags, `?`, flow collections,
   other block scalars, a key longer than 1,000 bytes...)
   makes it give the item back, and libyaml reads the item's span as a document of its own
   (`- ...` alone: a sequence of one item). A member of the document's mapping (a column-0 key, but
   `items`) is read by the same scanner as a member of a mapping at column 0 (f_member), or given back
   the same way, libyaml reading its span (a file of many documents, such as a fleet of Karmada Clusters,
   is all members).

   Why a span read alone gives the events it gives inside the document: at a column-0 line that is not
   blank, not a comment and (for an item's end) not a `-` line, libyaml's scanner holds, in the whole
   document as in the span alone, the indentation 0, no flow level, no pending simple key (a simple key
   never spans a line), and the line is a new token: no plain scalar continues at column 0 (it needs a
   column above the enclosing block's indentation, >= 0), no block scalar either (its indentation is
   >= 1), and a quoted scalar or flow collection still open there would leave the span alone malformed.
   So the span's tokens are the same, but that alone its first block collection (the item's sequence)
   is opened at column 0 where inside the document the items are go-yaml's indentless sequence: the
   events of the item between them are the same. The span must give exactly one item (one mapping for
   members) and end cleanly; else, and whenever libyaml finds it malformed, the reader raises `Retry`.

   `Retry` is also what any Fallback becomes while a chunk is read in fmode, and the caller then reads the
   whole file again with Reader(..., fast=False), the libyaml path: a file the fast path reads completely
   gives the events of the libyaml path, and any other gives that path's events or Fallback, by
   construction. Line numbers in spans are the file's (chunk_line). */

#define F_BAIL -2
#define F_OPEN -3  /* a single quote still open at the line's end (f_quoted_lines may read it) */

static int is_entry(const char *d, Py_ssize_t p, Py_ssize_t le) {
    return d[p] == '-' && (p + 1 == le || d[p + 1] == ' ');
}

typedef struct {
    const char *d;
    Py_ssize_t end;           /* the chunk's end */
    Py_ssize_t ls, le, q;     /* the current line: its start, its end (its '\n' or `end`), first non-space */
    int col;                  /* q - ls; 0 on a column-0 line and at the end (the item's end) */
    long line;                /* the current line, 1-based */
} Lines;

static int spaces_only(const char *d, Py_ssize_t p, Py_ssize_t end) {
    while (p < end && d[p] == ' ') p++;
    return p == end;
}

/* The line starting at `ls` as the current line: F_BAIL if its first character is not printable ASCII (a
   tab, CR...); a blank line is the end (column 0) if only blank lines lie between it and a column-0 line,
   else F_BAIL (blank lines inside a plain scalar are line breaks). */
static int f_load(Lines *L, Py_ssize_t ls) {
    L->ls = ls;
    if (ls >= L->end) { L->col = 0; L->q = L->le = L->end; return 0; }
    const char *nl = memchr(L->d + ls, '\n', (size_t)(L->end - ls));
    L->le = nl ? nl - L->d : L->end;
    Py_ssize_t q = ls;
    while (q < L->le && L->d[q] == ' ') q++;
    L->q = q;
    L->col = (int)(q - ls);
    if (q == L->le) {  /* blank lines: the end if a column-0 line (or the text's end) comes next */
        Py_ssize_t p = L->le;
        while (p < L->end) {
            Py_ssize_t s = p + 1, t = s;
            while (t < L->end && L->d[t] == ' ') t++;
            if (t < L->end && L->d[t] != '\n') {
                if (t != s) return F_BAIL;
                break;
            }
            p = t;
        }
        L->col = 0;
        return 0;
    }
    unsigned char c = (unsigned char)L->d[q];
    return c < 0x21 || c > 0x7e ? F_BAIL : 0;
}

/* Whether the comment line [p, le) holds only what libyaml's reader admits in a comment on one line: tabs,
   printable ASCII, and UTF-8 of U+00A0 and above but for the line breaks U+2028, U+2029 and U+FFFE,
   U+FFFF (yaml_parser_update_buffer); the fast path skips comments unread. */
static int comment_ok(const char *d, Py_ssize_t p, Py_ssize_t le) {
    while (p < le) {
        unsigned char c = (unsigned char)d[p];
        if (c == '\t' || (c >= 0x20 && c < 0x7f)) { p++; continue; }
        int n = c < 0x80 ? 0 : utf8_len((const unsigned char *)d + p, le - p);
        if (n == 0 || (n == 2 && c == 0xC2 && (unsigned char)d[p + 1] < 0xA0)) return 0;
        if (n == 3 && c == 0xE2 && (unsigned char)d[p + 1] == 0x80 && ((unsigned char)d[p + 2] & 0xFE) == 0xA8)
            return 0;
        if (n == 3 && c == 0xEF && (unsigned char)d[p + 1] == 0xBF && (unsigned char)d[p + 2] >= 0xBE) return 0;
        p += n;
    }
    return 1;
}

static int f_next(Lines *L) {
    L->line++;
    return f_load(L, L->le < L->end ? L->le + 1 : L->end);
}

/* A plain scalar at p: *stop where it stops (the line's end, or a `:` followed by a space or the line's
   end), *trim its end less trailing spaces. F_BAIL where libyaml could read otherwise: a first character
   that is an indicator (libyaml's fetch_next_token; `-` followed by a non-space is plain), a byte outside
   0x20-0x7E, ` #` (a comment). */
static int f_plain_body(Lines *L, Py_ssize_t p, Py_ssize_t *stop, Py_ssize_t *trim, int *clean);

static int f_plain(Lines *L, Py_ssize_t p, Py_ssize_t *stop, Py_ssize_t *trim, int *clean) {
    const char *d = L->d;
    unsigned char c = (unsigned char)d[p];
    if (c < 0x21 || c > 0x7e) return F_BAIL;
    switch (c) {  /* the indicators */
    case '-':
        if (p + 1 < L->le && (unsigned char)d[p + 1] > 0x20 && (unsigned char)d[p + 1] < 0x7f) break;
        return F_BAIL;
    case '?': case ':': case ',': case '[': case ']': case '{': case '}': case '#': case '&': case '*': case '!':
    case '|': case '>': case '\'': case '"': case '%': case '@': case '`':
        return F_BAIL;
    }
    return f_plain_body(L, p, stop, trim, clean);
}

/* A plain scalar's text from p to its stop (see f_plain; also a continuation line's). */
static int f_plain_body(Lines *L, Py_ssize_t p, Py_ssize_t *stop, Py_ssize_t *trim, int *clean) {
    const char *d = L->d;
    unsigned char c;
    Py_ssize_t i = p;
    int escape = 0;
    for (; i < L->le; i++) {
        c = (unsigned char)d[i];
        if (c < 0x20 || c > 0x7e) return F_BAIL;
        if (c == ':' && (i + 1 == L->le || d[i + 1] == ' ')) break;
        if (c == ' ' && i + 1 < L->le && d[i + 1] == '#') return F_BAIL;
        escape |= c == '"' || c == '\\';
    }
    *clean = !escape;
    *stop = i;
    while (i > p && d[i - 1] == ' ') i--;
    *trim = i;
    return 0;
}

/* A quoted scalar at p (its quote), closed on this line, unquoted into `into` (libyaml's
   scan_flow_scalar: '' in single quotes; in double quotes only the escapes \\ \" \/ \n \t \r here);
   *after: past its closing quote. */
static int f_quoted(Lines *L, Py_ssize_t p, Buf *into, Py_ssize_t *after) {
    const char *d = L->d;
    char quote = d[p];
    into->len = 0;
    Py_ssize_t i = p + 1, run = i;
    while (1) {
        if (i >= L->le) return quote == '\'' ? F_OPEN : F_BAIL;
        unsigned char c = (unsigned char)d[i];
        if (c < 0x20 || c > 0x7e) return F_BAIL;
        if (c == (unsigned char)quote) {
            if (quote == '"' || i + 1 >= L->le || d[i + 1] != '\'') break;
            if (buf_put(into, d + run, (size_t)(i + 1 - run)) < 0) return -1;  /* '' */
            i += 2;
            run = i;
            continue;
        }
        if (c == '\\' && quote == '"') {
            if (i + 1 >= L->le) return F_BAIL;
            char e = d[i + 1], v;
            switch (e) {
            case '\\': v = '\\'; break;
            case '"': v = '"'; break;
            case '/': v = '/'; break;
            case 'n': v = '\n'; break;
            case 't': v = '\t'; break;
            case 'r': v = '\r'; break;
            default: return F_BAIL;
            }
            if (buf_put(into, d + run, (size_t)(i - run)) < 0 || buf_putc(into, v) < 0) return -1;
            i += 2;
            run = i;
            continue;
        }
        i++;
    }
    if (buf_put(into, d + run, (size_t)(i - run)) < 0) return -1;
    *after = i + 1;
    return 0;
}

/* A scalar token at p: its text (*s, *n; quoted ones in r->fscratch), `plain` (see scalar_json); 1 if it is a key (a `:`
   follows, then a space or the line's end; *after is past the `:`), 0 if the line ends after it. A key
   longer than 1,000 bytes is given back: libyaml's simple keys end at 1,024. */
static int f_scalar(Reader *r, Lines *L, Py_ssize_t p, const char **s, size_t *n, int *plain,
                    Py_ssize_t *after) {
    const char *d = L->d;
    Py_ssize_t a;
    if (d[p] == '\'' || d[p] == '"') {
        int got = f_quoted(L, p, &r->fscratch, &a);
        if (got) return got;
        *s = r->fscratch.len ? r->fscratch.data : "";
        *n = r->fscratch.len;
        *plain = 0;
        while (a < L->le && d[a] == ' ') a++;
    } else {
        int clean;
        int got = f_plain(L, p, &a, after, &clean);
        if (got) return got;
        *s = d + p;
        *n = (size_t)(*after - p);
        *plain = clean ? 2 : 1;
    }
    if (a == L->le) return 0;
    if (d[a] != ':' || (a + 1 < L->le && d[a + 1] != ' ') || a - p > 1000) return F_BAIL;
    *after = a + 1;
    return 1;
}

static int f_node(Reader *r, Lines *L, Py_ssize_t p, Buf *out, int depth, Track track, int parent);

/* A scalar that ended its line, once the next line shows it is not continued (a line indented deeper than
   the enclosing block collection, `parent`, would continue a plain scalar, or be an error). */
static int f_scalar_done(Reader *r, Lines *L, Buf *out, const char *s, size_t n, int plain, int parent) {
    long line = L->line;
    int got = f_next(L);
    if (got) return got;
    if (L->col > parent) {  /* a plain scalar goes on (go-yaml wraps long ones): folded, as libyaml's */
        if (!plain) return F_BAIL;  /* scan_plain_scalar folds it, one space for each line break */
        Buf *text = &r->fscratch;
        text->len = 0;
        if (buf_put(text, s, n) < 0) return -1;
        do {
            Py_ssize_t stop, trim;
            int clean;
            if (L->d[L->q] == '#') return F_BAIL;  /* a comment ends it */
            got = f_plain_body(L, L->q, &stop, &trim, &clean);
            if (got) return got;
            if (stop != L->le) return F_BAIL;  /* `: ` */
            if (buf_putc(text, ' ') < 0 || buf_put(text, L->d + L->q, (size_t)(trim - L->q)) < 0) return -1;
            if (!clean) plain = 1;
            got = f_next(L);
            if (got) return got;
        } while (L->col > parent);
        s = text->data;
        n = text->len;
    }
    return scalar_json(out, s, n, plain, line);
}

/* A single-quoted scalar at p that goes on over the next lines, each deeper than `parent` and none empty:
   folded as libyaml's scan_flow_scalar folds it (the spaces around a line break dropped, one space for
   it), then the line's end. */
static int f_quoted_lines(Reader *r, Lines *L, Py_ssize_t p, Buf *out, int parent) {
    const char *d = L->d;
    Buf *text = &r->fscratch;
    text->len = 0;
    long line = L->line;
    Py_ssize_t i = p + 1;
    while (1) {
        Py_ssize_t run = i;
        while (i < L->le) {
            unsigned char c = (unsigned char)d[i];
            if (c < 0x20 || c > 0x7e) return F_BAIL;
            if (c == '\'') {
                if (i + 1 >= L->le || d[i + 1] != '\'') break;
                if (buf_put(text, d + run, (size_t)(i + 1 - run)) < 0) return -1;  /* '' */
                i += 2;
                run = i;
                continue;
            }
            i++;
        }
        if (buf_put(text, d + run, (size_t)(i - run)) < 0) return -1;
        if (i < L->le) break;  /* the closing quote */
        while (text->len && text->data[text->len - 1] == ' ') text->len--;
        if (buf_putc(text, ' ') < 0) return -1;
        int got = f_next(L);
        if (got) return got;
        if (L->col <= parent) return F_BAIL;
        i = L->q;
    }
    Py_ssize_t a = i + 1;
    while (a < L->le && d[a] == ' ') a++;
    if (a != L->le) return F_BAIL;
    int got = f_next(L);
    if (got) return got;
    if (L->col > parent) return F_BAIL;
    return scalar_json(out, text->data, text->len, 0, line);
}

/* `{}` or `[]` alone at the end of its line. */
static int f_empty(Lines *L, Py_ssize_t p, Buf *out, int depth, int parent) {
    const char *d = L->d;
    char open = d[p];
    if (p + 1 >= L->le || d[p + 1] != (open == '{' ? '}' : ']')) return F_BAIL;
    Py_ssize_t a = p + 2;
    while (a < L->le && d[a] == ' ') a++;
    if (a != L->le) return F_BAIL;
    long line = L->line;
    int got = f_next(L);
    if (got) return got;
    if (L->col > parent) return F_BAIL;
    if (depth > MAX_DEPTH) return fallback("nested deeper than 100", line);
    return buf_put(out, open == '{' ? "{}" : "[]", 2);
}

/* A literal block scalar `|` or `|-` (clip or strip chomping, the indentation detected) whose lines are
   all indented alike or deeper, the first right after its header, deeper than `parent` (libyaml's
   scan_block_scalar then takes the first line's indentation); empty lines inside (no spaces on them). */
static int f_literal(Reader *r, Lines *L, Py_ssize_t p, Buf *out, int parent) {
    const char *d = L->d;
    int strip = p + 1 < L->le && d[p + 1] == '-';
    Py_ssize_t a = p + 1 + strip;
    while (a < L->le && d[a] == ' ') a++;
    if (a != L->le || L->le >= L->end) return F_BAIL;
    Buf *text = &r->fscratch;
    text->len = 0;
    int got = f_next(L);
    if (got) return got;
    int indent = L->col;
    if (indent <= parent) return F_BAIL;
    size_t breaks = 0;  /* empty lines not yet written */
    while (1) {
        for (; breaks; breaks--) if (buf_putc(text, '\n') < 0) return -1;
        for (Py_ssize_t i = L->ls + indent; i < L->le; i++) {
            unsigned char c = (unsigned char)d[i];
            if (c < 0x20 || c > 0x7e) return F_BAIL;
        }
        if (L->le >= L->end) return F_BAIL;  /* no line break after it */
        if (buf_put(text, d + L->ls + indent, (size_t)(L->le - L->ls - indent)) < 0) return -1;
        breaks = 1;
        while (1) {  /* the next non-empty line */
            L->line++;
            Py_ssize_t ls = L->le + 1, t = ls;
            while (t < L->end && d[t] == ' ') t++;
            if (t != ls && (t == L->end || d[t] == '\n')) return F_BAIL;  /* spaces alone on a line */
            if (t < L->end && d[t] == '\n') { breaks++; L->le = ls; continue; }
            got = f_load(L, ls);
            if (got) return got;
            break;
        }
        if (L->col < indent) break;
    }
    if (!strip && buf_putc(text, '\n') < 0) return -1;
    if (L->col > parent) return F_BAIL;
    return put_json_string(out, text->len ? text->data : "", text->len);
}

/* A block sequence whose first `-` is at p; `indentless`: at its mapping's column (go-yaml v2), so that a
   key at that column ends it. */
static int f_sequence(Reader *r, Lines *L, Py_ssize_t p, Buf *out, int depth, int indentless) {
    const char *d = L->d;
    int sc = (int)(p - L->ls);
    if (depth > MAX_DEPTH) return fallback("nested deeper than 100", L->line);
    if (buf_putc(out, '[') < 0) return -1;
    int first = 1;
    while (1) {
        if (!first && buf_putc(out, ',') < 0) return -1;
        Py_ssize_t v = p + 1;
        while (v < L->le && d[v] == ' ') v++;
        if (v == L->le) return F_BAIL;  /* `-` alone on its line */
        int got = f_node(r, L, v, out, depth + 1, (Track){0, 0}, sc);
        if (got) return got;
        first = 0;
        if (L->col < sc) break;
        if (L->col > sc) return F_BAIL;
        p = L->q;
        if (!is_entry(d, p, L->le)) {
            if (indentless) break;
            return F_BAIL;
        }
    }
    return buf_putc(out, ']');
}

/* A member's value, after its key's `:` at `after`, in a mapping at column `mc`. */
static int f_value(Reader *r, Lines *L, Py_ssize_t after, Buf *out, int depth, Track track, int mc) {
    const char *d = L->d;
    Py_ssize_t p = after;
    while (p < L->le && d[p] == ' ') p++;
    if (p < L->le) {  /* on the key's line: a scalar, `{}`, `[]`, `|` */
        if (d[p] == '{' || d[p] == '[') return f_empty(L, p, out, depth, mc);
        if (d[p] == '|') return f_literal(r, L, p, out, mc);
        const char *s;
        size_t n;
        int plain;
        int key = f_scalar(r, L, p, &s, &n, &plain, &after);
        if (key == F_OPEN) return f_quoted_lines(r, L, p, out, mc);
        if (key) return key < 0 ? key : F_BAIL;  /* `a: b: c` */
        return f_scalar_done(r, L, out, s, n, plain, mc);
    }
    int got = f_next(L);
    if (got) return got;
    if (L->col > mc) return f_node(r, L, L->q, out, depth, track, mc);
    if (L->col == mc && is_entry(d, L->q, L->le)) return f_sequence(r, L, L->q, out, depth, 1);
    return buf_put(out, "null", 4);  /* libyaml's empty plain scalar */
}

/* A block mapping at column `mc` whose first key (s, n, plain) is read, its `:` before `after`: as
   y_mapping writes it (the same key sets, depth bound, kind and managedFields noted). */
static int f_mapping(Reader *r, Lines *L, int mc, const char *s, size_t n, int plain, Py_ssize_t after,
                     Buf *out, int depth, Track track) {
    const char *d = L->d;
    if (depth > MAX_DEPTH) return fallback("nested deeper than 100", L->line);
    KeySet *keys = &r->keys[depth];
    keys_clear(keys);
    if (buf_putc(out, '{') < 0) return -1;
    int first = 1;
    while (1) {
        size_t member_start = out->len;
        if (!first && buf_putc(out, ',') < 0) return -1;
        size_t key_at = out->len;
        if (key_json(out, s, n, plain, L->line) < 0) return -1;
        const char *key = out->data + key_at + 1;
        size_t key_len = out->len - key_at - 2;
        int added = keys_add(keys, out->data + key_at, out->len - key_at);
        if (added < 0) return -1;
        if (!added) return fallback("a duplicate key", L->line);
        Role role = member_role(track, key, key_len);
        if (buf_putc(out, ':') < 0) return -1;
        size_t value_at = out->len;
        int got = f_value(r, L, after, out, depth + 1, role.meta ? (Track){1, 1} : (Track){0, 0}, mc);
        if (got) return got;
        member_done(r, role, out, value_at, key_at, member_start, first);
        first = 0;
        if (L->col < mc) break;
        if (L->col > mc || is_entry(d, L->q, L->le)) return F_BAIL;
        got = f_scalar(r, L, L->q, &s, &n, &plain, &after);
        if (got != 1) return got == -1 ? -1 : F_BAIL;  /* a scalar where a key is */
    }
    return buf_putc(out, '}');
}

/* The node whose first character is at p on the current line, in a block collection at column `parent`;
   the current line is then the first line after it. 0, -1 (an error set) or F_BAIL. */
static int f_node(Reader *r, Lines *L, Py_ssize_t p, Buf *out, int depth, Track track, int parent) {
    const char *d = L->d;
    char c = d[p];
    if (c == '-' && is_entry(d, p, L->le)) return f_sequence(r, L, p, out, depth, 0);
    if (c == '{' || c == '[') return f_empty(L, p, out, depth, parent);
    if (c == '|') return f_literal(r, L, p, out, parent);
    const char *s;
    size_t n;
    int plain;
    Py_ssize_t after;
    int key = f_scalar(r, L, p, &s, &n, &plain, &after);
    if (key == F_OPEN) return f_quoted_lines(r, L, p, out, parent);
    if (key < 0) return key;
    if (key) return f_mapping(r, L, (int)(p - L->ls), s, n, plain, after, out, depth, track);
    return f_scalar_done(r, L, out, s, n, plain, parent);
}

/* The item whose `-` begins the line at r->fpos, into r->out: 0 (r->fpos past it), -1 or F_BAIL. */
static int f_item(Reader *r) {
    Lines L = {r->data, r->fend, 0, 0, 0, 0, r->fline + 1};
    int got = f_load(&L, r->fpos);
    if (got) return got;
    Py_ssize_t v = L.ls + 1;
    while (v < L.le && L.d[v] == ' ') v++;
    if (v == L.le) return F_BAIL;
    got = f_node(r, &L, v, &r->out, 1, (Track){1, 0}, 0);
    if (got) return got;
    if (L.col != 0) return F_BAIL;
    r->fpos = L.ls;
    r->fline = L.line - 1;
    return 0;
}

/* Skip blank and comment lines from r->fpos: 1 on a column-0 line (*le its end), 0 at the chunk's end,
   F_BAIL on an indented line. */
static int f_top_line(Reader *r, Py_ssize_t *le) {
    const char *d = r->data;
    while (r->fpos < r->fend) {
        const char *nl = memchr(d + r->fpos, '\n', (size_t)(r->fend - r->fpos));
        Py_ssize_t e = nl ? nl - d : r->fend, q = r->fpos;
        while (q < e && d[q] == ' ') q++;
        if (q < e && (d[r->fpos] != '#' || !comment_ok(d, r->fpos, e))) {
            if (q != r->fpos) return F_BAIL;
            *le = e;
            return 1;  /* (a comment the fast path does not skip: libyaml reads it, in a span) */
        }
        r->fpos = nl ? e + 1 : r->fend;
        r->fline++;
    }
    return 0;
}

/* The end of the span beginning at the column-0 line at r->fpos: the next column-0 line that is not blank,
   not a comment and, for members, not a `-` line; *lines: how many lines it holds. */
static Py_ssize_t f_span_end(Reader *r, int members, long *lines) {
    const char *d = r->data;
    Py_ssize_t p = r->fpos;
    long n = 0;
    while (p < r->fend) {
        const char *nl = memchr(d + p, '\n', (size_t)(r->fend - p));
        p = nl ? nl - d + 1 : r->fend;
        n++;
        if (p >= r->fend) break;
        char c = d[p];
        if (c == ' ' || c == '\n' || c == '#' || (members && c == '-')) continue;
        break;
    }
    *lines = n;
    return p;
}

/* libyaml on the span [r->fpos, end) alone, up to its root's first event (`root`, else Retry). */
static int f_span_open(Reader *r, Py_ssize_t end, yaml_event_type_t root) {
    r->chunk_start = r->fpos;
    r->chunk_line = r->fline;
    if (!yaml_parser_initialize(&r->parser)) return no_memory();
    r->parser_live = 1;
    r->span = 1;
    yaml_parser_set_input_string(&r->parser, (const unsigned char *)r->data + r->fpos, (size_t)(end - r->fpos));
    if (y_next(r) < 0 || y_next(r) < 0) return -1;
    if (r->event.type != YAML_DOCUMENT_START_EVENT) return retry("a span that is no document", r->fline + 1);
    if (y_next(r) < 0) return -1;
    if (r->event.type != root) return retry("a span that is not one item or mapping", r->fline + 1);
    return 0;
}

/* The span's document ends after its root (r->event the root's last event); the fast path goes on. */
static int f_span_close(Reader *r, Py_ssize_t end, long lines) {
    if (y_next(r) < 0) return -1;
    if (r->event.type != YAML_DOCUMENT_END_EVENT) return retry("a span longer than one node", r->fline + 1);
    if (y_next(r) < 0) return -1;
    if (r->event.type != YAML_STREAM_END_EVENT) return retry("a span longer than one document", r->fline + 1);
    y_stop(r);
    r->span = 0;
    r->fpos = end;
    r->fline += lines;
    return 0;
}

/* A member of the document's mapping whose key begins the column-0 line at r->fpos, read as f_mapping reads
   a member of a mapping at column 0 (its value by f_value, as libyaml's phase 1 reads it: depth 1, tracked
   as y_member tracks it) into `out` (see j_member): 1, r->fpos past it; 0 where the fast scanner gives it
   back, `out` and what the member noted as they were (libyaml then reads its span, as before: any member
   of a multi-document fleet of Clusters was read so, at ~7 times the cost): a key that is not one the
   scanner reads, `items` (whose sequence y_member turns into the items), a value outside the scanner's
   subset. A duplicate key is the libyaml path's Fallback (then Retry), after the value, as there. */
static int f_member(Reader *r, Buf *out, Member *m, int tracked) {
    Lines L = {r->data, r->fend, 0, 0, 0, 0, r->fline + 1};
    int got = f_load(&L, r->fpos);
    if (got) return got == -1 ? -1 : 0;
    const char *s;
    size_t n;
    int plain;
    Py_ssize_t after;
    got = f_scalar(r, &L, L.q, &s, &n, &plain, &after);
    if (got != 1) return got == -1 ? -1 : 0;
    long line = L.line;
    size_t key_at = out->len;
    if (key_json(out, s, n, plain, line) < 0) return -1;
    size_t key_len = out->len - key_at;
    if (j_unescape(out->data + key_at + 1, key_len - 2, &r->scratch) < 0) return -1;
    const char *key = r->scratch.data;
    if (is_word(key, r->scratch.len, "items")) { out->len = key_at; return 0; }
    int is_kind = tracked && is_word(key, r->scratch.len, "kind");
    int is_meta = tracked && is_word(key, r->scratch.len, "metadata");
    int kind_len = r->kind_len, has_cut = r->has_cut;  /* (a metadata value given back may have noted a cut) */
    if (buf_putc(out, ':') < 0) return -1;
    m->value_at = out->len;
    got = f_value(r, &L, after, out, 1, is_meta ? (Track){1, 1} : (Track){0, 0}, 0);
    if (got == 0 && L.col != 0) got = F_BAIL;
    if (got) {
        if (got == -1) return -1;
        out->len = key_at;
        r->kind_len = kind_len;
        r->has_cut = has_cut;
        return 0;
    }
    int added = keys_add(&r->top, out->data + key_at, key_len);
    if (added <= 0) {
        if (added == 0) fallback("a duplicate key", line);
        return -1;
    }
    m->key_at = key_at;
    m->key_len = key_len;
    m->value_len = out->len - m->value_at;
    if (top_member_done(r, out, is_kind, is_meta, m) < 0) return -1;
    r->fpos = L.ls;
    r->fline = L.line - 1;
    r->fast_members++;
    return 1;
}

/* An item libyaml reads (the fast path gave it back). */
static PyObject *f_item_span(Reader *r) {
    long lines;
    Py_ssize_t end = f_span_end(r, 0, &lines);
    item_start(r);
    if (f_span_open(r, end, YAML_SEQUENCE_START_EVENT) < 0 || y_next(r) < 0) return NULL;
    if (r->event.type == YAML_SEQUENCE_END_EVENT) { retry("an empty item", r->fline + 1); return NULL; }
    if (y_node(r, &r->out, 1, (Track){1, 0}) < 0 || y_next(r) < 0) return NULL;
    if (r->event.type != YAML_SEQUENCE_END_EVENT) { retry("a span of more than one item", r->fline + 1); return NULL; }
    if (f_span_close(r, end, lines) < 0) return NULL;
    return take_item(r);
}

/* The next event of the items of a chunk in fmode (in_items), the fast path between spans. */
static PyObject *f_next_event(Reader *r) {
    Py_ssize_t le;
    int got = f_top_line(r, &le);
    if (got == F_BAIL) { retry("an indented line at the top level", r->fline + 1); return NULL; }
    if (!got || !is_entry(r->data, r->fpos, le)) {
        r->in_items = 0;
        return Py_BuildValue("(s)", "end_items");
    }
    item_start(r);
    got = f_item(r);
    if (got == 0) { r->fast_items++; return take_item(r); }
    if (got == -1) return NULL;
    return f_item_span(r);
}

/* The next member of a chunk's mapping in fmode (see j_member): the fast scanner's (f_member), else a span
   opened for libyaml (M_SPAN: y_member reads its members); or the document's end (`...` ends it: the rest of
   the chunk is not read), or its `items:` (followed by `- ` lines, the items the fast path's). */
static int f_member_step(Reader *r, Buf *out, Member *m, int tracked) {
    const char *d = r->data;
    Py_ssize_t le;
    int got = f_top_line(r, &le);
    if (got == F_BAIL) return retry("an indented line at the top level", r->fline + 1);
    if (!got || (le - r->fpos >= 3 && memcmp(d + r->fpos, "...", 3) == 0 && spaces_only(d, r->fpos + 3, le))) {
        r->fmode = 0;
        r->phase = 0;
        return M_END;
    }
    if (le - r->fpos >= 6 && memcmp(d + r->fpos, "items:", 6) == 0 && spaces_only(d, r->fpos + 6, le)) {
        Py_ssize_t at = r->fpos;
        long line = r->fline;
        r->fpos = le < r->fend ? le + 1 : r->fend;
        r->fline++;
        Py_ssize_t next_le;
        if (f_top_line(r, &next_le) == 1 && is_entry(d, r->fpos, next_le)) {
            int added = keys_add(&r->top, "\"items\"", 7);
            if (added < 0) return -1;
            if (!added) return fallback("a duplicate key", line + 1);
            r->in_items = 1;
            return M_ITEMS;
        }
        r->fpos = at;
        r->fline = line;
    }
    got = f_member(r, out, m, tracked);
    if (got) return got < 0 ? -1 : M_MEMBER;
    r->span_end = f_span_end(r, 1, &r->span_lines);
    if (f_span_open(r, r->span_end, YAML_MAPPING_START_EVENT) < 0) return -1;
    return M_SPAN;
}

/* The next member of the document's mapping read by libyaml (the chunk's, or a span's: at the span's end
   the fast path goes on, M_SPAN), see j_member. */
static int y_member(Reader *r, Buf *out, Member *m, int tracked) {
    if (y_next(r) < 0) return -1;
    if (r->event.type == YAML_MAPPING_END_EVENT) {
        if (r->span) return f_span_close(r, r->span_end, r->span_lines) < 0 ? -1 : M_SPAN;
        y_stop(r);
        r->phase = 0;
        return M_END;
    }
    size_t key_at = out->len;
    if (y_key(r, out) < 0) return -1;
    size_t key_len = out->len - key_at;
    int added = keys_add(&r->top, out->data + key_at, key_len);
    if (added < 0) return -1;
    if (!added) return fallback("a duplicate key", y_line(r, r->event.start_mark));
    if (j_unescape(out->data + key_at + 1, key_len - 2, &r->scratch) < 0) return -1;
    const char *key = r->scratch.data;
    int is_kind = tracked && is_word(key, r->scratch.len, "kind");
    int is_meta = tracked && is_word(key, r->scratch.len, "metadata");
    int is_items = is_word(key, r->scratch.len, "items");
    if (y_next(r) < 0) return -1;
    if (r->event.type == YAML_SEQUENCE_START_EVENT && is_items) {
        out->len = key_at;
        r->phase = 2;
        return M_ITEMS;
    }
    m->key_at = key_at;
    m->key_len = key_len;
    if (buf_putc(out, ':') < 0) return -1;
    m->value_at = out->len;
    if (y_node(r, out, 1, is_meta ? (Track){1, 1} : (Track){0, 0}) < 0) return -1;
    m->value_len = out->len - m->value_at;
    return top_member_done(r, out, is_kind, is_meta, m) < 0 ? -1 : M_MEMBER;
}

/* The next member of the document's mapping, whichever part of the reader reads it (see j_member). */
static int next_member(Reader *r, Buf *out, Member *m, int tracked) {
    if (r->json) return j_member(r, out, m, tracked);
    while (1) {
        int got = r->fmode && !r->parser_live ? f_member_step(r, out, m, tracked) : y_member(r, out, m, tracked);
        if (got != M_SPAN) return got;
    }
}

/* ------------------------------------------------------------------ objects

   Most documents of a multi-document file are objects (a Pod, a Node, a Deployment...), not lists, and
   Python then wants them whole. So with Reader(..., objects=True) a document's mapping is read member by
   member (j_member, y_member, f_member_step: the reading of "map" ... "end", unchanged) into one JSON
   object, its members' places kept, until its end: one ("object", json, kind) event, the kind and
   managedFields as for a list's item (the members tracked as an item's root). Only at a top-level `items`
   sequence is it a list: then the events are "map", the held members one by one (their text as
   written), "items", and the reading goes on as without objects. An error is raised where the reading
   meets it, as without objects (nothing of the document has then been handed out). */

static int hold_member(Reader *r, Member *m) {
    if (grow_array((void **)&r->members, &r->cap_members, r->n_members, sizeof(Member), 16) < 0) return -1;
    r->members[r->n_members++] = *m;
    return 0;
}

/* A held object's text less a Pod's or Node's metadata.managedFields, as kubefit.manifests.stream left it out
   when it joined a document's members itself (before the reader held them: it looked for `"managedFields"` in
   the metadata's text): a key written with an escape (JSON; the cut begins with it, or with the comma before
   it) only where that text is in the metadata all the same. */
static void cut_object(Reader *r) {
    static const char plain[] = "\"managedFields\"";
    if (!r->cut_objects || !r->has_cut || !r->has_meta) return;
    const char *key = r->obj.data + r->cut_from + (r->has_cut == 1);
    if (memcmp(key, plain, 15) != 0 && !memmem(r->obj.data + r->meta_at, r->meta_len, plain, 15)) return;
    cut_text(r, &r->obj);
}

/* A document's mapping (the top keys cleared, phase 1) read member by member and held: M_END for an object
   (its text in r->obj, a Pod's or Node's managedFields cut), M_ITEMS for a list (its members held, to be
   replayed), -1 on an error. Touches no Python object (see "prefetch"). */
static int hold_object(Reader *r) {
    Buf *o = &r->obj;
    o->len = 0;
    r->n_members = 0;
    r->kind_len = -1;
    r->has_cut = r->has_meta = 0;
    if (buf_putc(o, '{') < 0) return -1;
    while (1) {
        size_t at = o->len;
        if (r->n_members && buf_putc(o, ',') < 0) return -1;
        Member m;
        int got = next_member(r, o, &m, 1);
        if (got < 0) return -1;
        if (got == M_MEMBER) {
            if (hold_member(r, &m) < 0) return -1;
            continue;
        }
        o->len = at;
        if (got == M_ITEMS) {
            r->replay = 0;
            r->replaying = 1;
            return M_ITEMS;
        }
        if (buf_putc(o, '}') < 0) return -1;
        cut_object(r);
        return M_END;
    }
}

/* The first event of a document's mapping (the top keys cleared, phase 1): ("map",), or with `objects`
   the document's members read and held: ("object", json, kind) for an object, ("map",) for a list. */
static PyObject *mapping_start(Reader *r) {
    if (!r->objects) return Py_BuildValue("(s)", "map");
    int got = hold_object(r);
    if (got < 0) return NULL;
    if (got == M_ITEMS) return Py_BuildValue("(s)", "map");
    return text_event(S_object, r->obj.data, r->obj.len, r->kind, r->kind_len);
}

/* ("member", key, json) of a member written in `b`. */
static PyObject *member_tuple(Reader *r, Buf *b, Member *m) {
    if (j_unescape(b->data + m->key_at + 1, m->key_len - 2, &r->scratch) < 0) return NULL;
    PyObject *key = PyUnicode_DecodeUTF8(r->scratch.data, (Py_ssize_t)r->scratch.len, NULL);
    if (!key) return NULL;
    PyObject *json = PyBytes_FromStringAndSize(b->data + m->value_at, (Py_ssize_t)m->value_len);
    if (!json) { Py_DECREF(key); return NULL; }
    return Py_BuildValue("(sNN)", "member", key, json);
}

/* A list's held members, one by one, then ("items",). */
static PyObject *replay_event(Reader *r) {
    if (r->replay < r->n_members) return member_tuple(r, &r->obj, &r->members[r->replay++]);
    r->replaying = 0;
    return Py_BuildValue("(s)", "items");
}

/* The next event of a document's mapping read member by member: ("member", key, json), ("items",), ("end",). */
static PyObject *member_event(Reader *r) {
    r->out.len = 0;
    Member m;
    int got = next_member(r, &r->out, &m, 0);
    if (got < 0) return NULL;
    if (got == M_END) return Py_BuildValue("(s)", "end");
    if (got == M_ITEMS) return Py_BuildValue("(s)", "items");
    return member_tuple(r, &r->out, &m);
}

/* Whether the fast path reads the chunk [start, end): its first line (after blank lines, comments and a
   first `---` line) is a mapping's plain key at column 0, beginning with a letter or digit. */
static int f_open(Reader *r, Py_ssize_t start, Py_ssize_t end) {
    const char *d = r->data;
    Py_ssize_t p = start;
    long line = r->chunk_line;
    while (p < end) {
        const char *nl = memchr(d + p, '\n', (size_t)(end - p));
        Py_ssize_t le = nl ? nl - d : end;
        if (!(spaces_only(d, p, le) || (d[p] == '#' && comment_ok(d, p, le)) ||
              (p == start && le - p >= 3 && memcmp(d + p, "---", 3) == 0 && spaces_only(d, p + 3, le)))) break;
        p = nl ? le + 1 : end;
        line++;
    }
    if (p >= end || !isalnum((unsigned char)d[p])) return 0;
    Lines L = {d, end, 0, 0, 0, 0, line + 1};
    Py_ssize_t stop, trim;
    int clean;
    if (f_load(&L, p) != 0 || f_plain(&L, p, &stop, &trim, &clean) != 0 || stop == L.le) return 0;
    r->fmode = 1;
    r->in_items = 0;
    r->span = 0;
    r->fpos = p;
    r->fend = end;
    r->fline = line;
    return 1;
}

/* The next YAML document opened (phase 0; see y_open_chunk): 1 a mapping (phase 1, its top keys cleared),
   2 another node (r->event its root), 0 the text's end, -1 on an error. */
static int y_open_document(Reader *r) {
    int opened = y_open_chunk(r);
    if (opened <= 0) return opened;
    if (opened == 2 || r->event.type == YAML_MAPPING_START_EVENT) {
        keys_clear(&r->top);
        r->phase = 1;
        return 1;
    }
    return 2;
}

/* The next document opened, JSON or YAML (see j_open_document, y_open_document). */
static int open_document(Reader *r) { return r->json ? j_open_document(r) : y_open_document(r); }

/* YAML: the next event. Phases: 0 between documents, 1 in the top mapping, 2 in its items,
   3 in a top sequence; in fmode the items are the fast path's (in_items, phase 1). */
static PyObject *y_next_event(Reader *r) {
    PyObject *event;
    if (ahead_event(r, &event)) return event;
    if (r->phase == 0) {
        int opened = y_open_document(r);
        if (opened < 0) return NULL;
        if (!opened) { r->done = 1; Py_RETURN_NONE; }
        if (opened == 1) return mapping_start(r);
        if (r->event.type == YAML_SEQUENCE_START_EVENT) {
            r->phase = 3;
            return Py_BuildValue("(s)", "seq");
        }
        item_start(r);
        if (y_node(r, &r->out, 1, (Track){0, 0}) < 0) return NULL;
        y_stop(r);
        PyObject *json = bytes_of(r);
        return json ? Py_BuildValue("(sN)", "scalar", json) : NULL;
    }
    if (r->phase == 1 && !r->in_items) return member_event(r);
    if (r->fmode && !r->parser_live) return f_next_event(r);
    if (y_next(r) < 0) return NULL;
    /* an item of the items (phase 2) or of a top sequence (phase 3) */
    if (r->event.type == YAML_SEQUENCE_END_EVENT) {
        if (r->phase == 2) { r->phase = 1; return Py_BuildValue("(s)", "end_items"); }
        y_stop(r);
        r->phase = 0;
        return Py_BuildValue("(s)", "end");
    }
    item_start(r);
    if (y_node(r, &r->out, 1, (Track){1, 0}) < 0) return NULL;
    return take_item(r);
}

static PyObject *Reader_next(Reader *r, PyObject *Py_UNUSED(unused)) {
    if (r->done) Py_RETURN_NONE;
    PyObject *event = !r->ahead && r->replaying ? replay_event(r) : r->json ? j_next(r) : y_next_event(r);
    if (!event) {
        prefetch_end(r);  /* (a thread still reading: an event the consumer could not make) */
        if (r->fmode && PyErr_ExceptionMatches(Fallback)) {  /* the libyaml path decides (see the fast path) */
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            PyObject *text = value ? PyObject_Str(value) : NULL;
            Py_XDECREF(type); Py_XDECREF(value); Py_XDECREF(tb);
            if (text) { PyErr_SetObject(Retry, text); Py_DECREF(text); }
        }
        r->done = 1;
        y_stop(r);
    }
    return event;
}

/* How many bytes of the text the reader has read (Reader.position; a thread's record keeps it). */
static Py_ssize_t reader_at(Reader *r) {
    if (!r->json && r->parser_live) return r->chunk_start + (Py_ssize_t)r->parser.offset;
    if (!r->json && r->fmode) return r->fpos;
    return r->pos;
}

static PyObject *Reader_position(Reader *r, void *Py_UNUSED(unused)) {
    return PyLong_FromSsize_t(r->ahead ? r->cpos : reader_at(r));
}

static PyObject *Reader_fast_items(Reader *r, void *Py_UNUSED(unused)) { return PyLong_FromSsize_t(r->fast_items); }
static PyObject *Reader_fast_members(Reader *r, void *Py_UNUSED(unused)) { return PyLong_FromSsize_t(r->fast_members); }

static int Reader_init(Reader *r, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"data", "json", "fast", "prefetch", "objects", "cut_objects", NULL};
    PyObject *data;
    int json, fast = 1, objects = 0, cut_objects = 1;
    Py_ssize_t prefetch = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Op|pnpp", names, &data, &json, &fast, &prefetch, &objects,
                                     &cut_objects)) return -1;
    r->fast = fast;
    r->objects = objects;
    r->cut_objects = cut_objects;
    r->prefetch = prefetch;
    if (PyObject_GetBuffer(data, &r->view, PyBUF_SIMPLE) < 0) return -1;
    r->data = r->view.buf;
    r->size = r->view.len;
    r->json = json;
    r->kind_len = -1;
    return 0;
}

static void Reader_dealloc(Reader *r) {
    prefetch_end(r);
    if (r->sync_ready) { pthread_mutex_destroy(&r->lock); pthread_cond_destroy(&r->cond); }
    y_stop(r);
    if (r->view.obj) PyBuffer_Release(&r->view);
    free(r->out.data);
    free(r->scratch.data);
    free(r->fscratch.data);
    free(r->obj.data);
    free(r->members);
    for (int i = 0; i < MAX_DEPTH + 2; i++) keys_free(&r->keys[i]);
    keys_free(&r->top);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyMethodDef Reader_methods[] = {
    {"next", (PyCFunction)Reader_next, METH_NOARGS, "The next event of the stream (see the module), or None."},
    {NULL},
};

static PyGetSetDef Reader_getset[] = {
    {"position", (getter)Reader_position, NULL, "How many bytes of the text have been read.", NULL},
    {"fast_items", (getter)Reader_fast_items, NULL, "How many items YAML's fast path has read.", NULL},
    {"fast_members", (getter)Reader_fast_members, NULL, "How many members of a document's mapping YAML's fast "
     "path has read (while a thread reads documents ahead, a count it is changing: read it at the end).", NULL},
    {NULL},
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kubefit.manifests._reader.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Reader(buffer, json, fast=True, prefetch=-1, objects=False, cut_objects=True): a manifest stream's "
              "events, one object at a time (fast: YAML's fast path, which raises Retry where the libyaml path, "
              "fast=False, must read the file; prefetch: a JSON list's items, or (with objects) the documents while "
              "each is an object, are read ahead by a thread when at least this many bytes are left, -1 never; objects: a document that is an object, not a list, is one "
              "(\"object\", json, kind) event, a Pod's or Node's managedFields left out with cut_objects).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Reader_init,
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_methods = Reader_methods,
    .tp_getset = Reader_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_reader",
                                    "The streaming manifest reader (see _reader.c).", -1, NULL, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__reader(void) {
    if (PyType_Ready(&ReaderType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Fallback = PyErr_NewException("kubefit.manifests._reader.Fallback", NULL, NULL);
    if (!Fallback || PyModule_AddObject(m, "Fallback", Fallback) < 0) return NULL;
    S_item = PyUnicode_InternFromString("item");
    S_object = PyUnicode_InternFromString("object");
    S_Pod = PyUnicode_InternFromString("Pod");
    S_Node = PyUnicode_InternFromString("Node");
    if (!S_item || !S_object || !S_Pod || !S_Node) return NULL;
    Retry = PyErr_NewException("kubefit.manifests._reader.Retry", NULL, NULL);
    if (!Retry || PyModule_AddObject(m, "Retry", Retry) < 0) return NULL;
    Py_INCREF(&ReaderType);
    if (PyModule_AddObject(m, "Reader", (PyObject *)&ReaderType) < 0) return NULL;
    return m;
}
