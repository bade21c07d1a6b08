// qgemm.cc - the int8 GEMM's front (qgemm.h): which path this CPU runs, the packed blob's header and
// per-row constants (the arithmetic is in qgemm_impl.h), scratch sizing, and the runs' blocking. A run
// puts X in the kernels' layout (qim2col.h: per block of columns for qgemm_wx/xw, once or per band of
// output rows for a conv) and takes it a block of columns at a time: the block's units stay in L2 while
// every weight tile runs over them, and the epilogue writes each output tile straight from the kernel.
#include "math/qgemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "math/cpu_isa.h"
#include "math/exact_rounding.h"
#include "math/qgemm_impl.h"
#include "math/qim2col.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define ACCEL_QGEMM_X86 1
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#if !defined(HWCAP_ASIMDDP)  // a C library older than the dot product
#define HWCAP_ASIMDDP (1 << 20)
#endif
#endif

namespace accel_emu {

namespace {

#if defined(ACCEL_QGEMM_X86)
// Linux hands out AMX tile state only to a process that asks for it (arch_prctl ARCH_REQ_XCOMP_PERM for
// XFEATURE_XTILEDATA); without that the first tile instruction faults. Asked once, by the first caller.
bool amx_permitted() {
#if defined(__linux__) && defined(SYS_arch_prctl)
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
}

// CPUID leaf 7: EDX bit 24 AMX-TILE, bit 25 AMX-INT8 (read directly: older compilers' __builtin_cpu_supports
// knows no AMX feature names).
bool cpu_has_amx_int8() {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return (d >> 24 & 1) && (d >> 25 & 1);
}

QIsa detect() {
    __builtin_cpu_init();
    const bool vnni = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    // The AMX path also runs AVX-512 code (panels, epilogue), so it needs the VNNI path's features too.
    if (vnni && cpu_has_amx_int8() && amx_permitted()) return QIsa::Amx;
    if (vnni) return QIsa::Avx512Vnni;
    if (__builtin_cpu_supports("avx2")) return QIsa::Avx2;
    return QIsa::Portable;
}
#endif

QIsa hardware_isa() {
#if defined(ACCEL_QGEMM_X86)
    static const QIsa best = detect();
    return best;
#elif defined(__aarch64__) && defined(__linux__)
    // HWCAP_ASIMDDP: SDOT/UDOT, Armv8.2's optional dot product (Armv8.4 requires it).
    static const QIsa best = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) ? QIsa::NeonDot : QIsa::Neon;
    return best;
#elif defined(__aarch64__)
    return QIsa::Neon;
#else
    return QIsa::Portable;
#endif
}

// Unit bytes per column block: the block's units stay in L2 (1 MiB or more on every AVX-512 part) while
// every weight tile runs over them, next to the weights' tile and the output rows being written.
constexpr int64_t kBlockBytes = 256 * 1024;

const qk::Header* header(const void* packed) { return static_cast<const qk::Header*>(packed); }

int64_t column_block(const qk::Header* h, int64_t N) {
    const int64_t nr = qk::traits(h->isa).nr;
    const int64_t fit = std::max<int64_t>(1, kBlockBytes / std::max<int64_t>(1, h->Kq * 4 * nr)) * nr;
    return std::min(fit, qk::round_up(std::max<int64_t>(N, 1), nr));
}

int64_t elem_bytes(const qk::Header* h) { return qout_bytes(h->out); }

bool avx512_x(const qk::Header* h) { return qisa_avx512(h->isa); }

// Scratch of a run over columns blocks of NC: the offsets, the block's column sums and the isa's own.
struct RunScratch {
    int64_t* off;
    int32_t* colsum;
    void* block;
};
int64_t run_scratch_bytes(const qk::Header* h, int64_t NC) {
    return qk::round_up(h->Kq * 8, qk::kAlign) + qk::round_up(NC * 4, qk::kAlign) + qk::block_scratch_bytes(h, NC);
}
RunScratch run_scratch(const qk::Header* h, int64_t NC, char* mem) {
    RunScratch r;
    r.off = reinterpret_cast<int64_t*>(mem);
    r.colsum = reinterpret_cast<int32_t*>(mem + qk::round_up(h->Kq * 8, qk::kAlign));
    r.block = mem + qk::round_up(h->Kq * 8, qk::kAlign) + qk::round_up(NC * 4, qk::kAlign);
    return r;
}

// Columns [p0, p0 + nc) of view b through the weights into y (at the block's first column); the block's
// column sums computed here, or given (`colsum`, at the block's first column).
void run_block(const qk::Header* h, const qk::View& b, int64_t p0, int64_t nc, const RunScratch& rs, char* y,
               int64_t ldy, bool xw, const int32_t* colsum = nullptr) {
    if (h->colsum && !colsum) {
        if (avx512_x(h)) qk::view_colsums_avx512(h, b, p0, nc, rs.colsum);
        else qk::view_colsums(h, b, p0, nc, rs.colsum);
    }
    const int32_t* cs = colsum ? colsum : rs.colsum;
    const qk::Out out{y, ldy, xw};
    switch (h->isa) {
        case QIsa::Avx2: qk::block_avx2(h, b, p0, nc, cs, out); return;
        case QIsa::Avx512Vnni: qk::block_vnni(h, b, p0, nc, cs, out, rs.block); return;
        case QIsa::Amx: qk::block_amx(h, b, p0, nc, cs, out, rs.block); return;
        case QIsa::Neon:
        case QIsa::NeonDot: qk::block_neon(h, b, p0, nc, cs, out); return;
        case QIsa::Portable: break;
    }
    qk::block_portable(h, b, p0, nc, cs, out);
}

// Columns of qgemm_wx's X (K rows) or qgemm_xw's (N rows) a block at a time: each block's units into a
// buffer of rows ld units long, then the kernels over it.
int64_t units_ld(int64_t NC) { return qk::round_up(NC, 64); }
int64_t units_bytes(const qk::Header* h, int64_t NC) {
    return qk::round_up(h->Kq * units_ld(NC) * 4 + 128, qk::kAlign);
}

void run_gemm(const qk::Header* h, bool xw, int64_t N, const uint8_t* x, int64_t ldx, void* y, int64_t ldy,
              void* scratch) {
    if (N <= 0 || h->M <= 0) return;
    const int64_t NC = column_block(h, N), ld = units_ld(NC);
    char* mem = qk::align_ptr<char>(scratch);
    uint8_t* units = reinterpret_cast<uint8_t*>(mem);
    const RunScratch rs = run_scratch(h, NC, mem + units_bytes(h, NC));
    for (int64_t g = 0; g < h->Kq; ++g) rs.off[g] = g * ld * 4;
    const qk::View b{units, rs.off};
    for (int64_t n0 = 0; n0 < N; n0 += NC) {
        const int64_t nc = std::min(NC, N - n0);
        if (xw && avx512_x(h)) qk::cols_to_units_avx512(h, x, ldx, n0, nc, ld, units);
        else if (xw) qk::cols_to_units(h, x, ldx, n0, nc, ld, units);
        else if (avx512_x(h)) qk::rows_to_units_avx512(h, x, ldx, n0, nc, ld, units);
        else qk::rows_to_units(h, x, ldx, n0, nc, ld, units);
        run_block(h, b, 0, nc, rs, static_cast<char*>(y) + (xw ? n0 * ldy : n0) * elem_bytes(h), ldy, xw);
    }
}

// qgemm_xw_prepare's layout: [Kq][ld] units, then N column sums.
int64_t shared_ld(int64_t N) { return qk::round_up(std::max<int64_t>(N, 1), 64); }
int64_t shared_units_bytes(const qk::Header* h, int64_t N) {
    return qk::round_up(h->Kq * shared_ld(N) * 4 + 128, qk::kAlign);
}

bool pointwise(const ConvGeom& q) {
    return q.kh == 1 && q.kw == 1 && q.sh == 1 && q.sw == 1 && q.pt == 0 && q.pl == 0 && q.OH == q.H && q.OW == q.W;
}

// The packed sizes of spec for isa.
struct Dims { int64_t taps, C, C4, Kq, Kg, Mp; };
Dims dims(QIsa isa, const QGemmSpec& spec) {
    const qk::IsaTraits t = qk::traits(isa);
    Dims d;
    d.taps = std::max<int64_t>(1, spec.taps);
    d.C = spec.K / d.taps;
    d.C4 = qk::ceil_div(d.C, 4);
    d.Kq = d.taps * d.C4;
    d.Kg = qk::round_up(d.Kq, t.kg_unit);
    d.Mp = qk::round_up(std::max<int64_t>(spec.M, 0), t.mr);
    return d;
}

}  // namespace

