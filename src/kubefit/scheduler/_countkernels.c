/* The change log's counts in C: what podclasses.py, domaincounts.py and topologyspread.py do with whole-array
 * operations for a stretch of binds, in one call (a cycle follows a few dozen binds with a handful of counts, and
 * each numpy call costs more than the work).  The Python code stays the reference and the fallback; the property
 * tests hold the two equal.
 *
 * scatter(node, klass, sign, start, end, table, target, index, mask, mult, offset) -> top or None
 *   for each change i in [start, end) of the log arrays (int64 node, class, sign) whose class weighs
 *   w = table[klass[i]] != 0 and whose node passes `mask` (bool [N], or None): target[index[node]] (index: int32
 *   or int64 [N], or None: the node itself) += sign · w · mult, in int64 arithmetic that wraps as numpy's does,
 *   stored in the target's width (int32 or int64).  Returns the largest target[j] − offset[node] (offset: int32 or
 *   int64 [N], or None: 0) over the entries it changed, after the stretch; None when it changed none.
 *
 * occupied(cell, idx, size) -> (sorted list of the distinct cells >= 0 among cell[idx], how many are < 0)
 *   cell: int32 [N], idx: int64, every cell below `size`.
 *
 * distinct(values, start) -> the distinct ints of the list `values` from position `start`, ascending (the nodes a
 *   stretch of the engine's log changed). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { Py_buffer b; int held; } Buf;

/* A C-contiguous one-dimensional buffer of integers of one of the widths `widths` (bit mask of 1, 4, 8 bytes). */
static int get(PyObject *o, Buf *buf, int writable, int widths, const char *what) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, &buf->b, flags) < 0) return -1;
    buf->held = 1;
    const char *f = buf->b.format ? buf->b.format : "B";
    char kind = f[strlen(f) - 1];
    int integral = kind == 'l' || kind == 'q' || kind == 'i' || kind == 'b' || kind == 'B' || kind == '?';
    Py_ssize_t w = buf->b.itemsize;
    if (!integral || buf->b.ndim != 1 || !((w == 1 && (widths & 1)) || (w == 4 && (widths & 4))
                                           || (w == 8 && (widths & 8)))) {
        PyErr_Format(PyExc_TypeError, "%s: a one-dimensional integer array of another width expected", what);
        return -1;
    }
    return 0;
}

static inline int64_t at(const Buf *b, Py_ssize_t i) {
    return b->b.itemsize == 8 ? ((const int64_t *)b->b.buf)[i] : ((const int32_t *)b->b.buf)[i];
}

static void release(Buf *bufs[], size_t n) {
    for (size_t k = 0; k < n; k++)
        if (bufs[k]->held) PyBuffer_Release(&bufs[k]->b);
}

static PyObject *scatter(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "scatter() takes 11 arguments");
        return NULL;
    }
    Buf node = {0}, klass = {0}, sign = {0}, table = {0}, target = {0}, index = {0}, mask = {0}, offset = {0};
    Buf *all[] = {&node, &klass, &sign, &table, &target, &index, &mask, &offset};
    PyObject *result = NULL;
    Py_ssize_t start = PyNumber_AsSsize_t(args[3], PyExc_OverflowError);
    Py_ssize_t end = PyNumber_AsSsize_t(args[4], PyExc_OverflowError);
    long long mult = PyLong_AsLongLong(args[9]);
    if (PyErr_Occurred()) return NULL;
    if (get(args[0], &node, 0, 8, "node") || get(args[1], &klass, 0, 8, "klass") || get(args[2], &sign, 0, 8, "sign")
        || get(args[5], &table, 0, 8, "table") || get(args[6], &target, 1, 4 | 8, "target")
        || (args[7] != Py_None && get(args[7], &index, 0, 4 | 8, "index"))
        || (args[8] != Py_None && get(args[8], &mask, 0, 1, "mask"))
        || (args[10] != Py_None && get(args[10], &offset, 0, 4 | 8, "offset")))
        goto done;
    {
        Py_ssize_t nlog = node.b.shape[0], nclasses = table.b.shape[0], ntarget = target.b.shape[0];
        Py_ssize_t nnodes = index.held ? index.b.shape[0] : ntarget;
        if (start < 0 || end > nlog || klass.b.shape[0] < end || sign.b.shape[0] < end
            || (mask.held && mask.b.shape[0] != nnodes) || (offset.held && offset.b.shape[0] != nnodes)) {
            PyErr_SetString(PyExc_IndexError, "scatter: arrays of mismatched lengths");
            goto done;
        }
        const int64_t *nd = node.b.buf, *kl = klass.b.buf, *sg = sign.b.buf, *tb = table.b.buf;
        const uint8_t *mk = mask.held ? mask.b.buf : NULL;
        int wide = target.b.itemsize == 8, touched = 0;
        int64_t top = 0;
        for (Py_ssize_t i = start; i < end; i++) {
            int64_t c = kl[i], n = nd[i];
            if (c < 0 || c >= nclasses || n < 0 || n >= nnodes) {
                PyErr_SetString(PyExc_IndexError, "scatter: a class or node out of range");
                goto done;
            }
            int64_t w = tb[c];
            if (w == 0 || (mk && !mk[n])) continue;
            int64_t j = index.held ? at(&index, n) : n;
            if (j < 0 || j >= ntarget) {
                PyErr_SetString(PyExc_IndexError, "scatter: an index out of range");
                goto done;
            }
            /* sign · w · mult in int64, wrapping (numpy's int64 products and sums wrap) */
            uint64_t delta = (uint64_t)sg[i] * (uint64_t)w * (uint64_t)mult;
            if (wide) {
                int64_t *t = (int64_t *)target.b.buf + j;
                *t = (int64_t)((uint64_t)*t + delta);
            } else {  /* numpy: the int64 product cast to int32, then an int32 sum: both wrap */
                int32_t *t = (int32_t *)target.b.buf + j;
                *t = (int32_t)(uint32_t)((uint32_t)*t + (uint32_t)delta);
            }
            touched = 1;
        }
        /* the largest over the changed entries as they are after the stretch */
        if (touched) {
            touched = 0;
            for (Py_ssize_t i = start; i < end; i++) {
                int64_t n = nd[i];
                if (tb[kl[i]] == 0 || (mk && !mk[n])) continue;
                int64_t j = index.held ? at(&index, n) : n;
                int64_t now = wide ? ((int64_t *)target.b.buf)[j] : ((int32_t *)target.b.buf)[j];
                if (offset.held) now -= at(&offset, n);
                if (!touched || now > top) top = now;
                touched = 1;
            }
        }
        result = touched ? PyLong_FromLongLong(top) : Py_NewRef(Py_None);
    }
