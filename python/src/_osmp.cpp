// osmp._osmp: the thin layer between Python and the C library. Python
// (osmp/__init__.py) maps dtypes and ops, allocates the outputs and checks
// shapes; this file takes the buffers, checks that each holds what the call
// reads or writes (so a wrong size is an exception, never a stray write),
// releases the GIL around the call, and keeps a nonblocking call's buffers
// alive until it completes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <osmp.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace nb = nanobind;

static PyObject *error_type;     // osmp.Error(RuntimeError)
static PyObject *argument_error; // osmp.ArgumentError(Error, ValueError)
static PyObject *dtype_error;    // osmp.DtypeError(Error, TypeError)

[[noreturn]] static void raise_with(PyObject *type, const char *status, const std::string &msg)
{
    PyObject *exc = PyObject_CallFunction(type, "s", msg.c_str());
    if (!exc) throw nb::python_error();
    PyObject *st = PyUnicode_FromString(status);
    PyObject_SetAttrString(exc, "status", st);
    Py_XDECREF(st);
    PyErr_SetObject(type, exc);
    Py_DECREF(exc);
    throw nb::python_error();
}

[[noreturn]] static void raise_status(int rc, const char *what)
{
    std::string msg = std::string(what) + ": " + osmp_status_name(rc) + ": " + osmp_status_str(rc);
    PyObject *type = rc == OSMP_ERR_TYPE ? dtype_error : rc == OSMP_ERR_INVALID_ARG ? argument_error : error_type;
    raise_with(type, osmp_status_name(rc), msg);
}

[[noreturn]] static void bad_arg(const std::string &msg)
{
    raise_with(argument_error, "OSMP_ERR_INVALID_ARG", msg);
}

// Bytes of an element as the binding sees it: the library's size, or 2 for
// the half types while the library does not know them yet.
static size_t elem_size(int dtype)
{
    if (dtype == OSMP_FLOAT16 || dtype == OSMP_BFLOAT16) return 2;
    return osmp_dtype_size((osmp_dtype_t)dtype);
}

// A C-contiguous buffer held from the check until the call completes.
struct View {
    Py_buffer b{};
    bool held = false;
    View() = default;
    View(const View &) = delete;
    View &operator=(const View &) = delete;
    void get(PyObject *o, bool writable, const char *fn, const char *name)
    {
        int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(o, &b, flags) != 0) {
            std::string why = "?";
            PyObject *t, *v, *tb;
            PyErr_Fetch(&t, &v, &tb);
            if (v) {
                PyObject *s = PyObject_Str(v);
                if (s) {
                    const char *c = PyUnicode_AsUTF8(s);
                    if (c) why = c;
                    Py_DECREF(s);
                }
            }
            Py_XDECREF(t);
            Py_XDECREF(v);
            Py_XDECREF(tb);
            PyErr_Clear();
            bad_arg(std::string(fn) + ": " + name + " must be a C-contiguous" + (writable ? ", writable" : "") +
                    " buffer (" + why + ")");
        }
        held = true;
    }
    ~View()
    {
        if (held) PyBuffer_Release(&b);
    }
};

// What a call keeps until it completes: its buffers, its count and
// displacement arrays, and the object it returns.
struct State {
    View send, recv;
    std::vector<size_t> a, b, c, d;
    nb::object result;
};

struct Handle;

struct Request {
    Request() = default;
    Request(const Request &) = delete;
    Request &operator=(const Request &) = delete;
    osmp_request_t req = OSMP_REQUEST_NULL;
    std::unique_ptr<State> st;
    nb::object team; // keeps the team open while this is outstanding
    Handle *h = nullptr;
    const char *fn = "";
    bool active = false;
    nb::object result;

    void finish();
    nb::object wait();
    bool test();
    ~Request();
};

struct Handle {
    Handle() = default;
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    osmp_team_t t = nullptr;
    bool world = false;
    int rank_ = 0, size_ = 1;
    int outstanding = 0;
    // Requests dropped while active: the library still owns their buffers,
    // so they stay here until completed (a blocking call completes every
    // outstanding one; close waits for them).
    std::vector<std::pair<osmp_request_t, std::unique_ptr<State>>> orphans;

