// test_runner.cc - the VART stand-in through the vendor's API, as a user (or the vart driver) uses it:
// deserialize, pick the DPU subgraph, run with the runner's own HOST_PHY buffers and their syncs (and
// see stale data without them), HOST_VIRT buffers matched by name, the float->xint truncation, a float32 NCHW subgraph,
// and the aborts (wrong dims, wrong dtype, a re-entrant call, the DPU timeout) in child processes. argv[1]: the folder
// of make_test_models.py.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "vart/runner_ext.hpp"
#include "xir/graph/graph.hpp"

#include "check.h"

extern "C" void standin_vart_hold(int on);
extern "C" int standin_vart_running(void);

namespace {

std::string g_dir;

std::vector<int8_t> read_file(const std::string& name) {
    std::ifstream f(g_dir + "/" + name, std::ios::binary);
    CHECK(f.good());
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return std::vector<int8_t>(bytes.begin(), bytes.end());
}

const xir::Subgraph* dpu_subgraph(const xir::Graph& g) {
    for (const xir::Subgraph* s : g.get_root_subgraph()->children_topological_sort())
        if (s->has_attr("device") && s->get_attr<std::string>("device") == "DPU") return s;
    CHECK(!"no DPU subgraph");
    return nullptr;
}

struct Loaded {
    std::unique_ptr<xir::Graph> graph;
    std::unique_ptr<vart::Runner> runner;
    vart::RunnerExt* ext = nullptr;
};

Loaded load(const char* file) {
    Loaded l;
    l.graph = xir::Graph::deserialize(g_dir + "/" + file);
    l.runner = vart::Runner::create_runner(dpu_subgraph(*l.graph), "run");
    l.ext = dynamic_cast<vart::RunnerExt*>(l.runner.get());
    CHECK(l.ext != nullptr);
    return l;
}

int8_t* host(vart::TensorBuffer* b) { return reinterpret_cast<int8_t*>((uintptr_t)b->data({}).first); }

void close_enough(const int8_t* got, const std::vector<int8_t>& want) {
    for (size_t i = 0; i < want.size(); i++)
        if (std::abs(got[i] - want[i]) > 1) {
            fprintf(stderr, "element %zu: got %d, want %d\n", i, got[i], want[i]);
            exit(1);
        }
}

// A HOST_VIRT buffer of the user's own memory (the vendor's CpuFlatTensorBuffer plays this part).
class UserBuffer : public vart::TensorBuffer {
public:
    UserBuffer(const std::string& name, std::vector<int32_t> shape, xir::DataType type)
        : vart::TensorBuffer(nullptr),
          tensor(xir::Tensor::create(name, shape, type)),
          bytes((size_t)tensor->get_data_size()) {
        tensor_ = tensor.get();
    }
    std::pair<uint64_t, size_t> data(const std::vector<int32_t>) override {
        return {(uint64_t)(uintptr_t)bytes.data(), bytes.size()};
    }
    std::unique_ptr<xir::Tensor> tensor;
    std::vector<char> bytes;
};

void test_zero_copy() {
    Loaded l = load("conv.xmodel");
    CHECK(l.runner->get_tensor_format() == vart::Runner::TensorFormat::NHWC);
    auto ins = l.runner->get_input_tensors();
    auto outs = l.runner->get_output_tensors();
    CHECK(ins.size() == 1 && outs.size() == 1);
    CHECK(ins[0]->get_name() == "x" && ins[0]->get_shape() == std::vector<int32_t>({1, 8, 8, 3}));
    CHECK(ins[0]->get_data_type() == xir::DataType(xir::DataType::XINT, 8));
    CHECK(ins[0]->get_attr<int>("fix_point") == 6);
    CHECK(outs[0]->get_shape() == std::vector<int32_t>({1, 8, 8, 4}) && outs[0]->get_element_num() == 256);
    vart::TensorBuffer* in = l.ext->get_inputs()[0];
    vart::TensorBuffer* out = l.ext->get_outputs()[0];
    CHECK(in->get_location() == vart::TensorBuffer::location_t::HOST_PHY);
    CHECK(in->data({}).second == 192 && in->data({0, 1, 0, 0}).second == 192 - 24);
    CHECK(in->data_phy({}).first != 0 && in->get_tensor() == ins[0]);

    // A run on zeros (the device side as allocated) gives relu(bias).
    auto r = l.runner->execute_async({in}, {out});
    CHECK(r.second == 0 && l.runner->wait((int)r.first, -1) == 0);
    std::vector<int8_t> zero_out(256);
    CHECK(std::memcmp(host(out), zero_out.data(), 256) == 0);  // no sync_for_read yet: stale
    out->sync_for_read(0, 256);
    std::memcpy(zero_out.data(), host(out), 256);

    // The input written but not synced: the device still sees zeros.
    std::vector<int8_t> x = read_file("conv.in0.bin"), y = read_file("conv.out0.bin");
    std::memcpy(host(in), x.data(), x.size());
    l.runner->execute_async({in}, {out});
    out->sync_for_read(0, 256);
    CHECK(std::memcmp(host(out), zero_out.data(), 256) == 0);

    in->sync_for_write(0, x.size());
    l.runner->execute_async({in}, {out});
    out->sync_for_read(0, 256);
    close_enough(host(out), y);

    // VART 3.5's copies: cut at the batch's end, from an offset.
    std::vector<int8_t> back(256, 7);
    out->copy_to_host(0, back.data(), 1000, 0);
    CHECK(std::memcmp(back.data(), host(out), 256) == 0);
    out->copy_to_host(0, back.data(), 16, 250);
    CHECK(std::memcmp(back.data(), host(out) + 250, 6) == 0);
    std::vector<int8_t> ones(192, 1);
    in->copy_from_host(0, ones.data(), 8, 184);
    CHECK(host(in)[183] == x[183] && host(in)[184] == 1 && host(in)[191] == 1);
    CHECK(in->to_string().find("location=HOST_PHY") != std::string::npos);
}

void test_host_virt() {
    Loaded l = load("two_io.xmodel");
    const xir::DataType i8(xir::DataType::XINT, 8), f32(xir::DataType::FLOAT, 32);
    // Given in the wrong order and with extra name parts: the runner matches them by name.
    UserBuffer a("a", {1, 16}, i8), ab("model/ab", {1, 16}, i8), sum("sum", {1, 16}, i8), diff("diff", {1, 16}, i8);
    std::vector<int8_t> qa = read_file("two_io.in0.bin"), qab = read_file("two_io.in1.bin");
    std::memcpy(a.bytes.data(), qa.data(), 16);
    std::memcpy(ab.bytes.data(), qab.data(), 16);
    l.runner->execute_async({&ab, &a}, {&diff, &sum});
    close_enough(reinterpret_cast<int8_t*>(diff.bytes.data()), read_file("two_io.out0.bin"));  // name order
    close_enough(reinterpret_cast<int8_t*>(sum.bytes.data()), read_file("two_io.out1.bin"));

    // Float buffers: x * 2^5 truncated toward zero and wrapped to 8 bits, no saturation.
    UserBuffer fa("a", {1, 16}, f32), fab("ab", {1, 16}, f32), fsum("sum", {1, 16}, f32), fdiff("diff", {1, 16}, f32);
    float* va = reinterpret_cast<float*>(fa.bytes.data());
    float* vab = reinterpret_cast<float*>(fab.bytes.data());
    va[0] = -1.9f / 32;  // -1.9 -> -1 (rounding would give -2)
    va[1] = 4.5f;  // 144 wraps to -112, -3.5
    va[2] = 1.99f / 32;  // 1.99 -> 1
    l.runner->execute_async({&fa, &fab}, {&fsum, &fdiff});
    const float* s = reinterpret_cast<const float*>(fsum.bytes.data());
    CHECK(s[0] == -1.0f / 32 && s[1] == -3.5f && s[2] == 1.0f / 32 && s[3] == 0.0f);
    (void)vab;
}

// A float32 subgraph declared NCHW (the stand-in's liberty): the format reported, the tensors as the
// model has them, plain copies (own buffers and HOST_VIRT ones) and onnxruntime's numbers.
void test_float() {
    Loaded l = load("conv_f32.xmodel");
    CHECK(l.runner->get_tensor_format() == vart::Runner::TensorFormat::NCHW);
    const xir::DataType f32(xir::DataType::FLOAT, 32);
    auto ins = l.runner->get_input_tensors();
    CHECK(ins[0]->get_shape() == std::vector<int32_t>({1, 3, 8, 8}) && ins[0]->get_data_type() == f32);
    CHECK(!ins[0]->has_attr("fix_point") && ins[0]->get_data_size() == 768);
    std::vector<int8_t> x = read_file("conv_f32.in0.bin"), y = read_file("conv_f32.out0.bin");
    auto check = [&](const void* got) {
        const float* g = static_cast<const float*>(got);
        const float* want = reinterpret_cast<const float*>(y.data());
        for (size_t i = 0; i < y.size() / 4; i++)
            CHECK(std::fabs(g[i] - want[i]) <= 1e-4f + 1e-4f * std::fabs(want[i]));
    };
    vart::TensorBuffer* in = l.ext->get_inputs()[0];
    vart::TensorBuffer* out = l.ext->get_outputs()[0];
    std::memcpy(host(in), x.data(), x.size());
    in->sync_for_write(0, x.size());
    l.runner->execute_async({in}, {out});
    out->sync_for_read(0, y.size());
    check(host(out));
    UserBuffer ux("x", {1, 3, 8, 8}, f32), uy("y", {1, 4, 8, 8}, f32);
    std::memcpy(ux.bytes.data(), x.data(), x.size());
    l.runner->execute_async({&ux}, {&uy});
    check(uy.bytes.data());
}

// ---- the aborts, each in a child process ----

void abort_case(const std::string& which) {
    if (which == "timeout") {
        Loaded l = load("conv.xmodel");  // XLNX_DPU_TIMEOUT=1 from the parent
        standin_vart_hold(1);
        l.runner->execute_async(l.ext->get_inputs(), l.ext->get_outputs());
    } else if (which == "reentrant") {
        Loaded l = load("conv.xmodel");
        standin_vart_hold(1);
        std::thread first([&] { l.runner->execute_async(l.ext->get_inputs(), l.ext->get_outputs()); });
        while (standin_vart_running() == 0) std::this_thread::yield();
        l.runner->execute_async(l.ext->get_inputs(), l.ext->get_outputs());
        first.join();
    } else if (which == "copy_offset") {  // an offset at the batch's end: VART's CHECK_LT
        Loaded l = load("conv.xmodel");
        int8_t byte = 0;
        l.ext->get_inputs()[0]->copy_from_host(0, &byte, 1, 192);
    } else if (which == "float_dtype") {  // an xint8 buffer for a float32 tensor
        Loaded l = load("conv_f32.xmodel");
        UserBuffer x("x", {1, 3, 8, 8}, xir::DataType(xir::DataType::XINT, 8));
        l.runner->execute_async({&x}, l.ext->get_outputs());
    } else {
        Loaded l = load("two_io.xmodel");
        const xir::DataType i8(xir::DataType::XINT, 8);
        bool dims = which == "dims";
        UserBuffer a("a", {1, dims ? 8 : 16}, dims ? i8 : xir::DataType(xir::DataType::INT, 16));
        auto own = l.ext->get_inputs();
        l.runner->execute_async({&a, own[1]}, l.ext->get_outputs());
    }
    fprintf(stderr, "abort case %s returned\n", which.c_str());
    exit(0);  // the parent expects SIGABRT
}

// The child runs the case itself rather than exec'ing this binary again: qemu-user does not follow an
// exec, and no thread exists yet in this process (fork with threads is what sanitizers dislike).
void expect_abort(const char* which, bool short_timeout) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (short_timeout) setenv("XLNX_DPU_TIMEOUT", "1", 1);
        abort_case(which);
        _exit(127);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)) {
        fprintf(stderr, "abort case %s: child status %d, expected SIGABRT\n", which, status);
        exit(1);
    }
}

}  // namespace

int main(int argc, char** argv) {
    CHECK(argc >= 2);
    g_dir = argv[1];
    expect_abort("dims", false);
    expect_abort("dtype", false);
    expect_abort("float_dtype", false);
    expect_abort("copy_offset", false);
    expect_abort("reentrant", false);
    expect_abort("timeout", true);
    test_zero_copy();
    test_host_virt();
    test_float();
    printf("standin vart runner: ok\n");
    return 0;
}
