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
 *   stretch of the engine's log changed).
 *
 * cell_scores(cell, idx, size, cells, outer, sizes, skews, sums, out) -> how many nodes of idx are ignored, or None
 *   PodTopologySpread's Score + NormalizeScore of the filtered nodes `idx` from their cells (topologyspread._few_cells
 *   and the gather after it, the reference): out[k] = the normalized score of cell[idx[k]] (0 when it is -1,
 *   ignored).  None, out unspecified: a raw score is negative or beyond 10^15 (the caller's Python path decides).
 *   IEEE float64 without contraction (built with -ffp-contract=off), libm's log as Python's math.log.
 *
 * occurring(codes, idx) -> the values among codes[idx] as a bit mask (bit v: some node has value v), or None
 *   codes, idx: int64; None when a value is negative or beyond 63 (staticnorm.StaticNormalized.total: which of a
 *   static plugin's distinct raw scores the feasible nodes have, its bincount the reference).
 *
 * best(total, feasible, normed, summed, top[, scale, extra]) -> how many nodes tie for the highest score
 *   the engine's scores of a cycle's feasible nodes (engine._best, the reference): summed[k] = total[feasible[k]] +
 *   normed[k] · scale + extra (scale 1, extra 0 unless given; extra an int or an int64 array over feasible's
 *   positions; int64, wrapping as numpy's products and sums do), and top[:count] the nodes of `feasible` whose
 *   sum is the highest, in feasible's order.
 *
 * add_rows(node, sign, matrix, row[, matrix, row…]) -> None
 *   for each pair (up to 4) matrix[node] += sign · row (int64 matrices and rows of their width, wrapping as numpy's
 *   sums do): a bind's requests and non-zero requests added to its node's rows (state.ClusterState.bind, numpy's row
 *   additions the reference). Every pair is checked before any is added: a TypeError or ValueError adds nothing. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_ndview.h"

/* A C-contiguous one-dimensional buffer of integers of one of the widths `widths` (bit mask of 1, 4, 8 bytes). */
static int get(PyObject *o, Buf *buf, int writable, int widths, const char *what) {
    if (nd_get(o, buf, writable) < 0) return -1;
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
        nd_release(bufs[k]);
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

#define MAX_CONSTRAINTS 16

/* The weights of topologyspread._few_cells: log(considered + 2) for the hostname constraint `outer`, and for each
 * domain constraint log(its distinct domains among the occupied cells + 2) (a node lacking the key, domain 0,
 * is one of them: PreScore's `TopologyPairToPodCounts` holds its "" value).  -1 on a memory error. */
static int cell_weights(const int64_t *occ, Py_ssize_t nocc, Py_ssize_t cells, Py_ssize_t nc, Py_ssize_t outer,
                        const Py_ssize_t *size, Py_ssize_t considered, double *weight) {
    for (Py_ssize_t k = 0; k < nc; k++) {
        if (k == outer) {
            weight[k] = log((double)(considered + 2));
            continue;
        }
        uint8_t *seen = calloc((size_t)size[k], 1);
        if (seen == NULL) return -1;
        Py_ssize_t known = 0;
        for (Py_ssize_t i = 0; i < nocc; i++) {
            Py_ssize_t rest = (Py_ssize_t)(occ[i] % cells), d = 0;
            for (Py_ssize_t j = nc - 1; j >= k; j--) {  /* the last constraint's domain varies fastest */
                if (j == outer) continue;
                d = rest % size[j];
                rest /= size[j];
            }
            if (!seen[d]) { seen[d] = 1; known++; }
        }
        free(seen);
        weight[k] = log((double)(known + 2));
    }
    return 0;
}

/* One occupied cell's raw score (_few_cells): per constraint count · weight + maxSkew − 1 (0 for a node lacking
 * the key), summed in the constraints' order from 0, rounded half up. */
static double cell_value(int64_t c, Py_ssize_t cells, Py_ssize_t nc, Py_ssize_t outer, const Py_ssize_t *size,
                         const Py_ssize_t *skew, const int64_t *const *sums, const double *weight) {
    Py_ssize_t slot = (Py_ssize_t)(c / cells), rest = (Py_ssize_t)(c % cells), domain[MAX_CONSTRAINTS] = {0};
    for (Py_ssize_t j = nc - 1; j >= 0; j--) {
        if (j == outer) continue;
        domain[j] = rest % size[j];
        rest /= size[j];
    }
    double acc = 0.0;
    for (Py_ssize_t k = 0; k < nc; k++) {
        double part;
        if (k == outer)
            part = slot == 0 ? 0.0 : ((double)slot - 1.0) * weight[k] + (double)(skew[k] - 1);
        else
            part = domain[k] == 0 ? 0.0 : (double)sums[k][domain[k]] * weight[k] + (double)(skew[k] - 1);
        acc = acc + part;
    }
    return floor(acc + 0.5);
}

static PyObject *cell_scores(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 9 || !PyList_Check(args[5]) || !PyList_Check(args[6]) || !PyList_Check(args[7])) {
        PyErr_SetString(PyExc_TypeError, "cell_scores(cell, idx, size, cells, outer, sizes, skews, sums, out)");
        return NULL;
    }
    Py_ssize_t size_all = PyNumber_AsSsize_t(args[2], PyExc_OverflowError);
    Py_ssize_t cells = PyNumber_AsSsize_t(args[3], PyExc_OverflowError);
    Py_ssize_t outer = PyNumber_AsSsize_t(args[4], PyExc_OverflowError);
    if (PyErr_Occurred()) return NULL;
    PyObject *sizes_l = args[5], *skews_l = args[6], *sums_l = args[7];
    Py_ssize_t nc = PyList_GET_SIZE(sizes_l);
    if (nc > MAX_CONSTRAINTS || PyList_GET_SIZE(skews_l) != nc || PyList_GET_SIZE(sums_l) != nc || cells <= 0
        || size_all < 0)
        Py_RETURN_NONE;  /* beyond what this kernel handles: the Python path */
    Buf cell = {0}, idx = {0}, out = {0}, sums[MAX_CONSTRAINTS] = {{{0}}};
    Buf *all[MAX_CONSTRAINTS + 3] = {&cell, &idx, &out};
    for (Py_ssize_t k = 0; k < nc; k++) all[3 + k] = &sums[k];
    PyObject *result = NULL;
    uint8_t *mark = NULL;
    int64_t *occ = NULL, *value = NULL;
    Py_ssize_t size[MAX_CONSTRAINTS], skew[MAX_CONSTRAINTS];
    const int64_t *sum[MAX_CONSTRAINTS] = {0};
    double weight[MAX_CONSTRAINTS];
    if (get(args[0], &cell, 0, 4, "cell") || get(args[1], &idx, 0, 8, "idx") || get(args[8], &out, 1, 8, "out"))
        goto done;
    for (Py_ssize_t k = 0; k < nc; k++) {
        size[k] = PyNumber_AsSsize_t(PyList_GET_ITEM(sizes_l, k), PyExc_OverflowError);
        skew[k] = PyNumber_AsSsize_t(PyList_GET_ITEM(skews_l, k), PyExc_OverflowError);
        if (PyErr_Occurred()) goto done;
        if (k == outer) continue;
        if (get(PyList_GET_ITEM(sums_l, k), &sums[k], 0, 8, "sums")) goto done;
        if (size[k] <= 0 || sums[k].b.shape[0] < size[k]) {
            PyErr_SetString(PyExc_ValueError, "cell_scores: a domain constraint's sums shorter than its domains");
            goto done;
        }
        sum[k] = sums[k].b.buf;
    }
    {
        const int32_t *cl = cell.b.buf;
        const int64_t *ix = idx.b.buf;
        int64_t *o = out.b.buf;
        Py_ssize_t n = cell.b.shape[0], m = idx.b.shape[0], ignored = 0, nocc = 0;
        if (out.b.shape[0] != m) {
            PyErr_SetString(PyExc_ValueError, "cell_scores: out and idx of different lengths");
            goto done;
        }
        mark = calloc((size_t)size_all + 1, 1);
        occ = PyMem_Malloc(sizeof(int64_t) * (size_t)(m ? m : 1));
        value = PyMem_Malloc(sizeof(int64_t) * ((size_t)size_all + 1));
        if (mark == NULL || occ == NULL || value == NULL) { PyErr_NoMemory(); goto done; }
        for (Py_ssize_t k = 0; k < m; k++) {  /* the occupied cells, in the order first met */
            int64_t i = ix[k];
            if (i < 0 || i >= n) { PyErr_SetString(PyExc_IndexError, "cell_scores: a node out of range"); goto done; }
            int32_t c = cl[i];
            if (c < 0) { ignored++; continue; }
            if (c >= size_all) {
                PyErr_SetString(PyExc_IndexError, "cell_scores: a cell beyond the table");
                goto done;
            }
            if (!mark[c]) { mark[c] = 1; occ[nocc++] = c; }
        }
        if (cell_weights(occ, nocc, cells, nc, outer, size, m - ignored, weight) < 0) { PyErr_NoMemory(); goto done; }
        int64_t lo = 0, hi = 0;
        for (Py_ssize_t i = 0; i < nocc; i++) {
            double v = cell_value(occ[i], cells, nc, outer, size, skew, sum, weight);
            if (!(v >= 0.0 && v < 1e15)) {  /* negative (no range check here), or where int64 would not be exact */
                result = Py_NewRef(Py_None);
                goto done;
            }
            int64_t iv = (int64_t)v;
            value[occ[i]] = iv;
            if (i == 0 || iv < lo) lo = iv;
            if (iv > hi) hi = iv;
        }
        for (Py_ssize_t i = 0; i < nocc; i++) {  /* NormalizeScore: 100·(max + min − s) // max, 100 when max is 0 */
            int64_t c = occ[i];
            value[c] = hi ? 100 * (hi + lo - value[c]) / hi : 100;  /* (non-negative: // is /) */
        }
        for (Py_ssize_t k = 0; k < m; k++) {
            int32_t c = cl[ix[k]];
            o[k] = c < 0 ? 0 : value[c];
        }
        result = PyLong_FromSsize_t(ignored);
    }
done:
    free(mark);
    PyMem_Free(occ);
    PyMem_Free(value);
    release(all, (size_t)nc + 3);
    return result;
}

static PyObject *best(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 5 && nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "best(total, feasible, normed, summed, top[, scale, extra]) takes 5 or 7 "
                        "arguments");
        return NULL;
    }
    Buf total = {0}, feasible = {0}, normed = {0}, summed = {0}, top = {0}, extra = {0};
    Buf *all[] = {&total, &feasible, &normed, &summed, &top, &extra};
    PyObject *result = NULL;
    uint64_t scale = 1, constant = 0;
    if (nargs == 7) {
        scale = (uint64_t)PyLong_AsLongLong(args[5]);
        if (PyLong_Check(args[6])) constant = (uint64_t)PyLong_AsLongLong(args[6]);
        if (PyErr_Occurred()) return NULL;  /* (beyond int64: the caller's numpy path) */
    }
    if (get(args[0], &total, 0, 8, "total") || get(args[1], &feasible, 0, 8, "feasible")
        || get(args[2], &normed, 0, 8, "normed") || get(args[3], &summed, 1, 8, "summed")
        || get(args[4], &top, 1, 8, "top")
        || (nargs == 7 && args[6] != Py_None && !PyLong_Check(args[6]) && get(args[6], &extra, 0, 8, "extra")))
        goto done;
    {
        Py_ssize_t n = total.b.shape[0], m = feasible.b.shape[0], count = 0;
        if (normed.b.shape[0] != m || summed.b.shape[0] != m || top.b.shape[0] < m
            || (extra.held && extra.b.shape[0] != m)) {
            PyErr_SetString(PyExc_ValueError, "best: arrays of mismatched lengths");
            goto done;
        }
        const int64_t *tt = total.b.buf, *fe = feasible.b.buf, *nm = normed.b.buf;
        const int64_t *ex = extra.held ? extra.b.buf : NULL;
        int64_t *sm = summed.b.buf, *tp = top.b.buf, high = 0;
        for (Py_ssize_t k = 0; k < m; k++) {
            int64_t i = fe[k];
            if (i < 0 || i >= n) {
                PyErr_SetString(PyExc_IndexError, "best: a node out of range");
                goto done;
            }
            /* numpy's int64 products and sums wrap: unsigned arithmetic, the same bits */
            int64_t v = (int64_t)((uint64_t)tt[i] + (uint64_t)nm[k] * scale + (ex ? (uint64_t)ex[k] : constant));
            sm[k] = v;
            if (k == 0 || v > high) { high = v; count = 0; }
            if (v == high) tp[count++] = i;
        }
        result = PyLong_FromSsize_t(count);
    }
done:
    release(all, sizeof all / sizeof *all);
    return result;
}

static PyObject *occurring(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "occurring(codes, idx) takes 2 arguments");
        return NULL;
    }
    Buf codes = {0}, idx = {0};
    Buf *all[] = {&codes, &idx};
    PyObject *result = NULL;
    if (get(args[0], &codes, 0, 8, "codes") || get(args[1], &idx, 0, 8, "idx")) goto done;
    {
        const int64_t *cd = codes.b.buf, *ix = idx.b.buf;
        Py_ssize_t n = codes.b.shape[0], m = idx.b.shape[0];
        uint64_t mask = 0;
        for (Py_ssize_t k = 0; k < m; k++) {
            int64_t i = ix[k];
            if (i < 0 || i >= n) {
                PyErr_SetString(PyExc_IndexError, "occurring: a node out of range");
                goto done;
            }
            int64_t v = cd[i];
            if (v < 0 || v > 63) { result = Py_NewRef(Py_None); goto done; }
            mask |= (uint64_t)1 << v;
        }
        result = PyLong_FromUnsignedLongLong(mask);
    }