QIsa qisa_select() { return isa_capped(hardware_isa()); }

const char* qisa_name(QIsa isa) {
    switch (isa) {
        case QIsa::Portable: return "portable";
        case QIsa::Avx2: return "avx2";
        case QIsa::Avx512Vnni: return "avx512vnni";
        case QIsa::Amx: return "amx";
        case QIsa::Neon: return "neon";
        case QIsa::NeonDot: return "neondot";
    }
    return "portable";
}

namespace qk {

int64_t block_scratch_bytes(const Header* h, int64_t nc) {
    switch (h->isa) {
        case QIsa::Avx512Vnni: return h->Kg * 8 * 4;  // the tail columns' units
        case QIsa::Amx: return amx_panel_bytes(h, nc);
        default: return 0;
    }
}

IsaTraits traits(QIsa isa) {
    switch (isa) {
        case QIsa::Avx2: return {4, 16, 1, false, 0, 0};
        // vpdpbusd multiplies unsigned bytes (X) by signed ones (W): uint8 weights move down by 128.
        case QIsa::Avx512Vnni: return {8, 48, 1, false, 0, 128};
        // TDPBUSD's first operand (A, the weights) is the unsigned one: int8 weights move up by 128.
        case QIsa::Amx: return {16, 32, 16, true, -128, 0};
        // SDOT (and the plain NEON kernel, which shares its packing) multiplies signed bytes by signed bytes:
        // B is int8, uint8 weights move down by 128.
        case QIsa::Neon:
        case QIsa::NeonDot: return {8, 12, 1, true, 0, 128};
        case QIsa::Portable: break;
    }
    return {4, 16, 1, false, 0, 0};
}

int32_t AView::at(int64_t m, int64_t g, int b) const {
    if (C4 == 0) return 0;
    const int64_t t = g / C4, c = 4 * (g % C4) + b;
    if (m >= M || t >= taps || c >= C) return 0;  // padding rows, depth and channels
    const int64_t i = m * K + c * taps + t;
    const int32_t v = w_signed ? static_cast<const int8_t*>(w)[i] : static_cast<const uint8_t*>(w)[i];
    return v - alpha;
}

int64_t weight_bytes(QIsa isa, int64_t Mp, int64_t Kg) {
    switch (isa) {
        case QIsa::Portable: return Mp * Kg * 4 * 2;  // int16
        case QIsa::Avx2: return Mp * Kg * 4 * 2;      // int16 pairs
        case QIsa::Avx512Vnni:
        case QIsa::Amx:
        case QIsa::Neon:
        case QIsa::NeonDot: return Mp * Kg * 4;
    }
    return 0;
}

}  // namespace qk