    void check_open(const char *fn) const
    {
        if (!t) raise_with(error_type, "OSMP_ERR_BAD_TEAM", std::string(fn) + ": the team is closed");
    }

    void sweep_orphans()
    {
        for (size_t i = 0; i < orphans.size();) {
            int done = 0;
            osmp_test(&orphans[i].first, &done);
            if (done) {
                orphans.erase(orphans.begin() + (long)i);
            } else {
                i++;
            }
        }
    }

    void close()
    {
        if (!t) return;
        if (outstanding > 0)
            bad_arg("Team.close: " + std::to_string(outstanding) +
                    " nonblocking call(s) still outstanding: wait for them first");
        int rc;
        {
            nb::gil_scoped_release g;
            for (auto &o : orphans) osmp_wait(&o.first);
            rc = world ? osmp_finalize() : osmp_team_destroy(t);
        }
        orphans.clear();
        t = nullptr;
        if (rc) raise_status(rc, world ? "osmp_finalize" : "osmp_team_destroy");
    }
};

void Request::finish()
{
    active = false;
    if (h) h->outstanding--;
    result = st ? st->result : nb::none();
    st.reset();
    team = nb::object();
    h = nullptr;
}

nb::object Request::wait()
{
    if (!active) return result;
    int rc;
    {
        nb::gil_scoped_release g;
        rc = osmp_wait(&req);
    }
    finish();
    if (rc) raise_status(rc, fn);
    return result;
}

bool Request::test()
{
    if (!active) return true;
    int done = 0;
    int rc = osmp_test(&req, &done);
    if (rc) {
        finish();
        raise_status(rc, fn);
    }
    if (done) finish();
    return done != 0;
}

Request::~Request()
{
    if (active && h) {
        h->outstanding--;
        h->orphans.emplace_back(req, std::move(st));
    }
}

static void check_root(const Handle &h, int root, const char *fn)
{
    if (root < 0 || root >= h.size_)
        bad_arg(std::string(fn) + ": root " + std::to_string(root) + " is not a rank of this team of " +
                std::to_string(h.size_));
}

static void check_len(const View &v, size_t elems, size_t esize, const char *fn, const char *name)
{
    if ((size_t)v.b.len < elems * esize)
        bad_arg(std::string(fn) + ": " + name + " holds " + std::to_string((size_t)v.b.len / esize) +
                " elements, the call needs " + std::to_string(elems));
}

static bool overlap(const View &a, const View &b)
{
    auto pa = (uintptr_t)a.b.buf, pb = (uintptr_t)b.b.buf;
    return a.b.len > 0 && b.b.len > 0 && pa < pb + (uintptr_t)b.b.len && pb < pa + (uintptr_t)a.b.len;
}

static const char *coll_fn(int coll, bool nb)
{
    static char names[OSMP_COLL_COUNT][2][40];
    if (coll < 0 || coll >= OSMP_COLL_COUNT) return "osmp";
    char *s = names[coll][nb];
    if (!s[0]) snprintf(s, 40, "osmp_%s%s", nb ? "i" : "", osmp_coll_name((osmp_coll_t)coll));
    return s;
}

static nb::object make_request(Handle &h, osmp_request_t req, std::unique_ptr<State> st, const char *fn,
                               nb::handle result)
{
    st->result = nb::borrow(result);
    auto *q = new Request();
    q->req = req;
    q->st = std::move(st);
    q->h = &h;
    q->fn = fn;
    q->active = true;
    h.outstanding++;
    nb::object qo = nb::cast(q, nb::rv_policy::take_ownership);
    q->team = nb::find(&h);
    return qo;
}

// The end of a posted call: its status raised, else its result (blocking) or
// its Request (nonblocking, holding the call's state until it completes).
static nb::object finish(Handle &h, int rc, const char *fn, bool nonblocking, osmp_request_t req,
                         std::unique_ptr<State> st, nb::handle result)
{
    if (rc) raise_status(rc, fn);
    if (!nonblocking) {
        if (!h.orphans.empty()) h.sweep_orphans();
        return nb::borrow(result);
    }
    return make_request(h, req, std::move(st), fn, result);
}