done:
    release(all, sizeof all / sizeof *all);
    return result;
}

static PyObject *occupied(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "occupied() takes 3 arguments");
        return NULL;
    }
    Buf cell = {0}, idx = {0};
    Buf *all[] = {&cell, &idx};
    PyObject *result = NULL, *list = NULL;
    uint8_t *seen = NULL;
    Py_ssize_t size = PyNumber_AsSsize_t(args[2], PyExc_OverflowError);
    if (size == -1 && PyErr_Occurred()) return NULL;
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "occupied: a negative size");
        return NULL;
    }
    if (get(args[0], &cell, 0, 4, "cell") || get(args[1], &idx, 0, 8, "idx")) goto done;
    seen = calloc((size_t)size + 1, 1);
    if (seen == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    {
        const int32_t *cl = cell.b.buf;
        const int64_t *ix = idx.b.buf;
        Py_ssize_t n = cell.b.shape[0], m = idx.b.shape[0], ignored = 0, distinct = 0;
        for (Py_ssize_t k = 0; k < m; k++) {
            int64_t i = ix[k];
            if (i < 0 || i >= n) {
                PyErr_SetString(PyExc_IndexError, "occupied: a node out of range");
                goto done;
            }
            int32_t c = cl[i];
            if (c < 0) {
                ignored++;
                continue;
            }
            if (c >= size) {
                PyErr_SetString(PyExc_IndexError, "occupied: a cell beyond the table");
                goto done;
            }
            if (!seen[c]) {
                seen[c] = 1;
                distinct++;
            }
        }
        list = PyList_New(distinct);
        if (list == NULL) goto done;
        Py_ssize_t at_ = 0;
        for (Py_ssize_t c = 0; c < size && at_ < distinct; c++) {
            if (!seen[c]) continue;
            PyObject *v = PyLong_FromSsize_t(c);
            if (v == NULL) goto done;
            PyList_SET_ITEM(list, at_++, v);
        }
        result = Py_BuildValue("(On)", list, ignored);
    }
done:
    Py_XDECREF(list);
    free(seen);
    release(all, sizeof all / sizeof *all);
    return result;
}

static int compare_ssize(const void *a, const void *b) {
    Py_ssize_t x = *(const Py_ssize_t *)a, y = *(const Py_ssize_t *)b;
    return (x > y) - (x < y);
}

static PyObject *distinct(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "distinct(list, start) takes a list of ints and a start");
        return NULL;
    }
    PyObject *log = args[0];
    Py_ssize_t start = PyNumber_AsSsize_t(args[1], PyExc_OverflowError);
    if (start == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t end = PyList_GET_SIZE(log);
    if (start < 0) start = 0;
    Py_ssize_t n = end > start ? end - start : 0;
    Py_ssize_t *values = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(n ? n : 1));
    if (values == NULL) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        values[i] = PyNumber_AsSsize_t(PyList_GET_ITEM(log, start + i), PyExc_OverflowError);
        if (values[i] == -1 && PyErr_Occurred()) {
            PyMem_Free(values);
            return NULL;
        }
    }
    qsort(values, (size_t)n, sizeof *values, compare_ssize);
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (kept == 0 || values[i] != values[kept - 1]) values[kept++] = values[i];
    PyObject *out = PyList_New(kept);
    for (Py_ssize_t i = 0; out != NULL && i < kept; i++) {
        PyObject *v = PyLong_FromSsize_t(values[i]);
        if (v == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, v);
    }
    PyMem_Free(values);
    return out;
}

static PyMethodDef methods[] = {
    {"distinct", (PyCFunction)(void (*)(void))distinct, METH_FASTCALL,
     "distinct(values, start) -> the distinct ints of the list from position start, ascending"},
    {"scatter", (PyCFunction)(void (*)(void))scatter, METH_FASTCALL,
     "scatter(node, klass, sign, start, end, table, target, index, mask, mult, offset) -> top or None: a stretch "
     "of the change log added to counts by pod class"},
    {"occupied", (PyCFunction)(void (*)(void))occupied, METH_FASTCALL,
     "occupied(cell, idx, size) -> (distinct cells >= 0 among cell[idx], ascending; how many are < 0)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_countkernels",
    .m_doc = "The change log's counts by pod class in C (podclasses.py and its followers are the reference).",
    .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__countkernels(void) { return PyModule_Create(&module); }