done:
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
        PyObject *item = PyList_GET_ITEM(log, start + i);
        values[i] = PyLong_CheckExact(item) ? PyLong_AsSsize_t(item) : PyNumber_AsSsize_t(item, PyExc_OverflowError);
        if (values[i] == -1 && PyErr_Occurred()) {
            PyMem_Free(values);
            return NULL;
        }
    }
    Py_ssize_t lo = 0, hi = -1, kept = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i == 0 || values[i] < lo) lo = values[i];
        if (i == 0 || values[i] > hi) hi = values[i];
    }
    /* node numbers within a small range (the usual case: a stretch of binds over a cluster's nodes): each value
     * marked in a bitmap over the range, with its first position in the stretch, the bitmap read in order a word
     * at a time, the log's own int objects handed out (no new ones); else sorted. (The bitmap is the only memory
     * cleared: a stretch of ~80 binds over 1,000 nodes clears 16 words, not the range's 1,000 positions; a
     * position is read only where its bit is set.) */
    size_t span = n ? (size_t)(hi - lo) + 1 : 0, words = (span + 63) / 64;
    int small = n && n < (Py_ssize_t)UINT32_MAX && span - 1 < (size_t)16 * (size_t)n + 4096;
    uint64_t *bits = small ? calloc(words, sizeof(uint64_t)) : NULL;
    uint32_t *first = bits != NULL ? malloc(span * sizeof(uint32_t)) : NULL;
    if (first != NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t v = (size_t)(values[i] - lo);
            uint64_t bit = (uint64_t)1 << (v & 63);
            if (!(bits[v >> 6] & bit)) { bits[v >> 6] |= bit; first[v] = (uint32_t)i; kept++; }
        }
        PyObject *out = PyList_New(kept);
        Py_ssize_t k = 0;
        for (size_t w = 0; out != NULL && w < words; w++) {
            for (uint64_t set = bits[w]; set; set &= set - 1) {
                size_t v = w * 64 + (size_t)__builtin_ctzll(set);
                PyObject *item = PyList_GET_ITEM(log, start + (Py_ssize_t)first[v]);
                PyObject *got = PyLong_CheckExact(item) ? Py_NewRef(item) : PyLong_FromSsize_t(lo + (Py_ssize_t)v);
                if (got == NULL) {
                    Py_CLEAR(out);
                    break;
                }
                PyList_SET_ITEM(out, k++, got);
            }
        }
        free(first);
        free(bits);
        PyMem_Free(values);
        return out;
    } else {
        free(bits);
        qsort(values, (size_t)n, sizeof *values, compare_ssize);
        for (Py_ssize_t i = 0; i < n; i++)
            if (kept == 0 || values[i] != values[kept - 1]) values[kept++] = values[i];
    }
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