size_t qgemm_packed_bytes(QIsa isa, const QGemmSpec& spec) {
    const Dims d = dims(isa, spec);
    return static_cast<size_t>(qk::head_bytes(d.Mp) + qk::weight_bytes(isa, d.Mp, d.Kg));
}

namespace qk {

AView fill_header(QIsa isa, const IsaTraits& t, const QGemmSpec& spec, const void* w, int64_t taps, int64_t Mp,
                  int64_t Kg, void* out) {
    char* base = static_cast<char*>(out);
    Header* h = reinterpret_cast<Header*>(base);
    std::memset(base, 0, static_cast<size_t>(head_bytes(Mp)));
    h->magic = kMagic;
    h->isa = isa;
    h->out = spec.out;
    h->w_signed = spec.w_signed, h->x_signed = spec.x_signed, h->y_signed = spec.y_signed;
    h->M = std::max<int64_t>(spec.M, 0), h->K = spec.K, h->taps = taps, h->C = spec.K / taps;
    const int64_t C4 = ceil_div(h->C, 4);
    h->Mp = Mp, h->Kq = taps * C4, h->Kg = Kg;
    h->w_off = head_bytes(Mp);

    // B = X ^ flip; X = B + beta.
    const bool flip = spec.x_signed != t.b_signed;
    h->x_flip = flip ? 0x80 : 0;
    const int32_t beta = !flip ? 0 : spec.x_signed ? -128 : 128;
    const int32_t xz = spec.x_signed ? std::clamp(spec.x_zero, -128, 127) : std::clamp(spec.x_zero, 0, 255);
    h->x_pad = static_cast<uint8_t>(static_cast<uint8_t>(xz) ^ h->x_flip);
    const int32_t qmin = spec.y_signed ? -128 : 0, qmax = spec.y_signed ? 127 : 255;
    h->y_zero = std::clamp(spec.y_zero, qmin, qmax);
    h->lo = static_cast<float>(qmin - h->y_zero);
    h->hi = static_cast<float>(qmax - h->y_zero);
    h->ilo = std::clamp(spec.y_min, qmin, qmax) - h->y_zero;
    h->ihi = std::clamp(spec.y_max, qmin, qmax) - h->y_zero;

    const AView a{w, spec.w_signed, spec.w_signed ? t.alpha_w_s8 : t.alpha_w_u8, h->M, spec.K, taps, h->C, C4};
    int32_t* rc = const_cast<int32_t*>(rowc(h));
    int32_t* cc = const_cast<int32_t*>(colc(h));
    float* sc = const_cast<float*>(scale(h));
    float* fb = const_cast<float*>(fbias(h));
    int32_t* fx[5];
    for (int i = 0; i < 5; ++i) fx[i] = const_cast<int32_t*>(fixed_arr(h, i));
    const uint32_t v = static_cast<uint32_t>(beta - xz);
    for (int64_t m = 0; m < h->M; ++m) {
        uint32_t rowsum = 0;
        for (int64_t g = 0; g < h->Kq; ++g)
            for (int b = 0; b < 4; ++b) rowsum += static_cast<uint32_t>(a.at(m, g, b));
        const uint32_t u = static_cast<uint32_t>(a.alpha) - static_cast<uint32_t>(spec.w_zero ? spec.w_zero[m] : 0);
        const uint32_t bias = spec.bias ? static_cast<uint32_t>(spec.bias[m]) : 0u;
        rc[m] = static_cast<int32_t>(bias + v * rowsum + static_cast<uint32_t>(spec.K) * u * v);
        cc[m] = static_cast<int32_t>(u);
        if (u != 0) h->colsum = 1;
        sc[m] = spec.scale ? spec.scale[m] : 1.f;
        fb[m] = spec.fbias ? spec.fbias[m] : 0.f;
        const FixedRequant f = spec.fixed ? spec.fixed[m] : FixedRequant{};
        fx[0][m] = f.pre, fx[1][m] = f.mult, fx[2][m] = f.post, fx[3][m] = f.nmult, fx[4][m] = f.npost;
    }
    return a;
}

}  // namespace qk

