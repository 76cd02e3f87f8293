/* The row kernels of rows.py in C: a shape's Filter verdicts and Score plugins' raw scores for the few
 * nodes a bind changed, the same arithmetic in the same order (Go truncation, IEEE float64 without
 * contraction).  rows.py stays the reference and the fallback; the property tests hold the two equal.
 *
 * evaluate(spec, rows, allocatable, requested, nonzero, codes, raw, allowed, feasible, summed, total, bad,
 *          skip_infeasible) -> (rows done, Δ feasible nodes, Δ nodes with a score out of range, Δ feasibility)
 *
 * `spec` (int64, built by rows.compiled_spec) lists the shape's kernels:
 *   nStaticFilters, p…
 *   nLiveFilters,   (p, FIT_FILTER, podsColumn, nChecks, (column, want)…)…
 *   nStaticScorers, (s, weight)…
 *   nLiveScorers,   (s, weight, kind, …)…  kind LEAST/MOST/RATIO: nPairs, (column, useRequested, usedColumn,
 *                   podAmount, resourceWeight)…, RATIO then nPoints, (utilization, score)…;
 *                   kind BALANCED / BALANCED_WITH_WITHOUT (v1.36+): nLive, (column, usedColumn, podAmount)…
 * A row whose values leave the range where the int64 arithmetic is exact (rows.SAFE, or an overflow) stops
 * the call: the caller redoes the rows from there in Python.  Every row before it is fully written. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_ndview.h"

#define SAFE ((int64_t)1 << 52)
#define MAX_NODE_SCORE 100
#define MAX_UTILIZATION 100
#define INT64_MIN_ (-INT64_MAX - 1)
enum { FIT_FILTER = 1, LEAST = 1, MOST = 2, RATIO = 3, BALANCED = 4, BALANCED_WITH_WITHOUT = 5 };

typedef struct {
    const int64_t *alloc, *req, *nz;
    Py_ssize_t ncols;
} Row;

static inline int unsafe(int64_t v) { return v < -SAFE || v > SAFE; }

/* Go's a / b on int64 (b != 0): C99 division truncates toward zero as Go's does. */
static inline int64_t go_div(int64_t a, int64_t b) { return a / b; }

/* Python's a // b (b != 0). */
static inline int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* NodeResourcesFit's Filter (rows.fit_filter_row): 1 rejects.  Exact in 128 bits like Python's ints. */
static int64_t fit_filter(const int64_t **sp, const Row *r) {
    const int64_t *s = *sp;
    int64_t pods = s[0], n = s[1];
    int64_t code = 0;
    if ((__int128)r->req[pods] + 1 > (__int128)r->alloc[pods]) code = 1;
    for (int64_t k = 0; k < n && !code; k++) {
        int64_t col = s[2 + 2 * k], want = s[3 + 2 * k];
        if ((__int128)want > (__int128)r->alloc[col] - (__int128)r->req[col]) code = 1;
    }
    *sp = s + 2 + 2 * n;
    return code;
}

/* helper.BuildBrokenLinearFunction on the scaled shape (strategies.broken_linear_one). */
static int broken_linear(int64_t u, const int64_t *pts, int64_t n, int64_t *out) {
    for (int64_t k = 0; k < n; k++) {
        int64_t uk = pts[2 * k], sk = pts[2 * k + 1];
        if (u <= uk) {
            if (k == 0) { *out = sk; return 0; }
            int64_t u0 = pts[2 * k - 2], s0 = pts[2 * k - 1], prod;
            if (uk == u0 || __builtin_mul_overflow(sk - s0, u - u0, &prod)) return -1;
            *out = s0 + go_div(prod, uk - u0);
            return 0;
        }
    }
    if (n == 0) return -1;
    *out = pts[2 * n - 1];
    return 0;
}

/* One resource's score (strategies.*_one), alloc != 0. */
static int resource_score(int64_t kind, int64_t req, int64_t alloc, const int64_t *pts, int64_t npts,
                          int64_t *out) {
    if (kind == LEAST) {
        *out = req > alloc ? 0 : go_div((alloc - req) * MAX_NODE_SCORE, alloc);
        return 0;
    }
    if (kind == MOST) {
        *out = go_div((req < alloc ? req : alloc) * MAX_NODE_SCORE, alloc);
        return 0;
    }
    int64_t u = req > alloc ? MAX_UTILIZATION : go_div(req * MAX_UTILIZATION, alloc);
    return broken_linear(u, pts, npts, out);
}