static PyObject *add_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    enum { MAX_PAIRS = 4 };
    if (nargs < 4 || nargs % 2 || nargs > 2 + 2 * MAX_PAIRS) {
        PyErr_SetString(PyExc_TypeError, "add_rows(node, sign, matrix, row[, matrix, row…]) takes up to 4 pairs");
        return NULL;
    }
    Py_ssize_t node = PyNumber_AsSsize_t(args[0], PyExc_IndexError);
    long long sign = PyLong_AsLongLong(args[1]);
    if ((node == -1 || sign == -1) && PyErr_Occurred()) return NULL;
    Py_ssize_t pairs = (nargs - 2) / 2, held = 0;
    Buf bufs[2 * MAX_PAIRS];
    Buf *all[2 * MAX_PAIRS];
    memset(bufs, 0, sizeof bufs);
    for (Py_ssize_t k = 0; k < 2 * MAX_PAIRS; k++) all[k] = &bufs[k];
    PyObject *result = NULL;
    /* every pair checked before any is added: all of them, or none (the caller's numpy path then) */
    for (Py_ssize_t p = 0; p < pairs; p++) {
        Buf *matrix = &bufs[2 * p], *row = &bufs[2 * p + 1];
        held = 2 * p + 2;
        if (nd_get(args[2 + 2 * p], matrix, 1) < 0 || get(args[3 + 2 * p], row, 0, 8, "row")) goto done;
        const char *f = matrix->b.format ? matrix->b.format : "B";
        char kind = f[strlen(f) - 1];
        if (matrix->b.ndim != 2 || matrix->b.itemsize != 8 || !(kind == 'l' || kind == 'q')) {
            PyErr_SetString(PyExc_TypeError, "add_rows: a two-dimensional int64 matrix expected");
            goto done;
        }
        if (node < 0 || node >= matrix->b.shape[0] || row->b.shape[0] != matrix->b.shape[1]) {
            PyErr_SetString(PyExc_ValueError, "add_rows: a node out of range or a row of another width");
            goto done;
        }
    }
    for (Py_ssize_t p = 0; p < pairs; p++) {
        Buf *matrix = &bufs[2 * p], *row = &bufs[2 * p + 1];
        Py_ssize_t cols = matrix->b.shape[1];
        int64_t *to = (int64_t *)matrix->b.buf + node * cols;
        const int64_t *by = row->b.buf;
        for (Py_ssize_t k = 0; k < cols; k++)  /* numpy's int64 sums wrap: unsigned arithmetic, the same bits */
            to[k] = (int64_t)((uint64_t)to[k] + (uint64_t)by[k] * (uint64_t)sign);
    }
    result = Py_NewRef(Py_None);