void qgemm_pack(QIsa isa, const QGemmSpec& spec, const void* w, void* out) {
    const Dims d = dims(isa, spec);
    const qk::AView a = qk::fill_header(isa, qk::traits(isa), spec, w, d.taps, d.Mp, d.Kg, out);
    void* wout = static_cast<char*>(out) + static_cast<qk::Header*>(out)->w_off;
    switch (isa) {
        case QIsa::Portable: qk::pack_weights_portable(a, d.Mp, d.Kg, wout); break;
        case QIsa::Avx2: qk::pack_weights_avx2(a, d.Mp, d.Kg, wout); break;
        case QIsa::Avx512Vnni: qk::pack_weights_vnni(a, d.Mp, d.Kg, wout); break;
        case QIsa::Amx: qk::pack_weights_amx(a, d.Mp, d.Kg, wout); break;
        case QIsa::Neon:
        case QIsa::NeonDot: qk::pack_weights_neon(a, d.Mp, d.Kg, wout); break;
    }
}

size_t qgemm_scratch_bytes(const void* packed, int64_t N) {
    const qk::Header* h = header(packed);
    const int64_t NC = column_block(h, N);
    return static_cast<size_t>(units_bytes(h, NC) + run_scratch_bytes(h, NC) + qk::kAlign);
}

void qgemm_wx(const void* packed, int64_t N, const void* x, int64_t ldx, void* y, int64_t ldy, void* scratch) {
    run_gemm(header(packed), false, N, static_cast<const uint8_t*>(x), ldx, y, ldy, scratch);
}

