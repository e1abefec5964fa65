/*
 * Compiled loops of mixeval's resampling kernels (optional: mixeval/resampling/_engine.py has
 * the numpy implementation of the same streams and arithmetic and falls back to it when this
 * module is absent or MIXEVAL_KERNELS=numpy).
 *
 * Every resample is the one the numpy path draws from the same seed: the words either come
 * from numpy (drawn by the caller) or are drawn here exactly as numpy draws them with
 * Generator(SFC64(seed)).integers(0, n**m, dtype=int64): numpy's SFC64 generator (whose stream
 * numpy keeps fixed) inline, and Lemire's multiply-and-reject as numpy's 64-bit path does it;
 * tests compare the draws with numpy's.
 *
 *   bootstrap_sums(draws, S, n, m, size, out)
 *       draws: int64[h], h = ceil(size * n / m), each uniform on [0, n**m);
 *       S: float64[n, k] (C order); out: float64[size, k] (overwritten).
 *       The m base-n digits of draw t (most significant first) are the indices at positions
 *       t, h + t, ..., (m - 1) h + t of a sequence whose first size * n entries, row by row,
 *       are the item indices of the `size` resamples. out[r, :] = sum of S[index, :] over row r.
 *   bootstrap_sums_sfc64(states, S, n, m, size, out)
 *       The same for G chunks of `size` resamples each (k == 1, n**m > 2**32), chunk g's draws
 *       made here by numpy's SFC64 from states[g] = (a, b, c, counter), the state of
 *       SFC64(seed).state["state"]["state"]; chunk g's sums go to out[g * size:(g + 1) * size].
 *   sign_flip_sums(bits, DT, size, out)
 *       bits: uint8[size, g]; DT: float64[k, 8 g] (items padded with zeros to a multiple of 8);
 *       out: float64[size, k] (overwritten). Bit b (least significant first) of byte j of row r
 *       keeps item 8 j + b: out[r, c] = sum over kept items i of DT[c, i].
 *   sfc64_draws(state, bound, out)
 *       The draws of the fused path, for tests against Generator(SFC64).integers(0, bound).
 *
 * All release the GIL, so Python threads run them on different chunks at once. Sums run in a
 * fixed order (the output is reproducible); it differs from numpy's pairwise order, so the
 * compiled and numpy paths agree to rounding (tested: within 1e-14 of the sum of |S|), not bit
 * for bit.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#elif defined(_MSC_VER)
#define ALWAYS_INLINE static __forceinline
#define UNLIKELY(x) (x)
#else
#define ALWAYS_INLINE static inline
#define UNLIKELY(x) (x)
#endif

/* A 128-bit product (gcc, clang) enables the exact fast division and the fused draws. */
#if defined(__SIZEOF_INT128__)
#define HAVE_MULHI 1
typedef unsigned __int128 u128;
ALWAYS_INLINE uint64_t mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((u128)a * b) >> 64);
}
#endif

/* Exact division by an invariant divisor d >= 2 for dividends 0 <= x < 2**63 (Granlund and
 * Montgomery 1994, Thm 4.2 with N = 63): with l = ceil(log2 d) and m = ceil(2**(63 + l) / d),
 * which fits in 64 bits, x // d = mulhi(m, x) >> (l - 1). Without a 128-bit product the plain
 * division instruction is used (same results, slower). */
typedef struct {
    uint64_t d, m;
    int shift;
} divider_t;

static divider_t make_divider(uint64_t d)
{
    divider_t z;
    int l = 0;
    z.d = d;
    z.m = 0;
    while (l < 64 && ((uint64_t)1 << l) < d) {
        l++;
    }
    z.shift = l - 1;
#ifdef HAVE_MULHI
    const u128 p = (u128)1 << (63 + l);
    z.m = (uint64_t)((p + d - 1) / d);
#endif
    return z;
}

ALWAYS_INLINE uint64_t div_by(uint64_t x, const divider_t z)
{
#ifdef HAVE_MULHI
    return mulhi(x, z.m) >> z.shift;
#else
    return x / z.d;
#endif
}