/* NodeResourcesFit's score (rows.fit_score_row); -1: out of the exact range. */
static int fit_score(int64_t kind, const int64_t **sp, const Row *r, int64_t *out) {
    const int64_t *s = *sp;
    int64_t npairs = s[0];
    const int64_t *pairs = s + 1, *pts = pairs + 5 * npairs;
    int64_t npts = 0;
    if (kind == RATIO) { npts = pts[0]; pts += 1; }
    *sp = pts + 2 * npts;
    int64_t num = 0, den = 0;
    for (int64_t k = 0; k < npairs; k++) {
        const int64_t *q = pairs + 5 * k;
        int64_t a = r->alloc[q[0]];
        if (a == 0) continue;
        int64_t used = q[1] ? r->req[q[2]] : r->nz[q[2]], req, sc, term;
        if (__builtin_add_overflow(used, q[3], &req) || unsafe(a) || unsafe(req)) return -1;
        if (resource_score(kind, req, a, pts, npts, &sc)) return -1;
        if (kind == RATIO && sc <= 0) continue;
        if (__builtin_mul_overflow(sc, q[4], &term) || __builtin_add_overflow(num, term, &num)
            || __builtin_add_overflow(den, q[4], &den)) return -1;
    }
    if (den == 0) { *out = 0; return 0; }
    if (kind != RATIO) { *out = go_div(num, den); return 0; }
    int64_t n2, d2;
    if (__builtin_mul_overflow(num, 2, &n2) || __builtin_add_overflow(n2, den, &n2)
        || __builtin_mul_overflow(den, 2, &d2)) return -1;
    *out = floor_div(n2, d2);
    return 0;
}

/* balancedResourceScore of n fractions: (1 - std) * MaxNodeScore, truncated. */
static int64_t balance_score(const double *fracs, int64_t n) {
    double sd;
    if (n == 2) {
        sd = fabs((fracs[0] - fracs[1]) / 2);
    } else if (n > 2) {
        double total = 0.0, sq = 0.0;
        for (int64_t k = 0; k < n; k++) total = total + fracs[k];
        double mean = total / (double)n;
        for (int64_t k = 0; k < n; k++) { double d = fracs[k] - mean; sq = sq + d * d; }
        sd = sqrt(sq / (double)n);
    } else {
        sd = 0.0;
    }
    return (int64_t)((1 - sd) * 100);
}

/* NodeResourcesBalancedAllocation (rows.balanced_score_row): float64 in the same order.  `with_without`:
 * v1.36's balancedResourceScorer, 50 + (50 + with - without) / 2 (kubernetes#135573). */
static int balanced(const int64_t **sp, const Row *r, int with_without, int64_t *out) {
    const int64_t *s = *sp;
    int64_t nlive = s[0];
    *sp = s + 1 + 3 * nlive;
    double with[64], without[64];
    int64_t n = 0;
    if (nlive > 64) return -1;
    for (int64_t k = 0; k < nlive; k++) {
        const int64_t *q = s + 1 + 3 * k;
        int64_t a = r->alloc[q[0]], used = r->req[q[1]], req;
        if (a == 0) continue;
        if (__builtin_add_overflow(used, q[2], &req) || unsafe(a) || unsafe(req) || unsafe(used)) return -1;
        double f = (double)req / (double)a, g = (double)used / (double)a;
        with[n] = f < 1.0 ? f : 1.0;
        without[n++] = g < 1.0 ? g : 1.0;
    }
    int64_t score = balance_score(with, n);
    if (with_without) score = MAX_NODE_SCORE / 2 + (MAX_NODE_SCORE / 2 + score - balance_score(without, n)) / 2;
    *out = score;
    return 0;
}

/* Whether `spec` is well formed for arrays of `ncols` resources, `nf` filters and `ns` scorers (every index
 * in range), so that the kernels read nothing outside them. */