void qgemm_xw(const void* packed, int64_t N, const void* x, int64_t ldx, void* y, int64_t ldy, void* scratch) {
    run_gemm(header(packed), true, N, static_cast<const uint8_t*>(x), ldx, y, ldy, scratch);
}

size_t qgemm_xw_shared_bytes(int64_t K, int64_t N) {
    qk::Header h{};
    h.Kq = qk::ceil_div(K, 4);  // qgemm_xw's taps are 1
    return static_cast<size_t>(shared_units_bytes(&h, N) + qk::round_up(std::max<int64_t>(N, 1) * 4, qk::kAlign) +
                               qk::kAlign);
}

void qgemm_xw_prepare(const void* packed, int64_t N, const void* x, int64_t ldx, void* shared, int64_t n0, int64_t n1) {
    const qk::Header* h = header(packed);
    if (n1 <= n0) return;
    char* mem = qk::align_ptr<char>(shared);
    const int64_t ld = shared_ld(N);
    auto* units = reinterpret_cast<uint8_t*>(mem);
    // Column n's units at units + (g * ld + n) * 4: the columns from n0 are a view ld units wide at n0.
    const auto* xb = static_cast<const uint8_t*>(x);
    if (avx512_x(h)) qk::cols_to_units_avx512(h, xb, ldx, n0, n1 - n0, ld, units + n0 * 4);
    else qk::cols_to_units(h, xb, ldx, n0, n1 - n0, ld, units + n0 * 4);
    // The column sums whether or not this form takes them: another form of the same GEMM may (its weights'
    // zero points differ).
    auto* colsum = reinterpret_cast<int32_t*>(mem + shared_units_bytes(h, N));
    std::vector<int64_t> off(static_cast<size_t>(h->Kq));
    for (int64_t g = 0; g < h->Kq; ++g) off[static_cast<size_t>(g)] = g * ld * 4;
    const qk::View b{units, off.data()};
    if (avx512_x(h)) qk::view_colsums_avx512(h, b, n0, n1 - n0, colsum + n0);
    else qk::view_colsums(h, b, n0, n1 - n0, colsum + n0);
}

void qgemm_xw_shared(const void* packed, int64_t N, const void* shared, void* y, int64_t ldy, void* scratch) {
    const qk::Header* h = header(packed);
    if (N <= 0 || h->M <= 0) return;
    const int64_t NC = column_block(h, N), ld = shared_ld(N);
    const char* mem = qk::align_ptr<char>(const_cast<void*>(shared));
    const RunScratch rs = run_scratch(h, NC, qk::align_ptr<char>(scratch));
    for (int64_t g = 0; g < h->Kq; ++g) rs.off[g] = g * ld * 4;
    const qk::View b{reinterpret_cast<const uint8_t*>(mem), rs.off};
    const auto* colsum = h->colsum ? reinterpret_cast<const int32_t*>(mem + shared_units_bytes(h, N)) : nullptr;
    for (int64_t n0 = 0; n0 < N; n0 += NC) {
        const int64_t nc = std::min(NC, N - n0);
        run_block(h, b, n0, nc, rs, static_cast<char*>(y) + n0 * ldy * elem_bytes(h), ldy, true,
                  colsum ? colsum + n0 : nullptr);
    }
}

namespace {

// A header with the sizes of spec for isa (what the conv runs' scratch depends on), no weights.
qk::Header size_header(QIsa isa, const QGemmSpec& spec) {
    const Dims d = dims(isa, spec);
    qk::Header h{};
    h.isa = isa;
    h.M = std::max<int64_t>(spec.M, 0), h.K = spec.K, h.taps = d.taps, h.C = d.C;
    h.Mp = d.Mp, h.Kq = d.Kq, h.Kg = d.Kg;
    return h;
}

constexpr QIsa kAllIsas[] = {QIsa::Portable, QIsa::Avx2, QIsa::Avx512Vnni, QIsa::Amx};

// Scratch of qconv_rows over at most `rows` output rows.
int64_t rows_scratch(const qk::Header* h, const ConvGeom& q, int64_t rows) {
    rows = std::clamp<int64_t>(rows, 1, std::max<int64_t>(q.OH, 1));
    const int64_t NC = column_block(h, rows * q.OW);
    if (pointwise(q)) return units_bytes(h, NC) + run_scratch_bytes(h, NC) + qk::kAlign;
    return qk::round_up(qk::conv_x_bytes(q, h->Kq, rows), qk::kAlign) + run_scratch_bytes(h, NC) + qk::kAlign;
}

void build_rows(const qk::Header* h, const ConvGeom& q, const uint8_t* x, const qk::ConvX& cx, int64_t i0, int64_t i1) {
    if (avx512_x(h)) qk::conv_x_build_avx512(h, q, x, cx, i0, i1);
    else if (h->isa == QIsa::Avx2) qk::conv_x_build_avx2(h, q, x, cx, i0, i1);
    else qk::conv_x_build(h, q, x, cx, i0, i1);
}

}  // namespace