/* The m digits of x in base n (divisors n and n**2), most significant first. */
ALWAYS_INLINE void digits_of(uint64_t x, const int m, const divider_t dn, const divider_t dn2, uint64_t *dig)
{
    if (m == 3) {
        dig[0] = div_by(x, dn2);
        const uint64_t rem = x - dig[0] * dn2.d;
        dig[1] = div_by(rem, dn);
        dig[2] = rem - dig[1] * dn.d;
    } else if (m == 2) {
        dig[0] = div_by(x, dn);
        dig[1] = x - dig[0] * dn.d;
    } else {
        dig[0] = x;
    }
}

/* State of digit stream j: it fills positions [pos, stop) of the index sequence; `row` is the
 * resample of position `pos`, `next` the first position of the following resample. */
typedef struct {
    Py_ssize_t pos, stop, row, next;
} stream_t;

static void init_streams(stream_t *st, int m, Py_ssize_t h, Py_ssize_t total, Py_ssize_t n)
{
    for (int j = 0; j < m; j++) {
        st[j].pos = (Py_ssize_t)j * h;
        st[j].stop = (Py_ssize_t)(j + 1) * h < total ? (Py_ssize_t)(j + 1) * h : total;
        st[j].row = st[j].pos / n;
        st[j].next = (st[j].row + 1) * n;
    }
}

/* True if any draw lies outside [0, bound): checked before the loops use the draws. */
static int draws_out_of_range(const int64_t *v, Py_ssize_t h, int64_t bound)
{
    int bad = 0;
    for (Py_ssize_t t = 0; t < h; t++) {
        bad |= (v[t] < 0) | (v[t] >= bound);
    }
    return bad;
}

/* Where a chunk's words come from: numpy (drawn by the caller) or the inline SFC64. */
enum { WORDS = 0, SFC = 1 };

#ifdef HAVE_MULHI
/* numpy's SFC64 (Chris Doty-Humphrey's Small Fast Chaotic generator, 256-bit state with a
 * 64-bit counter): state (a, b, c, w). */
typedef struct {
    uint64_t a, b, c, w;
} sfc_t;

ALWAYS_INLINE uint64_t sfc_next(sfc_t *g)
{
    const uint64_t tmp = g->a + g->b + g->w++;
    g->a = g->b ^ (g->b >> 11);
    g->b = g->c + (g->c << 3);
    g->c = ((g->c << 24) | (g->c >> 40)) + tmp;
    return tmp;
}

/* One draw of Generator.integers(0, rng_excl, dtype=int64) for rng_excl - 1 > 0xFFFFFFFF:
 * numpy's 64-bit path (Lemire's multiply-and-reject on next_uint64, random_bounded_uint64_fill
 * in numpy's distributions.c). threshold = 2**64 mod rng_excl. */
ALWAYS_INLINE uint64_t lemire_sfc(sfc_t *g, uint64_t rng_excl, uint64_t threshold)
{
    u128 p = (u128)sfc_next(g) * rng_excl;
    uint64_t leftover = (uint64_t)p;
    if (UNLIKELY(leftover < rng_excl)) {
        while (leftover < threshold) {
            p = (u128)sfc_next(g) * rng_excl;
            leftover = (uint64_t)p;
        }
    }
    return (uint64_t)(p >> 64);
}
#endif

typedef struct {
    const int64_t *words; /* WORDS */
#ifdef HAVE_MULHI
    sfc_t sfc; /* SFC: the chunk's generator, advanced as it draws */
#endif
    uint64_t rng_excl, threshold;
} source_t;

/* One run of `len` words, in which no active stream ends a resample: each word (numpy's, from
 * position t, or drawn here by the chunk's SFC64), its digits, and S at each of the first A
 * digits added to the running sums a[0..A-1], in one loop. */
