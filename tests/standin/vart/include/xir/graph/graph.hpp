// graph.hpp - xir::Graph (stand-in): a compiled model read from an .xmodel file (XIR's serialized graph,
// tests/standin/vart/FORMAT.md). A runner created on one of its subgraphs does not own the graph: the graph
// must outlive every runner made from it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "xir/graph/subgraph.hpp"
#include "xir/util/standin_export.hpp"

namespace xir {

class XIR_STANDIN_API Graph {
  public:
    // Reads an .xmodel. A file that cannot be opened ends the process (as XIR's UNI_LOG_FATAL does); a
    // file that is not a valid serialized XIR graph throws std::runtime_error naming the problem.
    static std::unique_ptr<Graph> deserialize(const std::string& pb_fname);
    // The same from the file's bytes.
    static std::unique_ptr<Graph> deserialize_from_string(const std::string& str);

    explicit Graph(const std::string& name);
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    ~Graph();

    const std::string get_name() const { return name_; }
    Subgraph* get_root_subgraph() { return root_.get(); }
    const Subgraph* get_root_subgraph() const { return root_.get(); }

    // Building (the stand-in's reader only): the graph owns its ops' output tensors.
    const Tensor* add_tensor(std::unique_ptr<Tensor> tensor);

  private:
    std::string name_;
    std::vector<std::unique_ptr<Tensor>> tensors_;
    std::unique_ptr<Subgraph> root_;
};

}  // namespace xir