size_t qconv_scratch_bytes(const void* packed, const ConvGeom& q) {
    return static_cast<size_t>(rows_scratch(header(packed), q, q.OH));
}

void qconv(const void* packed, const ConvGeom& q, const void* x, void* y, void* scratch) {
    qconv_rows(packed, q, x, y, scratch, 0, q.OH);
}

size_t qconv_rows_scratch_max(const QGemmSpec& spec, const ConvGeom& q, int64_t rows) {
    int64_t most = 0;
    for (QIsa isa : kAllIsas) {
        const qk::Header h = size_header(isa, spec);
        most = std::max(most, rows_scratch(&h, q, rows));
    }
    return static_cast<size_t>(most);
}

void qconv_rows(const void* packed, const ConvGeom& q, const void* x, void* y, void* scratch, int64_t oh0,
                int64_t oh1) {
    const qk::Header* h = header(packed);
    const uint8_t* xb = static_cast<const uint8_t*>(x);
    if (oh1 <= oh0 || q.OW <= 0 || h->M <= 0) return;
    const int64_t rows = oh1 - oh0;
    if (pointwise(q)) {  // X is the input as it lies: K rows of P, of which these columns
        const int64_t p0 = oh0 * q.OW;
        run_gemm(h, false, rows * q.OW, xb + p0, q.P, static_cast<char*>(y) + p0 * elem_bytes(h), q.P, scratch);
        return;
    }
    char* mem = qk::align_ptr<char>(scratch);
    qk::ConvX cx;
    qk::conv_x_layout(h, q, rows, mem, &cx);
    const int64_t NC = column_block(h, rows * q.OW);
    const RunScratch rs = run_scratch(h, NC, mem + qk::round_up(qk::conv_x_bytes(q, h->Kq, rows), qk::kAlign));
    const qk::View b{cx.data, cx.off};
    // Bands of output rows when the copies would outgrow L2 (qim2col.h): each band's rows are built into
    // the same buffer, then read while they are still in cache.
    const int64_t band = qk::conv_x_band(q, rows), halo = qk::conv_x_halo(q);
    for (int64_t b0 = oh0; b0 < oh1; b0 += band) {
        const int64_t b1 = std::min(oh1, b0 + band);
        cx.row0 = b0;
        build_rows(h, q, xb, cx, b0, b1 + halo);
        if (b1 - b0 < band) qk::conv_x_clear_after(q, cx, b1 + halo);
        // The view's columns count from the band's first output.
        for (int64_t p = b0 * q.OW; p < b1 * q.OW; p += NC)
            run_block(h, b, p - b0 * q.OW, std::min(NC, b1 * q.OW - p), rs, static_cast<char*>(y) + p * elem_bytes(h),
                      q.P, false);
    }
}

// (A pointwise conv's copy is its input interleaved by 4 channels: what qgemm_wx's blocks make of it, made
// once for all parts instead of once per part.)
bool qconv_shares(const ConvGeom& q) { return qk::conv_x_band(q, q.OH) == q.OH; }

int64_t qconv_units(const ConvGeom& q) { return qk::ceil_div(q.Cg, 4); }

namespace {

// The shared copies' bytes, then their column sums (P int32).
int64_t shared_copies_bytes(int64_t Kq, const ConvGeom& q) {
    return qk::round_up(qk::conv_x_bytes(q, Kq, q.OH), qk::kAlign);
}
int32_t* shared_sums(const qk::Header* h, const ConvGeom& q, const void* shared) {
    return reinterpret_cast<int32_t*>(qk::align_ptr<char>(const_cast<void*>(shared)) + shared_copies_bytes(h->Kq, q));
}

}  // namespace