ALWAYS_INLINE void run_words(source_t *src, const int kind, Py_ssize_t t, Py_ssize_t len, const int m, const int A,
                             divider_t dn, divider_t dn2, const double *s, double *a)
{
    uint64_t dig[3];
    const uint64_t *w = kind == WORDS ? (const uint64_t *)src->words + t : NULL;
#ifdef HAVE_MULHI
    sfc_t g = src->sfc;
    const uint64_t E = src->rng_excl, T = src->threshold;
#endif
    double a0 = a[0], a1 = a[1], a2 = a[2];
    for (Py_ssize_t i = 0; i < len; i++) {
#ifdef HAVE_MULHI
        const uint64_t x = kind == SFC ? lemire_sfc(&g, E, T) : w[i];
#else
        const uint64_t x = w[i];
#endif
        digits_of(x, m, dn, dn2, dig);
        a0 += s[dig[0]];
        if (A >= 2) {
            a1 += s[dig[1]];
        }
        if (A == 3) {
            a2 += s[dig[2]];
        }
    }
#ifdef HAVE_MULHI
    src->sfc = g;
#endif
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
}

/* k == 1 for one chunk of `rows` resamples, compile-time word source and m. The words are
 * taken in runs within which no active digit stream reaches the end of a resample, so the inner
 * loops are draws, digits, gathers and adds only; a stream's running sum goes to its resample
 * when that resample (or the stream) ends. */
ALWAYS_INLINE void boot_k1_m(source_t *src, const int kind, Py_ssize_t h, const double *s, Py_ssize_t n,
                             const int m, Py_ssize_t total, Py_ssize_t rows, double *out)
{
    stream_t st[3];
    double acc[3] = {0.0, 0.0, 0.0};
    const divider_t dn = make_divider((uint64_t)n), dn2 = make_divider((uint64_t)n * (uint64_t)n);
    init_streams(st, m, h, total, n);
    /* every stream is active for t < full; after it, the last one has run out */
    const Py_ssize_t full = st[m - 1].stop - st[m - 1].pos;
    Py_ssize_t t = 0;
    while (t < h) {
        const int active = t < full ? m : m - 1;
        Py_ssize_t run = (t < full ? full : h) - t;
        for (int j = 0; j < active; j++) {
            if (st[j].next - st[j].pos < run) {
                run = st[j].next - st[j].pos;
            }
        }
        if (active == m) {
            run_words(src, kind, t, run, m, m, dn, dn2, s, acc);
        } else {
            run_words(src, kind, t, run, m, m - 1, dn, dn2, s, acc);
        }
        t += run;
        for (int j = 0; j < active; j++) {
            st[j].pos += run;
            if (st[j].pos == st[j].next) {
                out[st[j].row] += acc[j];
                acc[j] = 0.0;
                st[j].row += 1;
                st[j].next += n;
            }
        }
    }
    for (int j = 0; j < m; j++) {
        if (st[j].row < rows && st[j].pos != st[j].row * n) { /* a row this stream left part-way */
            out[st[j].row] += acc[j];
        }
    }
}

#define BOOT_M(KIND)                                                           \
    switch (m) {                                                               \
    case 3:                                                                    \
        boot_k1_m(src, KIND, h, s, n, 3, total, rows, out);                    \
        return;                                                                \
    case 2:                                                                    \
        boot_k1_m(src, KIND, h, s, n, 2, total, rows, out);                    \
        return;                                                                \
    default:                                                                   \
        boot_k1_m(src, KIND, h, s, n, 1, total, rows, out);                    \
        return;                                                                \
    }

static void boot_k1_words(source_t *src, Py_ssize_t h, const double *s, Py_ssize_t n, int m, Py_ssize_t total,
                          Py_ssize_t rows, double *out)
{
    BOOT_M(WORDS)
}

#ifdef HAVE_MULHI
static void boot_k1_sfc(source_t *src, Py_ssize_t h, const double *s, Py_ssize_t n, int m, Py_ssize_t total,
                        Py_ssize_t rows, double *out)
{
    BOOT_M(SFC)
}
#endif

/* Partial sums per digit stream for k > 1: consecutive indices of a stream add into LANES
 * rotating partial rows (independent chains of additions), summed into out when the stream's
 * resample (or the stream) ends. */
#define LANES 4

static void flush_lanes(double *lanes, Py_ssize_t k, double *dst)
{
    for (Py_ssize_t c = 0; c < k; c++) {
        dst[c] += (lanes[c] + lanes[k + c]) + (lanes[2 * k + c] + lanes[3 * k + c]);
    }
    memset(lanes, 0, (size_t)(LANES * k) * sizeof(double));
}