static int spec_ok(const int64_t *s, Py_ssize_t len, Py_ssize_t ncols, Py_ssize_t nf, Py_ssize_t ns) {
    Py_ssize_t at = 0;
#define TAKE(v) do { if (at >= len) return 0; (v) = s[at++]; } while (0)
#define IN(v, hi) ((v) >= 0 && (v) < (hi))
    int64_t count, v, kind, n;
    TAKE(count);
    for (int64_t k = 0; k < count; k++) { TAKE(v); if (!IN(v, nf)) return 0; }
    TAKE(count);
    if (!IN(count, 65)) return 0;
    for (int64_t k = 0; k < count; k++) {
        TAKE(v); if (!IN(v, nf)) return 0;
        TAKE(kind); if (kind != FIT_FILTER) return 0;
        TAKE(v); if (!IN(v, ncols)) return 0;
        TAKE(n); if (n < 0) return 0;
        for (int64_t j = 0; j < n; j++) { TAKE(v); if (!IN(v, ncols)) return 0; TAKE(v); }
    }
    TAKE(count);
    for (int64_t k = 0; k < count; k++) { TAKE(v); if (!IN(v, ns)) return 0; TAKE(v); }
    TAKE(count);
    if (!IN(count, 65)) return 0;
    for (int64_t k = 0; k < count; k++) {
        TAKE(v); if (!IN(v, ns)) return 0;
        TAKE(v);
        TAKE(kind);
        if (kind == BALANCED || kind == BALANCED_WITH_WITHOUT) {
            TAKE(n); if (!IN(n, 65)) return 0;
            for (int64_t j = 0; j < n; j++) {
                TAKE(v); if (!IN(v, ncols)) return 0;
                TAKE(v); if (!IN(v, ncols)) return 0;
                TAKE(v);
            }
        } else if (kind == LEAST || kind == MOST || kind == RATIO) {
            TAKE(n); if (n < 0) return 0;
            for (int64_t j = 0; j < n; j++) {
                int64_t use_req;
                TAKE(v); if (!IN(v, ncols)) return 0;
                TAKE(use_req);
                TAKE(v); if (!IN(v, use_req ? ncols : 2)) return 0;
                TAKE(v); TAKE(v);
            }
            if (kind == RATIO) {
                TAKE(n); if (n < 0) return 0;
                for (int64_t j = 0; j < 2 * n; j++) TAKE(v);
            }
        } else {
            return 0;
        }
    }
    return at == len;
#undef TAKE
#undef IN
}

static int get(PyObject *o, Buf *buf, int writable, Py_ssize_t itemsize, const char *what) {
    if (nd_get(o, buf, writable) < 0) return -1;
    const char *f = buf->b.format ? buf->b.format : "B";
    char kind = f[strlen(f) - 1];
    int integral = kind == 'l' || kind == 'q' || kind == 'b' || kind == 'B' || kind == '?';
    if (buf->b.itemsize != itemsize || !integral) {
        PyErr_Format(PyExc_TypeError, "%s: integers of %zd bytes expected", what, itemsize);
        return -1;
    }
    return 0;
}