// Blocking (nonblocking == false: returns `result`) or nonblocking (returns a
// Request) form of every collective but the v-forms. send/recv: None for NULL;
// a recv whose memory is send's (same start and length) of an element-wise
// collective runs in place; any other overlap is refused.
static nb::object call(Handle &h, int coll, nb::handle send, nb::handle recv, size_t count, int dtype, int op,
                       int root, bool nonblocking, nb::handle result)
{
    const char *fn = coll_fn(coll, nonblocking);
    h.check_open(fn);
    size_t es = elem_size(dtype);
    if (es == 0) raise_with(dtype_error, "OSMP_ERR_TYPE", std::string(fn) + ": unknown datatype code");
    unsigned flags = osmp_coll_flags((osmp_coll_t)coll);
    if (flags & OSMP_COLL_ROOTED) check_root(h, root, fn);
    bool reduces = flags & OSMP_COLL_REDUCES;
    // A blocking call's state lives on the stack: no allocation on the small-call path.
    State local;
    std::unique_ptr<State> heap(nonblocking ? new State() : nullptr);
    State *st = nonblocking ? heap.get() : &local;
    size_t n = (size_t)h.size_;
    size_t send_need = count, recv_need = count;
    switch (coll) {
    case OSMP_COLL_GATHER: recv_need = n * count; break;
    case OSMP_COLL_ALLGATHER: recv_need = n * count; break;
    case OSMP_COLL_SCATTER: send_need = n * count; break;
    case OSMP_COLL_REDUCE_SCATTER_BLOCK: send_need = n * count; break;
    case OSMP_COLL_ALLTOALL: send_need = recv_need = n * count; break;
    default: break;
    }
    bool bcast = coll == OSMP_COLL_BCAST;
    if (!send.is_none()) {
        st->send.get(send.ptr(), bcast, fn, bcast ? "buf" : "x");
        check_len(st->send, send_need, es, fn, bcast ? "buf" : "x");
    }
    if (!recv.is_none()) {
        st->recv.get(recv.ptr(), true, fn, "out");
        check_len(st->recv, recv_need, es, fn, "out");
    }
    const void *sp = st->send.held ? st->send.b.buf : nullptr;
    void *rp = st->recv.held ? st->recv.b.buf : nullptr;
    if (st->send.held && st->recv.held && overlap(st->send, st->recv)) {
        bool elementwise = coll == OSMP_COLL_REDUCE || coll == OSMP_COLL_ALLREDUCE || coll == OSMP_COLL_SCAN ||
                           coll == OSMP_COLL_EXSCAN;
        if (elementwise && sp == rp && send_need == recv_need)
            sp = OSMP_IN_PLACE;
        else
            bad_arg(std::string(fn) + ": out overlaps x (in place is out=x, for reduce, allreduce, scan, exscan)");
    }
    osmp_team_t t = h.t;
    osmp_dtype_t d = (osmp_dtype_t)dtype;
    osmp_op_t o = (osmp_op_t)op;
    osmp_request_t req = OSMP_REQUEST_NULL;
    osmp_request_t *r = nonblocking ? &req : nullptr;
    int rc;
    {
        nb::gil_scoped_release g;
        switch (coll) {
        case OSMP_COLL_BARRIER: rc = r ? osmp_ibarrier(t, r) : osmp_barrier(t); break;
        case OSMP_COLL_BCAST:
            rc = r ? osmp_ibcast(t, (void *)sp, count, d, root, r) : osmp_bcast(t, (void *)sp, count, d, root);
            break;
        case OSMP_COLL_REDUCE:
            rc = r ? osmp_ireduce(t, sp, rp, count, d, o, root, r) : osmp_reduce(t, sp, rp, count, d, o, root);
            break;
        case OSMP_COLL_ALLREDUCE:
            rc = r ? osmp_iallreduce(t, sp, rp, count, d, o, r) : osmp_allreduce(t, sp, rp, count, d, o);
            break;
        case OSMP_COLL_GATHER:
            rc = r ? osmp_igather(t, sp, rp, count, d, root, r) : osmp_gather(t, sp, rp, count, d, root);
            break;
        case OSMP_COLL_ALLGATHER:
            rc = r ? osmp_iallgather(t, sp, rp, count, d, r) : osmp_allgather(t, sp, rp, count, d);
            break;
        case OSMP_COLL_SCATTER:
            rc = r ? osmp_iscatter(t, sp, rp, count, d, root, r) : osmp_scatter(t, sp, rp, count, d, root);
            break;
        case OSMP_COLL_REDUCE_SCATTER_BLOCK:
            rc = r ? osmp_ireduce_scatter_block(t, sp, rp, count, d, o, r)
                   : osmp_reduce_scatter_block(t, sp, rp, count, d, o);
            break;
        case OSMP_COLL_ALLTOALL:
            rc = r ? osmp_ialltoall(t, sp, rp, count, d, r) : osmp_alltoall(t, sp, rp, count, d);
            break;
        case OSMP_COLL_SCAN:
            rc = r ? osmp_iscan(t, sp, rp, count, d, o, r) : osmp_scan(t, sp, rp, count, d, o);
            break;
        case OSMP_COLL_EXSCAN:
            rc = r ? osmp_iexscan(t, sp, rp, count, d, o, r) : osmp_exscan(t, sp, rp, count, d, o);
            break;
        default: rc = OSMP_ERR_INVALID_ARG;
        }
    }
    return finish(h, rc, fn, nonblocking, req, std::move(heap), result);
}