/* Any k, numpy's words (lanes: scratch of 3 * LANES * k doubles, zeroed). */
static void boot_k(const int64_t *v, Py_ssize_t h, const double *s, Py_ssize_t n, Py_ssize_t k, int m,
                   Py_ssize_t total, double *out, double *lanes)
{
    stream_t st[3];
    const divider_t dn = make_divider((uint64_t)n), dn2 = make_divider((uint64_t)n * (uint64_t)n);
    uint64_t dig[3];
    init_streams(st, m, h, total, n);
    for (Py_ssize_t t = 0; t < h; t++) {
        digits_of((uint64_t)v[t], m, dn, dn2, dig);
        const int lane = (int)(t & (LANES - 1));
        for (int j = 0; j < m; j++) {
            if (st[j].pos >= st[j].stop) {
                continue;
            }
            const double *src = s + dig[j] * (uint64_t)k;
            double *acc = lanes + (j * LANES + lane) * k;
            for (Py_ssize_t c = 0; c < k; c++) {
                acc[c] += src[c];
            }
            if (++st[j].pos == st[j].next) {
                flush_lanes(lanes + j * LANES * k, k, out + st[j].row * k);
                st[j].row += 1;
                st[j].next += n;
            }
        }
    }
    for (int j = 0; j < m; j++) {
        if (st[j].row < total / n && st[j].pos != st[j].row * n) { /* a row this stream left part-way */
            flush_lanes(lanes + j * LANES * k, k, out + st[j].row * k);
        }
    }
}

static int check_buffer(Py_buffer *b, Py_ssize_t itemsize, Py_ssize_t count, const char *name)
{
    if (b->len != itemsize * count) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd bytes, got %zd", name, itemsize * count, b->len);
        return -1;
    }
    return 0;
}

/* Validates n, m, size, S and out (out_rows rows); sets *total, *h, *k. -1 with an exception. */
static int check_boot_args(Py_ssize_t n, Py_ssize_t m, Py_ssize_t size, Py_buffer *sb, Py_buffer *ob,
                           Py_ssize_t out_chunks, Py_ssize_t *total, Py_ssize_t *h, Py_ssize_t *k)
{
    if (n < 1 || size < 1 || m < 1 || m > 3) {
        PyErr_SetString(PyExc_ValueError, "bootstrap_sums: need n >= 1, size >= 1 and 1 <= m <= 3");
        return -1;
    }
    /* n**m < 2**63, as the caller chooses m (index_digits) */
    if ((m >= 2 && (uint64_t)n > 3037000499ULL) || (m == 3 && (uint64_t)n > 2097151ULL)) {
        PyErr_SetString(PyExc_ValueError, "bootstrap_sums: n**m must be below 2**63");
        return -1;
    }
    if (size > PY_SSIZE_T_MAX / n / out_chunks) {
        PyErr_SetString(PyExc_OverflowError, "bootstrap_sums: size * n overflows");
        return -1;
    }
    *total = size * n;
    *h = (*total + m - 1) / m;
    if (sb->len == 0 || sb->len % (Py_ssize_t)(sizeof(double) * n) != 0) {
        PyErr_SetString(PyExc_ValueError, "bootstrap_sums: S must hold n rows of float64");
        return -1;
    }
    *k = sb->len / (Py_ssize_t)(sizeof(double) * n);
    return check_buffer(ob, sizeof(double), out_chunks * size * *k, "out");
}

static int64_t pow_n(Py_ssize_t n, Py_ssize_t m)
{
    return m == 3 ? (int64_t)n * n * n : (m == 2 ? (int64_t)n * n : (int64_t)n);
}