done:
    release(all, (size_t)held);
    return result;
}

static PyMethodDef methods[] = {
    {"best", (PyCFunction)(void (*)(void))best, METH_FASTCALL,
     "best(total, feasible, normed, summed, top[, scale, extra]) -> count: the feasible nodes' scores and those tying "
     "for the highest"},
    {"add_rows", (PyCFunction)(void (*)(void))add_rows, METH_FASTCALL,
     "add_rows(node, sign, matrix, row[, matrix, row...]) -> None: matrix[node] += sign * row for each pair, int64 "
     "wrapping; every pair checked first"},
    {"cell_scores", (PyCFunction)(void (*)(void))cell_scores, METH_FASTCALL,
     "cell_scores(cell, idx, size, cells, outer, sizes, skews, sums, out) -> ignored nodes, or None: PodTopologySpread's "
     "normalized score of each filtered node from its cell written into out"},
    {"distinct", (PyCFunction)(void (*)(void))distinct, METH_FASTCALL,
     "distinct(values, start) -> the distinct ints of the list from position start, ascending"},
    {"scatter", (PyCFunction)(void (*)(void))scatter, METH_FASTCALL,
     "scatter(node, klass, sign, start, end, table, target, index, mask, mult, offset) -> top or None: a stretch "
     "of the change log added to counts by pod class"},
    {"occurring", (PyCFunction)(void (*)(void))occurring, METH_FASTCALL,
     "occurring(codes, idx) -> the values among codes[idx] as a bit mask (None: one beyond 0..63)"},
    {"occupied", (PyCFunction)(void (*)(void))occupied, METH_FASTCALL,
     "occupied(cell, idx, size) -> (distinct cells >= 0 among cell[idx], ascending; how many are < 0)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_countkernels",
    .m_doc = "The change log's counts by pod class in C (podclasses.py and its followers are the reference).",
    .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__countkernels(void) {
    nd_init();
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ARRAY_VIEW", nd_type != NULL) < 0) Py_CLEAR(m);  /* (_ndview.h) */
    return m;
}