static size_t extent(const std::vector<size_t> &counts, const std::vector<size_t> &displs)
{
    size_t e = 0;
    for (size_t i = 0; i < counts.size(); i++)
        if (counts[i] && displs[i] + counts[i] > e) e = displs[i] + counts[i];
    return e;
}

// The v-forms. counts/displs as the C call takes them (one per rank, in
// elements); `a`/`b` are the first pair (recvcounts/displs of gatherv and
// allgatherv, sendcounts/displs of scatterv and alltoallv, recvcounts of
// reduce_scatter), `c`/`d` alltoallv's recvcounts/rdispls. `count` is the
// single count (gatherv/allgatherv sendcount, scatterv recvcount).
static nb::object callv(Handle &h, int coll, nb::handle send, nb::handle recv, size_t count, std::vector<size_t> a,
                        std::vector<size_t> b, std::vector<size_t> c, std::vector<size_t> d_, int dtype, int op,
                        int root, bool nonblocking, nb::handle result)
{
    const char *fn = coll_fn(coll, nonblocking);
    h.check_open(fn);
    size_t es = elem_size(dtype);
    if (es == 0) raise_with(dtype_error, "OSMP_ERR_TYPE", std::string(fn) + ": unknown datatype code");
    unsigned flags = osmp_coll_flags((osmp_coll_t)coll);
    if (flags & OSMP_COLL_ROOTED) check_root(h, root, fn);
    size_t n = (size_t)h.size_;
    bool at_root = h.rank_ == root;
    bool need_a = coll == OSMP_COLL_ALLGATHERV || coll == OSMP_COLL_ALLTOALLV || coll == OSMP_COLL_REDUCE_SCATTER ||
                  at_root;
    auto sized = [&](const std::vector<size_t> &v, const char *name) {
        if (v.size() != n)
            bad_arg(std::string(fn) + ": " + name + " has " + std::to_string(v.size()) + " entries, the team " +
                    std::to_string(n) + " ranks");
    };
    if (need_a) {
        sized(a, "counts");
        if (coll != OSMP_COLL_REDUCE_SCATTER) sized(b, "displs");
    }
    if (coll == OSMP_COLL_ALLTOALLV) {
        sized(c, "recvcounts");
        sized(d_, "rdispls");
    }
    auto st = std::make_unique<State>();
    st->a = std::move(a);
    st->b = std::move(b);
    st->c = std::move(c);
    st->d = std::move(d_);
    size_t send_need = 0, recv_need = 0;
    switch (coll) {
    case OSMP_COLL_GATHERV:
    case OSMP_COLL_ALLGATHERV:
        send_need = count;
        recv_need = need_a ? extent(st->a, st->b) : 0;
        break;
    case OSMP_COLL_SCATTERV:
        send_need = at_root ? extent(st->a, st->b) : 0;
        recv_need = count;
        break;
    case OSMP_COLL_ALLTOALLV:
        send_need = extent(st->a, st->b);
        recv_need = extent(st->c, st->d);
        break;
    case OSMP_COLL_REDUCE_SCATTER: {
        size_t sum = 0;
        for (size_t x : st->a) sum += x;
        send_need = sum;
        recv_need = st->a[(size_t)h.rank_];
        break;
    }
    default: bad_arg(std::string(fn) + ": not a v-form");
    }
    if (!send.is_none()) {
        st->send.get(send.ptr(), false, fn, "x");
        check_len(st->send, send_need, es, fn, "x");
    }
    if (!recv.is_none()) {
        st->recv.get(recv.ptr(), true, fn, "out");
        check_len(st->recv, recv_need, es, fn, "out");
    }
    if (st->send.held && st->recv.held && overlap(st->send, st->recv))
        bad_arg(std::string(fn) + ": out overlaps x");
    const void *sp = st->send.held ? st->send.b.buf : nullptr;
    void *rp = st->recv.held ? st->recv.b.buf : nullptr;
    const size_t *pa = st->a.empty() ? nullptr : st->a.data(), *pb = st->b.empty() ? nullptr : st->b.data();
    const size_t *pc = st->c.empty() ? nullptr : st->c.data(), *pd = st->d.empty() ? nullptr : st->d.data();
    osmp_team_t t = h.t;
    osmp_dtype_t d = (osmp_dtype_t)dtype;
    osmp_op_t o = (osmp_op_t)op;
    osmp_request_t req = OSMP_REQUEST_NULL;
    osmp_request_t *r = nonblocking ? &req : nullptr;
    int rc;
    {
        nb::gil_scoped_release g;
        switch (coll) {
        case OSMP_COLL_GATHERV:
            rc = r ? osmp_igatherv(t, sp, count, rp, pa, pb, d, root, r) : osmp_gatherv(t, sp, count, rp, pa, pb, d, root);
            break;
        case OSMP_COLL_SCATTERV:
            rc = r ? osmp_iscatterv(t, sp, pa, pb, rp, count, d, root, r)
                   : osmp_scatterv(t, sp, pa, pb, rp, count, d, root);
            break;
        case OSMP_COLL_ALLGATHERV:
            rc = r ? osmp_iallgatherv(t, sp, count, rp, pa, pb, d, r) : osmp_allgatherv(t, sp, count, rp, pa, pb, d);
            break;
        case OSMP_COLL_ALLTOALLV:
            rc = r ? osmp_ialltoallv(t, sp, pa, pb, rp, pc, pd, d, r) : osmp_alltoallv(t, sp, pa, pb, rp, pc, pd, d);
            break;
        case OSMP_COLL_REDUCE_SCATTER:
            rc = r ? osmp_ireduce_scatter(t, sp, rp, pa, d, o, r) : osmp_reduce_scatter(t, sp, rp, pa, d, o);
            break;
        default: rc = OSMP_ERR_INVALID_ARG;
        }
    }
    return finish(h, rc, fn, nonblocking, req, std::move(st), result);
}