static PyObject *py_bootstrap_sums(PyObject *self, PyObject *args)
{
    Py_buffer vb, sb, ob;
    Py_ssize_t n, m, size, total, h, k;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*nnnw*", &vb, &sb, &n, &m, &size, &ob)) {
        return NULL;
    }
    if (check_boot_args(n, m, size, &sb, &ob, 1, &total, &h, &k) ||
        check_buffer(&vb, sizeof(int64_t), h, "draws")) {
        goto done;
    }
    int bad;
    double *lanes = NULL;
    Py_BEGIN_ALLOW_THREADS
    bad = draws_out_of_range((const int64_t *)vb.buf, h, pow_n(n, m));
    if (!bad) {
        double *o = (double *)ob.buf;
        const double *S = (const double *)sb.buf;
        memset(o, 0, (size_t)ob.len);
        if (n == 1) { /* every index is 0 (numpy's integers(0, 1) draws nothing) */
            for (Py_ssize_t r = 0; r < size; r++) {
                memcpy(o + r * k, S, (size_t)k * sizeof(double));
            }
        } else if (k == 1) {
            source_t src;
            memset(&src, 0, sizeof(src));
            src.words = (const int64_t *)vb.buf;
            boot_k1_words(&src, h, S, n, (int)m, total, size, o);
        } else if ((lanes = calloc((size_t)(3 * LANES * k), sizeof(double))) != NULL) {
            boot_k((const int64_t *)vb.buf, h, S, n, k, (int)m, total, o, lanes);
            free(lanes);
        }
    }
    Py_END_ALLOW_THREADS
    if (!bad && k > 1 && n > 1 && lanes == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "bootstrap_sums: a draw lies outside [0, n**m)");
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&vb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&ob);
    return result;
}

#ifdef HAVE_MULHI
/* The bound of the fused draws: n**m with n**m - 1 > 0xFFFFFFFF (numpy's 64-bit path). */
static int fused_bound(Py_ssize_t n, Py_ssize_t m, Py_ssize_t k, source_t *src)
{
    const uint64_t rng = (uint64_t)pow_n(n, m) - 1;
    if (k != 1 || rng <= 0xFFFFFFFFULL) {
        PyErr_SetString(PyExc_ValueError, "bootstrap_sums: fused draws need k == 1 and n**m > 2**32");
        return -1;
    }
    src->rng_excl = rng + 1;
    src->threshold = (0 - src->rng_excl) % src->rng_excl;
    return 0;
}

/* SFC64 states from uint64[G, 4] rows (a, b, c, counter); returns G, or -1 with an exception. */
static Py_ssize_t sfc_states(Py_buffer *b)
{
    const Py_ssize_t row = 4 * (Py_ssize_t)sizeof(uint64_t);
    if (b->len == 0 || b->len % row != 0) {
        PyErr_SetString(PyExc_ValueError, "SFC64 states: expected uint64[G, 4] rows (a, b, c, counter)");
        return -1;
    }
    return b->len / row;
}

static PyObject *py_bootstrap_sums_sfc64(PyObject *self, PyObject *args)
{
    Py_buffer gb, sb, ob;
    Py_ssize_t n, m, size, total, h, k, G;
    PyObject *result = NULL;
    source_t src;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*nnnw*", &gb, &sb, &n, &m, &size, &ob)) {
        return NULL;
    }
    memset(&src, 0, sizeof(src));
    if ((G = sfc_states(&gb)) < 0 || check_boot_args(n, m, size, &sb, &ob, G, &total, &h, &k) ||
        fused_bound(n, m, k, &src)) {
        goto done;
    }
    const uint64_t *w = (const uint64_t *)gb.buf;
    double *o = (double *)ob.buf;
    Py_BEGIN_ALLOW_THREADS
    memset(o, 0, (size_t)ob.len);
    for (Py_ssize_t g = 0; g < G; g++) {
        src.sfc.a = w[4 * g];
        src.sfc.b = w[4 * g + 1];
        src.sfc.c = w[4 * g + 2];
        src.sfc.w = w[4 * g + 3];
        boot_k1_sfc(&src, h, (const double *)sb.buf, n, (int)m, total, size, o + g * size);
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&gb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&ob);
    return result;
}

static int draw_args(unsigned long long bound, Py_buffer *ob, uint64_t *threshold)
{
    if (bound - 1 <= 0xFFFFFFFFULL || bound > (1ULL << 63) || ob->len % 8 != 0) {
        PyErr_SetString(PyExc_ValueError, "draws: need 2**32 < bound <= 2**63 and an int64 buffer");
        return -1;
    }
    *threshold = (0 - (uint64_t)bound) % (uint64_t)bound;
    return 0;
}