static PyObject *evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 13) {
        PyErr_SetString(PyExc_TypeError, "evaluate() takes 13 arguments");
        return NULL;
    }
    Buf spec = {0}, al = {0}, rq = {0}, nz = {0}, codes = {0}, raw = {0}, allowed = {0}, ok = {0}, summed = {0},
        total = {0}, bad = {0};
    PyObject *rows = args[1], *result = NULL;
    int has_allowed = args[7] != Py_None, skip = PyObject_IsTrue(args[12]);
    if (!PyList_Check(rows)) { PyErr_SetString(PyExc_TypeError, "rows: a list expected"); return NULL; }
    if (get(args[0], &spec, 0, 8, "spec") || get(args[2], &al, 0, 8, "allocatable")
        || get(args[3], &rq, 0, 8, "requested") || get(args[4], &nz, 0, 8, "nonzero")
        || get(args[5], &codes, 1, 1, "codes") || get(args[6], &raw, 1, 8, "raw")
        || (has_allowed && get(args[7], &allowed, 0, 1, "allowed")) || get(args[8], &ok, 1, 1, "feasible")
        || get(args[9], &summed, 1, 8, "summed") || get(args[10], &total, 1, 8, "total")
        || get(args[11], &bad, 1, 1, "bad"))
        goto done;
    {
        Py_ssize_t n = summed.b.ndim == 1 ? summed.b.shape[0] : -1, ncols = al.b.ndim == 2 ? al.b.shape[1] : -1;
        int shapes = n >= 0 && ncols >= 0 && al.b.shape[0] == n && rq.b.ndim == 2 && rq.b.shape[0] == n
            && rq.b.shape[1] == ncols && nz.b.ndim == 2 && nz.b.shape[0] == n && nz.b.shape[1] == 2
            && codes.b.ndim == 2 && codes.b.shape[1] == n && raw.b.ndim == 2 && raw.b.shape[1] == n
            && (!has_allowed || (allowed.b.ndim == 1 && allowed.b.shape[0] == n))
            && ok.b.ndim == 1 && ok.b.shape[0] == n && total.b.ndim == 1 && total.b.shape[0] == n
            && bad.b.ndim == 1 && bad.b.shape[0] == n && spec.b.ndim == 1;
        if (!shapes || !spec_ok(spec.b.buf, spec.b.shape[0], ncols, codes.b.shape[0], raw.b.shape[0])) {
            PyErr_SetString(PyExc_ValueError, "evaluate(): arrays or spec of unexpected shapes");
            goto done;
        }
        const int64_t *sp0 = spec.b.buf;
        int8_t *cd = codes.b.buf;
        int64_t *rw = raw.b.buf, *sm = summed.b.buf, *tt = total.b.buf;
        uint8_t *fe = ok.b.buf, *bd = bad.b.buf;
        const uint8_t *aw = has_allowed ? allowed.b.buf : NULL;
        Py_ssize_t done_rows = 0, nrows = PyList_GET_SIZE(rows);
        long d_ok = 0, d_bad = 0, d_feasibility = 0;
        for (; done_rows < nrows; done_rows++) {
            PyObject *item = PyList_GET_ITEM(rows, done_rows);
            Py_ssize_t i = PyLong_CheckExact(item) ? PyLong_AsSsize_t(item) : PyNumber_AsSsize_t(item, PyExc_IndexError);
            if (i == -1 && PyErr_Occurred()) goto done;
            if (i < 0 || i >= n) { PyErr_SetString(PyExc_IndexError, "row out of range"); goto done; }
            if (skip && !fe[i]) continue;
            Row r = {(const int64_t *)al.b.buf + i * ncols, (const int64_t *)rq.b.buf + i * ncols,
                     (const int64_t *)nz.b.buf + i * 2, ncols};
            const int64_t *sp = sp0;
            int feasible = aw ? aw[i] != 0 : 1;
            /* the row's new values, written only once the whole row is done */
            int8_t new_codes[64]; int64_t code_at[64], nc = 0;
            int64_t new_raw[64], raw_at[64], nr = 0;
            int64_t nstatic = *sp++;
            for (int64_t k = 0; k < nstatic; k++, sp++) feasible = feasible && cd[sp[0] * n + i] == 0;
            int64_t nlive = *sp++;
            if (nlive > 64) goto stop;
            for (int64_t k = 0; k < nlive; k++) {
                int64_t p = sp[0];
                sp += 2; /* p, FIT_FILTER */
                int64_t c = fit_filter(&sp, &r);
                new_codes[nc] = (int8_t)c; code_at[nc++] = p;
                feasible = feasible && c == 0;
            }
            int64_t sum = 0;
            int out = 0;
            nstatic = *sp++;
            for (int64_t k = 0; k < nstatic; k++, sp += 2) {
                int64_t v = rw[sp[0] * n + i], term;
                if (__builtin_mul_overflow(sp[1], v, &term) || __builtin_add_overflow(sum, term, &sum)) goto stop;
                out = out || v < 0 || v > MAX_NODE_SCORE;
            }
            nlive = *sp++;
            if (nlive > 64) goto stop;
            for (int64_t k = 0; k < nlive; k++) {
                int64_t s = sp[0], w = sp[1], kind = sp[2], v, term;
                sp += 3;
                int bad_row = (kind == BALANCED || kind == BALANCED_WITH_WITHOUT)
                    ? balanced(&sp, &r, kind == BALANCED_WITH_WITHOUT, &v) : fit_score(kind, &sp, &r, &v);
                if (bad_row || __builtin_mul_overflow(w, v, &term) || __builtin_add_overflow(sum, term, &sum))
                    goto stop;
                new_raw[nr] = v; raw_at[nr++] = s;
                out = out || v < 0 || v > MAX_NODE_SCORE;
            }
            for (int64_t k = 0; k < nc; k++) cd[code_at[k] * n + i] = new_codes[k];
            for (int64_t k = 0; k < nr; k++) rw[raw_at[k] * n + i] = new_raw[k];
            if (feasible != (fe[i] != 0)) { d_ok += feasible ? 1 : -1; fe[i] = (uint8_t)feasible; d_feasibility++; }
            sm[i] = sum;
            tt[i] = feasible ? sum : INT64_MIN_;
            if (out != (bd[i] != 0)) { d_bad += out ? 1 : -1; bd[i] = (uint8_t)out; }
        }
    stop:
        result = Py_BuildValue("(nlll)", done_rows, d_ok, d_bad, d_feasibility);
    }
done:
    Buf *all[] = {&spec, &al, &rq, &nz, &codes, &raw, &allowed, &ok, &summed, &total, &bad};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        nd_release(all[k]);
    return result;
}

static PyMethodDef methods[] = {
    {"evaluate", (PyCFunction)(void (*)(void))evaluate, METH_FASTCALL,
     "evaluate(spec, rows, allocatable, requested, nonzero, codes, raw, allowed, feasible, summed, total, bad, "
     "skip_infeasible) -> (rows done, d feasible, d out of range, d feasibility): rows.py's kernels in C"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_rowkernels",
    .m_doc = "rows.py's row kernels in C (see rows.compiled_spec).", .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__rowkernels(void) {
    nd_init();
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ARRAY_VIEW", nd_type != NULL) < 0) Py_CLEAR(m);  /* (_ndview.h) */
    return m;
}