// Team.allreduce, the call whose per-call cost matters (many small ones in a
// training step): straight from the arguments to osmp_allreduce for a NumPy
// array of a buffer-exporting dtype, an op name or code, and out None, x, or
// an array of x's format and shape. Everything else (bfloat16, other
// objects, every error message) goes to the Python body, osmp.Team._allreduce_py.
static PyObject *ndarray_type;   // numpy.ndarray
static PyObject *empty_like;     // numpy.empty_like
static PyObject *allreduce_slow; // osmp.Team._allreduce_py
static PyObject *op_names[OSMP_OP_COUNT];

static int format_dtype(const Py_buffer &b)
{
    const char *f = b.format;
    if (!f) return -1;
    if (*f == '<' || *f == '=' || *f == '@') f++;
    if (!f[0] || f[1]) return -1;
    bool u = *f >= 'A' && *f <= 'Z';
    switch (*f) {
    case 'b': case 'B': return u ? OSMP_UINT8 : OSMP_INT8;
    case 'h': case 'H': case 'i': case 'I': case 'l': case 'L': case 'q': case 'Q':
        switch (b.itemsize) {
        case 2: return u ? OSMP_UINT16 : OSMP_INT16;
        case 4: return u ? OSMP_UINT32 : OSMP_INT32;
        case 8: return u ? OSMP_UINT64 : OSMP_INT64;
        default: return -1;
        }
    case 'f': return b.itemsize == 4 ? OSMP_FLOAT : -1;
    case 'd': return b.itemsize == 8 ? OSMP_DOUBLE : -1;
    case 'e': return b.itemsize == 2 ? OSMP_FLOAT16 : -1;
    default: return -1;
    }
}