static PyObject *py_sfc64_draws(PyObject *self, PyObject *args)
{
    Py_buffer gb, ob;
    unsigned long long bound;
    uint64_t threshold;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*Kw*", &gb, &bound, &ob)) {
        return NULL;
    }
    if (sfc_states(&gb) != 1 || draw_args(bound, &ob, &threshold)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "sfc64_draws: one state (uint64[1, 4])");
        }
        goto done;
    }
    const uint64_t *w = (const uint64_t *)gb.buf;
    sfc_t g = {w[0], w[1], w[2], w[3]};
    for (Py_ssize_t i = 0; i < ob.len / 8; i++) {
        ((int64_t *)ob.buf)[i] = (int64_t)lemire_sfc(&g, bound, threshold);
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&gb);
    PyBuffer_Release(&ob);
    return result;
}
#endif

/* BIT[v][b] = bit b of the byte value v, as 0.0 or 1.0 (multiplying by it is exact). */
static double BIT[256][8];

static void flip_rows(const uint8_t *bits, Py_ssize_t size, Py_ssize_t groups, const double *dt,
                      Py_ssize_t k, double *out)
{
    for (Py_ssize_t r = 0; r < size; r++) {
        const uint8_t *row = bits + r * groups;
        for (Py_ssize_t c = 0; c < k; c++) {
            const double *d = dt + c * groups * 8;
            double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            for (Py_ssize_t g = 0; g < groups; g++) {
                const double *w = BIT[row[g]];
                const double *x = d + 8 * g;
                for (int b = 0; b < 8; b++) {
                    acc[b] += x[b] * w[b];
                }
            }
            out[r * k + c] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        }
    }
}

static PyObject *py_sign_flip_sums(PyObject *self, PyObject *args)
{
    Py_buffer bb, db, ob;
    Py_ssize_t size;
    PyObject *result = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*nw*", &bb, &db, &size, &ob)) {
        return NULL;
    }
    if (size < 1 || bb.len % size != 0 || bb.len == 0) {
        PyErr_SetString(PyExc_ValueError, "sign_flip_sums: bits must hold size rows of bytes");
        goto done;
    }
    const Py_ssize_t groups = bb.len / size;
    if (db.len % (Py_ssize_t)(sizeof(double) * 8 * groups) != 0 || db.len == 0) {
        PyErr_SetString(PyExc_ValueError, "sign_flip_sums: DT must hold k rows of 8 * groups float64");
        goto done;
    }
    const Py_ssize_t k = db.len / (Py_ssize_t)(sizeof(double) * 8 * groups);
    if (check_buffer(&ob, sizeof(double), size * k, "out")) {
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    flip_rows((const uint8_t *)bb.buf, size, groups, (const double *)db.buf, k, (double *)ob.buf);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&bb);
    PyBuffer_Release(&db);
    PyBuffer_Release(&ob);
    return result;
}

static PyMethodDef methods[] = {
    {"bootstrap_sums", py_bootstrap_sums, METH_VARARGS,
     "bootstrap_sums(draws, S, n, m, size, out): row sums of S over the resamples coded by the draws."},
#ifdef HAVE_MULHI
    {"bootstrap_sums_sfc64", py_bootstrap_sums_sfc64, METH_VARARGS,
     "bootstrap_sums_sfc64(states, S, n, m, size, out): as bootstrap_sums for one chunk per SFC64 state,\n"
     "drawing each chunk's words itself (Generator(SFC64).integers(0, n**m) stream); k == 1 only."},
    {"sfc64_draws", py_sfc64_draws, METH_VARARGS,
     "sfc64_draws(state, bound, out): Generator(SFC64).integers(0, bound, dtype=int64) draws (for tests)."},
#endif
    {"sign_flip_sums", py_sign_flip_sums, METH_VARARGS,
     "sign_flip_sums(bits, DT, size, out): sums of DT's columns over the items each bit row keeps."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ckernels", "Compiled loops of mixeval's resampling kernels.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__ckernels(void)
{
    for (int v = 0; v < 256; v++) {
        for (int b = 0; b < 8; b++) {
            BIT[v][b] = (double)((v >> b) & 1);
        }
    }
    return PyModule_Create(&module);
}
