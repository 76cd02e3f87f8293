/* A numpy array's memory as a Py_buffer, read off the array object itself (included by _rowkernels.c and
 * _countkernels.c).
 *
 * The kernels take a dozen arrays a call and are called a few times a cycle: through the buffer protocol each
 * array costs numpy's `array_getbuffer`, which builds and compares the buffer's format string and its shape
 * info every time (≈ 600 instructions; 2.6 % of `kubefit simulate` on the production file, 340,000 requests).
 * An array of exactly numpy.ndarray, with one of the native integer or bool dtypes the kernels read, C-contiguous
 * and aligned (and writeable when asked) has its data, dimensions and dtype at fixed places of its object: numpy's
 * `PyArrayObject_fields` (numpy/ndarraytypes.h), a layout that is numpy's ABI since 1.7 (extensions built against
 * any numpy read it there). `nd_init` checks it against the buffer protocol on an array of its own when the
 * module loads, and any object the view does not take (another type, dtype, layout, or numpy's layout not as
 * expected) goes through the buffer protocol as before: the same memory, format and shape either way.
 *
 * numpy is not included: the kernels build without its headers (setup.py), and numpy is imported at run time only
 * (the kernels' callers have imported it already). */
#ifndef KUBEFIT_NDVIEW_H
#define KUBEFIT_NDVIEW_H

#include <Python.h>

/* A buffer the kernel reads: `held` when it was given (an optional argument may be None), `owned` when it came
 * through the buffer protocol (then released with PyBuffer_Release). */
typedef struct { Py_buffer b; int held; int owned; } Buf;

typedef struct {  /* the head of numpy's `PyArrayObject_fields` */
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} NdHead;

#define ND_C_CONTIGUOUS 0x0001  /* NPY_ARRAY_C_CONTIGUOUS */
#define ND_ALIGNED 0x0100  /* NPY_ARRAY_ALIGNED */
#define ND_WRITEABLE 0x0400  /* NPY_ARRAY_WRITEABLE */
#define ND_WARN_ON_WRITE 0x80000000u  /* NPY_ARRAY_WARN_ON_WRITE: a write through the buffer protocol warns */

#define ND_DTYPES 6
static const char *const nd_names[ND_DTYPES] = {"int64", "longlong", "int32", "int8", "uint8", "bool"};
static PyTypeObject *nd_type;  /* numpy.ndarray; NULL: every array through the buffer protocol */
static PyObject *nd_descr[ND_DTYPES];  /* numpy.dtype(name) (native byte order: numpy keeps one object each) */
static char nd_format[ND_DTYPES][2];  /* its buffer format (`dtype.char`) */
static Py_ssize_t nd_size[ND_DTYPES];

/* The view of `o` in `b` (1), or 0 when it is not an array the view takes. */
static int nd_view(PyObject *o, Py_buffer *b, int writable) {
    if (nd_type == NULL || Py_TYPE(o) != nd_type) return 0;
    const NdHead *a = (const NdHead *)o;
    unsigned flags = (unsigned)a->flags, need = ND_C_CONTIGUOUS | ND_ALIGNED | (writable ? ND_WRITEABLE : 0);
    if ((flags & need) != need || (writable && (flags & ND_WARN_ON_WRITE))) return 0;
    int k = 0;
    while (k < ND_DTYPES && a->descr != nd_descr[k]) k++;
    if (k == ND_DTYPES) return 0;
    Py_ssize_t len = nd_size[k];
    for (int d = 0; d < a->nd; d++) len *= a->dimensions[d];
    b->buf = a->data;
    b->obj = NULL;
    b->len = len;
    b->itemsize = nd_size[k];
    b->readonly = !(flags & ND_WRITEABLE);
    b->ndim = a->nd;
    b->format = nd_format[k];
    b->shape = a->dimensions;
    b->strides = NULL;
    b->suboffsets = NULL;
    b->internal = NULL;
    return 1;
}

/* Learn numpy's ndarray type and dtypes, and check the layout on an array of each dtype against the buffer
 * protocol; on any doubt (no numpy, another layout) the view stays off. Called once by the module's init. */
static void nd_init(void) {
    PyObject *np = PyImport_ImportModule("numpy"), *type = NULL;
    int good = np != NULL && (type = PyObject_GetAttrString(np, "ndarray")) != NULL && PyType_Check(type);
    for (int k = 0; good && k < ND_DTYPES; k++) {
        PyObject *arr = PyObject_CallMethod(np, "zeros", "(i)s", 3, nd_names[k]);
        PyObject *descr = arr ? PyObject_GetAttrString(arr, "dtype") : NULL;
        PyObject *chr = descr ? PyObject_GetAttrString(descr, "char") : NULL;
        Py_buffer pb;
        good = chr != NULL && PyUnicode_Check(chr) && PyUnicode_GET_LENGTH(chr) == 1 && Py_TYPE(arr) == (PyTypeObject *)type
               && PyObject_GetBuffer(arr, &pb, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) == 0;
        if (good) {
            const NdHead *a = (const NdHead *)arr;
            good = a->data == pb.buf && a->nd == 1 && pb.ndim == 1 && a->dimensions[0] == 3 && pb.shape[0] == 3
                   && a->descr == descr && (a->flags & (ND_C_CONTIGUOUS | ND_ALIGNED | ND_WRITEABLE))
                          == (ND_C_CONTIGUOUS | ND_ALIGNED | ND_WRITEABLE)
                   && pb.format != NULL && pb.format[0] != '\0'
                   && pb.format[strlen(pb.format) - 1] == (char)PyUnicode_READ_CHAR(chr, 0);
            nd_format[k][0] = (char)PyUnicode_READ_CHAR(chr, 0);
            nd_format[k][1] = '\0';
            nd_size[k] = pb.itemsize;
            PyBuffer_Release(&pb);
        }
        if (good) {
            nd_descr[k] = descr;  /* (kept: numpy's own dtype objects live as long as numpy) */
            Py_INCREF(descr);
        }
        Py_XDECREF(chr);
        Py_XDECREF(descr);
        Py_XDECREF(arr);
    }
    if (good) {
        nd_type = (PyTypeObject *)type;
        Py_INCREF(type);
    }
    Py_XDECREF(type);
    Py_XDECREF(np);
    PyErr_Clear();  /* (no numpy, or numpy refusing: the buffer protocol then) */
}

/* `o` as a C-contiguous buffer (format and shape included): the view when it takes it, else the buffer protocol. */
static int nd_get(PyObject *o, Buf *buf, int writable) {
    if (nd_view(o, &buf->b, writable)) {
        buf->held = 1;
        buf->owned = 0;
        return 0;
    }
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, &buf->b, flags) < 0) return -1;
    buf->held = buf->owned = 1;
    return 0;
}

static void nd_release(Buf *buf) {
    if (buf->owned) PyBuffer_Release(&buf->b);
    buf->owned = 0;
}

#endif