static int op_code(PyObject *op)
{
    if (PyUnicode_Check(op)) {
        for (int i = 0; i < OSMP_OP_COUNT; i++)
            if (op == op_names[i]) return i; // interned literals: the common case
        for (int i = 0; i < OSMP_OP_COUNT; i++)
            if (PyUnicode_Compare(op, op_names[i]) == 0) return i;
        PyErr_Clear();
        return -1;
    }
    if (PyLong_Check(op)) {
        long v = PyLong_AsLong(op);
        if (v >= 0 && v < OSMP_OP_COUNT) return (int)v;
        PyErr_Clear();
    }
    return -1;
}

static nb::object allreduce_fast(nb::handle self, nb::handle x, nb::handle op, nb::handle out)
{
    Handle &h = nb::cast<Handle &>(self);
    int o = op_code(op.ptr());
    bool in_place = out.ptr() == x.ptr();
    if (h.t && o >= 0 && (PyObject *)Py_TYPE(x.ptr()) == ndarray_type) {
        State st;
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (in_place ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(x.ptr(), &st.send.b, flags) == 0) {
            st.send.held = true;
            const Py_buffer &a = st.send.b;
            int d = format_dtype(a);
            if (d >= 0) {
                nb::object res;
                const void *sp = a.buf;
                void *rp = nullptr;
                if (in_place) {
                    res = nb::borrow(x);
                    sp = OSMP_IN_PLACE;
                    rp = a.buf;
                } else {
                    if (out.is_none())
                        res = nb::steal(PyObject_CallOneArg(empty_like, x.ptr()));
                    else if ((PyObject *)Py_TYPE(out.ptr()) == ndarray_type)
                        res = nb::borrow(out);
                    if (res.is_valid() && PyObject_GetBuffer(res.ptr(), &st.recv.b, flags | PyBUF_WRITABLE) == 0) {
                        st.recv.held = true;
                        const Py_buffer &b = st.recv.b;
                        bool same = a.ndim == b.ndim && a.itemsize == b.itemsize && a.len == b.len &&
                                    strcmp(a.format, b.format) == 0 && !overlap(st.send, st.recv);
                        for (int i = 0; same && i < a.ndim; i++) same = a.shape[i] == b.shape[i];
                        if (same) rp = b.buf;
                    }
                }
                if (rp) {
                    int rc;
                    size_t count = (size_t)(a.len / a.itemsize);
                    {
                        nb::gil_scoped_release g;
                        rc = osmp_allreduce(h.t, sp, rp, count, (osmp_dtype_t)d, (osmp_op_t)o);
                    }
                    if (rc) raise_status(rc, "osmp_allreduce");
                    if (!h.orphans.empty()) h.sweep_orphans();
                    return res;
                }
            }
        }
        PyErr_Clear();
    }
    PyObject *r = PyObject_CallFunctionObjArgs(allreduce_slow, self.ptr(), x.ptr(), op.ptr(), out.ptr(), NULL);
    if (!r) throw nb::python_error();
    return nb::steal(r);
}