size_t qconv_shared_bytes(const QGemmSpec& spec, const ConvGeom& q) {
    const qk::Header h = size_header(QIsa::Portable, spec);  // Kq is the same on every path
    return static_cast<size_t>(shared_copies_bytes(h.Kq, q) + qk::round_up(q.P * 4, qk::kAlign) + qk::kAlign);
}

bool qconv_takes_sums(const void* packed) { return header(packed)->colsum != 0; }

void qconv_share_sums(const void* packed, const ConvGeom& q, void* shared, int64_t p0, int64_t p1) {
    const qk::Header* h = header(packed);
    if (p1 <= p0) return;
    qk::ConvX cx;
    qk::conv_x_place(h, q, q.OH, qk::align_ptr<char>(shared), &cx);
    const qk::View b{cx.data, cx.off};
    int32_t* sums = shared_sums(h, q, shared) + p0;
    if (avx512_x(h)) qk::view_colsums_avx512(h, b, p0, p1 - p0, sums);
    else qk::view_colsums(h, b, p0, p1 - p0, sums);
}

size_t qconv_shared_scratch_max(const QGemmSpec& spec, const ConvGeom& q, int64_t cols) {
    int64_t most = qk::conv_x_stage_bytes(q);
    for (QIsa isa : kAllIsas) {
        const qk::Header h = size_header(isa, spec);
        most = std::max(most, run_scratch_bytes(&h, column_block(&h, std::max<int64_t>(cols, 1))));
    }
    return static_cast<size_t>(most + qk::kAlign);
}

void qconv_share_begin(const void* packed, const ConvGeom& q, void* shared) {
    qk::ConvX cx;
    qk::conv_x_layout(header(packed), q, q.OH, qk::align_ptr<char>(shared), &cx);
}

void qconv_share(const void* packed, const ConvGeom& q, const void* x, void* shared, int64_t u0, int64_t u1,
                 void* scratch) {
    const qk::Header* h = header(packed);
    if (u1 <= u0) return;
    qk::ConvX cx, part;
    qk::conv_x_place(h, q, q.OH, qk::align_ptr<char>(shared), &cx);
    const auto* xb = static_cast<const uint8_t*>(x);
    if (pointwise(q)) {  // one copy, a plane of P units per k-group: rows of units made in one pass, no staging
        qk::Header hs = *h;
        hs.Kq = u1 - u0;
        hs.K = std::min(q.Cg - 4 * u0, 4 * (u1 - u0));
        uint8_t* dst = cx.data + u0 * cx.plane;
        const int64_t ld = cx.plane / 4;  // units past P unset, as qgemm_wx's: only dropped lanes read them
        if (avx512_x(h)) qk::rows_to_units_avx512(&hs, xb + 4 * u0 * q.P, q.P, 0, q.P, ld, dst);
        else qk::rows_to_units(&hs, xb + 4 * u0 * q.P, q.P, 0, q.P, ld, dst);
        return;
    }
    ConvGeom qs;
    qk::conv_x_slice(q, cx, u0, u1, qk::align_ptr<uint8_t>(scratch), &qs, &part);
    build_rows(h, qs, xb + 4 * u0 * q.H * q.W, part, 0, cx.Hq);
}

void qconv_shared(const void* packed, const ConvGeom& q, const void* shared, void* y, int64_t p0, int64_t p1,
                  void* scratch) {
    const qk::Header* h = header(packed);
    if (p1 <= p0 || h->M <= 0) return;
    qk::ConvX cx;
    qk::conv_x_place(h, q, q.OH, qk::align_ptr<char>(const_cast<void*>(shared)), &cx);
    const int64_t NC = column_block(h, p1 - p0);
    const RunScratch rs = run_scratch(h, NC, qk::align_ptr<char>(scratch));
    const qk::View b{cx.data, cx.off};
    const int32_t* sums = h->colsum ? shared_sums(h, q, shared) : nullptr;
    for (int64_t p = p0; p < p1; p += NC)
        run_block(h, b, p, std::min(NC, p1 - p), rs, static_cast<char*>(y) + p * elem_bytes(h), q.P, false,
                  sums ? sums + p : nullptr);
}

}  // namespace accel_emu