// The out-of-band allgather of Team.from_mpi: the library calls it (without
// the GIL) during team creation; ctx is a Python callable (send, recv).
struct Oob {
    PyObject *fn;
    Py_ssize_t size;
};

static int oob_allgather(void *ctx, const void *send, void *recv, size_t len)
{
    nb::gil_scoped_acquire g;
    auto *o = (Oob *)ctx;
    PyObject *s = PyMemoryView_FromMemory((char *)send, (Py_ssize_t)len, PyBUF_READ);
    PyObject *r = PyMemoryView_FromMemory((char *)recv, (Py_ssize_t)len * o->size, PyBUF_WRITE);
    PyObject *res = (s && r) ? PyObject_CallFunctionObjArgs(o->fn, s, r, NULL) : nullptr;
    Py_XDECREF(s);
    Py_XDECREF(r);
    if (!res) {
        PyErr_Print(); // the library turns the failure into OSMP_ERR_BOOTSTRAP
        return -1;
    }
    Py_DECREF(res);
    return 0;
}

NB_MODULE(_osmp, m)
{
    PyObject *dict = PyDict_New();
    PyDict_SetItemString(dict, "status", PyUnicode_FromString("OSMP_ERR_UNKNOWN"));
    PyDict_SetItemString(dict, "__doc__",
                         PyUnicode_FromString("An OSMP call failed; .status is the status name (e.g. OSMP_ERR_TYPE)."));
    error_type = PyErr_NewException("osmp.Error", PyExc_RuntimeError, dict);
    Py_DECREF(dict);
    dict = PyDict_New();
    PyDict_SetItemString(dict, "status", PyUnicode_FromString("OSMP_ERR_INVALID_ARG"));
    PyDict_SetItemString(dict, "__doc__", PyUnicode_FromString("Bad argument, refused before any collective started."));
    PyObject *bases = PyTuple_Pack(2, error_type, PyExc_ValueError);
    argument_error = PyErr_NewException("osmp.ArgumentError", bases, dict);
    Py_DECREF(bases);
    Py_DECREF(dict);
    dict = PyDict_New();
    PyDict_SetItemString(dict, "status", PyUnicode_FromString("OSMP_ERR_TYPE"));
    PyDict_SetItemString(dict, "__doc__",
                         PyUnicode_FromString("Datatype not supported, or operation not defined on it."));
    bases = PyTuple_Pack(2, error_type, PyExc_TypeError);
    dtype_error = PyErr_NewException("osmp.DtypeError", bases, dict);
    Py_DECREF(bases);
    Py_DECREF(dict);
    m.attr("Error") = nb::borrow(error_type);
    m.attr("ArgumentError") = nb::borrow(argument_error);
    m.attr("DtypeError") = nb::borrow(dtype_error);

    // The fast path keeps numpy.empty_like and a function of osmp (whose
    // globals hold the world team) for the life of the process: not leaks.
    nb::set_leak_warnings(false);
    // Set by osmp/__init__.py: what allreduce's fast path needs from Python.
    m.def("_setup_fast", [](nb::object nd, nb::object el, nb::object slow) {
        ndarray_type = nd.release().ptr();
        empty_like = el.release().ptr();
        allreduce_slow = slow.release().ptr();
    });
    static const char *opn[OSMP_OP_COUNT] = {"sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor"};
    for (int i = 0; i < OSMP_OP_COUNT; i++) op_names[i] = PyUnicode_InternFromString(opn[i]);
    m.def("dtype_size", [](int d) { return osmp_dtype_size((osmp_dtype_t)d); });
    m.def("status_name", [](int rc) { return std::string(osmp_status_name(rc)); });
    m.def("version", []() {
        int a, b, c;
        osmp_version(&a, &b, &c);
        return std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(c);
    });
    m.def("shm_cleanup", []() {
        int removed = 0;
        int rc = osmp_shm_cleanup(&removed);
        if (rc) raise_status(rc, "osmp_shm_cleanup");
        return removed;
    });

    nb::class_<Request>(m, "Request")
        .def("wait", &Request::wait, "Complete the call; returns its result (out).")
        .def("test", &Request::test, "True once complete (then .wait() returns at once).")
        .def_prop_ro("done", [](const Request &q) { return !q.active; });

    nb::class_<Handle>(m, "Handle")
        .def(nb::init<>())
        .def("_init_world",
             [](Handle &h) {
                 if (h.t) bad_arg("the team is already open");
                 osmp_team_t t;
                 int rc;
                 {
                     nb::gil_scoped_release g;
                     rc = osmp_init(&t);
                 }
                 if (rc) raise_status(rc, "osmp_init");
                 h.t = t;
                 h.world = true;
                 h.rank_ = osmp_team_rank(t);
                 h.size_ = osmp_team_size(t);
             })
        .def("_init_oob",
             [](Handle &h, int rank, int size, nb::object fn) {
                 if (h.t) bad_arg("the team is already open");
                 if (size < 1 || rank < 0 || rank >= size) bad_arg("rank/size out of range");
                 struct osmp_team_params p;
                 memset(&p, 0, sizeof p);
                 p.rank = rank;
                 p.size = size;
                 p.oob_allgather = oob_allgather;
                 Oob oob{fn.ptr(), size};
                 p.oob_ctx = &oob;
                 osmp_team_t t;
                 int rc;
                 {
                     nb::gil_scoped_release g;
                     rc = osmp_team_create(&p, &t);
                 }
                 if (rc) raise_status(rc, "osmp_team_create");
                 h.t = t;
                 h.rank_ = osmp_team_rank(t);
                 h.size_ = osmp_team_size(t);
             })
        .def_ro("rank", &Handle::rank_)
        .def_ro("size", &Handle::size_)
        .def_prop_ro("closed", [](const Handle &h) { return h.t == nullptr; })
        .def("close", &Handle::close)
        .def("allreduce", &allreduce_fast, nb::arg("x").none(), nb::arg("op").none() = "sum",
             nb::arg("out").none() = nb::none(),
             "Element-wise reduction of every rank's x, at every rank; returns the result (out when given; "
             "out=x: in place). op: a name (sum, prod, ...) or osmp.SUM, ...")
        .def("_call", &call, nb::arg("coll"), nb::arg("send").none(), nb::arg("recv").none(), nb::arg("count"),
             nb::arg("dtype"), nb::arg("op"), nb::arg("root"), nb::arg("nonblocking"), nb::arg("result").none())
        .def("_callv", &callv, nb::arg("coll"), nb::arg("send").none(), nb::arg("recv").none(), nb::arg("count"),
             nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("d"), nb::arg("dtype"), nb::arg("op"), nb::arg("root"),
             nb::arg("nonblocking"), nb::arg("result").none())
        .def("_choice",
             [](Handle &h, int coll, size_t bytes) {
                 h.check_open("osmp_team_choice");
                 struct osmp_choice c;
                 int rc = osmp_team_choice(h.t, (osmp_coll_t)coll, bytes, &c);
                 if (rc) raise_status(rc, "osmp_team_choice");
                 return nb::make_tuple(std::string(c.name), std::string(c.from));
             })
        // For bench/python-bench.py: n back-to-back osmp_allreduce calls of one double from
        // C, the reference the Python call's overhead is measured against.
        .def("_c_allreduce_loop", [](Handle &h, int n) {
            h.check_open("osmp_allreduce");
            double x = 1.0, y = 0.0;
            struct timespec a, b;
            int rc = OSMP_OK;
            {
                nb::gil_scoped_release g;
                clock_gettime(CLOCK_MONOTONIC, &a);
                for (int i = 0; i < n && rc == OSMP_OK; i++) rc = osmp_allreduce(h.t, &x, &y, 1, OSMP_DOUBLE, OSMP_SUM);
                clock_gettime(CLOCK_MONOTONIC, &b);
            }
            if (rc) raise_status(rc, "osmp_allreduce");
            return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
        });
}
