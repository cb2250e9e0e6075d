// `seer predict`: predicted classes (and optionally last-hidden-layer embeddings,
// class probabilities or logits) for given nodes with a model written by `seer train
// --save-model`, through the same out-of-core sampling and gather path as training.
// Flags are bound to PredictOptions (executor/train_options.h).
//
// --nodes has one meaning in every form (.npy of integers or a text file, one id per
// line): the nodes' original ids — node_ids.txt's ids for a dataset prepared with
// --remap-ids, else the row numbers the input had at prep (through node_order.bin after a
// `seer reorder`; the internal number otherwise); on a typed dataset, the target type's
// original ids (its T.node_ids.txt, else its local ids). Outputs are written atomically
// (regular files replaced by rename; devices and FIFOs written through), all or none.
#include <algorithm>
#include <cmath>
#include <optional>
#include <fstream>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "executor/model_runner.h"
#include "executor/prediction.h"
#include "storage/base/atomic_file.h"
#include "storage/base/name_table.h"
#include "storage/base/stale_temp.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/node_ids.h"
#include "storage/dataset/node_order.h"
#include "storage/dataset/typed_target.h"
#include "storage/prep/npy.h"
#include "flag_binding.h"
#include "train_flags.h"
#include "commands.h"

namespace seer::cli {
namespace {

// What the CSV carries besides "id,class".
enum class PredictOutput { kClass, kProbabilities, kLogits };
inline constexpr NameValue<PredictOutput> kPredictOutputNames[] = {
    {"class", PredictOutput::kClass}, {"probabilities", PredictOutput::kProbabilities}, {"logits", PredictOutput::kLogits}};

// The ids --nodes, --pairs and the CSV use: the dataset's original ids, or for a typed
// dataset its target type's (the lines of the type's node_ids file, else its local ids).
struct IdSpace {
  OriginalIds ids;
  std::string id_file = dataset_files::kNodeIds;  // named in messages when ids.has_id_file()
  std::string type;                               // a typed dataset's target type, else ""
};

// The target type of a typed dataset: --target-type, else a relational model's own (set
// into o->target_type, so the prediction classifies the type whose ids were read), else
// the only labeled type (ResolveTarget).
Result<IdSpace> LoadIdSpace(const Dataset& dataset, PredictOptions* o) {
  IdSpace space;
  const DatasetManifest& m = dataset.manifest();
  if (!m.typed()) {
    SEER_ASSIGN_OR_RETURN(space.ids, OriginalIds::Load(dataset));
    return space;
  }
  if (o->target_type.empty()) {
    SEER_ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> model, ModelRunner::LoadModel(o->model_path, false));
    const ModelConfig& c = model->config();
    if (c.relational() && c.target_type >= 0 && c.target_type < static_cast<int32_t>(m.node_types.size())) {
      o->target_type = m.node_types[static_cast<size_t>(c.target_type)].name;
    }
  }
  SEER_ASSIGN_OR_RETURN(const TypedTarget target, ResolveTarget(m, o->target_type));
  const DatasetNodeType& type = m.node_types[static_cast<size_t>(target.type)];
  SEER_ASSIGN_OR_RETURN(space.ids,
                        OriginalIds::LoadNodeIdsFile(type.node_ids.empty() ? "" : dataset.PathOf(type.node_ids),
                                                     type.count));
  space.id_file = type.node_ids;
  space.type = type.name;
  return space;
}

// The node of one original id, or an error naming where it was read.
Result<int64_t> NodeOfId(const IdSpace& space, std::string_view id, const std::string& where) {
  const int64_t node = space.ids.NodeOf(id);
  if (node >= 0) return node;
  const std::string shown = id.size() > 64 ? std::string(id.substr(0, 64)) + "..." : std::string(id);
  const std::string rows = space.type.empty() ? "a row number" : "a " + space.type + " row number";
  return InvalidArgument(fmt::format("{}: node id '{}' is not in the dataset ({})", where, shown,
                                     space.ids.has_id_file()
                                         ? "not in its " + space.id_file
                                         : "expected " + rows + " below " + std::to_string(space.ids.num_nodes())));
}

// --nodes as a 1-D (or N x 1) integer .npy of original ids.
Result<std::vector<int64_t>> ReadNodesNpy(const std::string& path, const IdSpace& space) {
  const OriginalIds& ids = space.ids;
  SEER_ASSIGN_OR_RETURN(NpyFile file, NpyFile::Open(path));
  const NpyHeader& h = file.header();
  const bool column = h.shape.size() == 1 || (h.shape.size() == 2 && h.shape[1] == 1);
  if ((h.kind != 'i' && h.kind != 'u') || !column) {
    return InvalidArgument(path + ": node ids must be a 1-D integer array, found " + h.descr + " " + h.ShapeString());
  }
  std::vector<int64_t> values(static_cast<size_t>(h.num_elements()));
  SEER_RETURN_IF_ERROR(file.ReadAsInt64(0, h.num_elements(), values.data()));
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string where = fmt::format("{}: element {}", path, i);
    if (values[i] < 0) return InvalidArgument(fmt::format("{}: node id {} is negative", where, values[i]));
    if (ids.identity()) {
      if (values[i] >= ids.num_nodes()) {
        return InvalidArgument(fmt::format("{}: node id {} is not in the dataset (expected {} row number below {})",
                                           where, values[i], space.type.empty() ? "a" : "a " + space.type,
                                           ids.num_nodes()));
      }
      continue;
    }
    SEER_ASSIGN_OR_RETURN(values[i], NodeOfId(space, std::to_string(values[i]), where));
  }
  return values;
}

// --nodes as text: one original id per line (a trailing '\r' dropped; blank lines skipped;
// an id not found as written is tried again without surrounding blanks).
Result<std::vector<int64_t>> ReadNodesText(const std::string& path, const IdSpace& space) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, path + ": cannot open");
  std::vector<int64_t> nodes;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number);
    int64_t node = space.ids.NodeOf(line);
    if (node < 0) {
      const size_t last = line.find_last_not_of(" \t");
      SEER_ASSIGN_OR_RETURN(node, NodeOfId(space, std::string_view(line).substr(first, last + 1 - first), where));
    }
    nodes.push_back(node);
  }
  if (in.bad()) return Status(StatusCode::kIoError, path + ": read failed");
  return nodes;
}

Result<std::vector<int64_t>> ReadNodes(const std::string& path, const IdSpace& ids) {
  const bool npy = path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  std::vector<int64_t> nodes;
  if (npy) {
    SEER_ASSIGN_OR_RETURN(nodes, ReadNodesNpy(path, ids));
  } else {
    SEER_ASSIGN_OR_RETURN(nodes, ReadNodesText(path, ids));
  }
  if (nodes.empty()) {
    return InvalidArgument(path + ": no node ids in --nodes (leave --nodes out to predict the test split)");
  }
  return nodes;
}

// --pairs for a link prediction model: an (N, 2) integer .npy, or text with one pair of
// original ids per line separated by a tab (ids may then hold commas and blanks), else a
// comma, else blanks (blank lines skipped; a trailing '\r' dropped).
Result<std::vector<std::pair<int64_t, int64_t>>> ReadPairs(const std::string& path, const IdSpace& ids) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  const bool npy = path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  if (npy) {
    SEER_ASSIGN_OR_RETURN(NpyFile file, NpyFile::Open(path));
    const NpyHeader& h = file.header();
    if ((h.kind != 'i' && h.kind != 'u') || h.shape.size() != 2 || h.shape[1] != 2) {
      return InvalidArgument(path + ": pairs must be an (N, 2) integer array, found " + h.descr + " " + h.ShapeString());
    }
    std::vector<int64_t> values(static_cast<size_t>(h.num_elements()));
    SEER_RETURN_IF_ERROR(file.ReadAsInt64(0, h.num_elements(), values.data()));
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string where = fmt::format("{}: row {} column {}", path, i / 2, i % 2);
      if (values[i] < 0) return InvalidArgument(fmt::format("{}: node id {} is negative", where, values[i]));
      SEER_ASSIGN_OR_RETURN(values[i], NodeOfId(ids, std::to_string(values[i]), where));
    }
    for (size_t i = 0; i < values.size(); i += 2) pairs.emplace_back(values[i], values[i + 1]);
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status(StatusCode::kNotFound, path + ": cannot open");
    std::string line;
    for (int64_t number = 1; std::getline(in, line); ++number) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      const std::string where = path + ":" + std::to_string(number);
      // A tab separates ids that may hold commas or blanks; else a comma; else blanks.
      const size_t tab = line.find('\t');
      const size_t comma = line.find(',');
      std::string a, b;
      if (tab != std::string::npos || comma != std::string::npos) {
        const size_t at = tab != std::string::npos ? tab : comma;
        a = line.substr(0, at);
        b = line.substr(at + 1);
      } else {
        const size_t first = line.find_first_not_of(" \t");
        const size_t gap = line.find_first_of(" \t", first);
        if (gap == std::string::npos) return InvalidArgument(where + ": expected two node ids (src dst)");
        a = line.substr(first, gap - first);
        b = line.substr(gap);
      }
      auto trim = [](std::string t) {
        const size_t f = t.find_first_not_of(" \t"), l = t.find_last_not_of(" \t");
        return f == std::string::npos ? std::string() : t.substr(f, l + 1 - f);
      };
      const bool by_tab = tab != std::string::npos;
      if (!by_tab) {  // a tab-separated id keeps its blanks
        a = trim(a);
        b = trim(b);
      }
      // A third id: another separator of the kind that split the line.
      const bool third = by_tab ? b.find('\t') != std::string::npos
                                : (comma != std::string::npos ? b.find(',') != std::string::npos
                                                              : b.find_first_of(" \t") != std::string::npos);
      if (a.empty() || b.empty() || third) return InvalidArgument(where + ": expected two node ids (src dst)");
      SEER_ASSIGN_OR_RETURN(const int64_t u, NodeOfId(ids, a, where));
      SEER_ASSIGN_OR_RETURN(const int64_t v, NodeOfId(ids, b, where));
      pairs.emplace_back(u, v);
    }
    if (in.bad()) return Status(StatusCode::kIoError, path + ": read failed");
  }
  if (pairs.empty()) return InvalidArgument(path + ": no pairs in --pairs");
  return pairs;
}

// One CSV field per RFC 4180: quoted when it holds a comma, a quote, CR, LF or leading
// or trailing blanks; quotes inside doubled.
std::string CsvField(std::string_view text) {
  const bool quote = text.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.back() == ' ' ||
                                        text.back() == '\t'));
  if (!quote) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

// What predict writes besides the library's options.
struct PredictOutputs {
  std::string nodes_path;
  std::string pairs_path;                // link prediction models: pairs to score
  std::string scores_path = "scores.npy";
  std::string out_path = "preds.npy";
  std::string embeddings_path;
  std::string ids_out_path;  // the CSV; default for a dataset with original ids: --out with .csv
  PredictOutput output = PredictOutput::kClass;
};

std::string CsvPathFor(const std::string& out) {
  return (out.size() > 4 && out.compare(out.size() - 4, 4, ".npy") == 0 ? out.substr(0, out.size() - 4) : out) + ".csv";
}

// The CSV: "id,class" (+ C probability or logit columns), one line per predicted node
// in --nodes order, ids as the user knows them. Appended to `csv`, not yet closed.
Status WriteCsv(AtomicFileWriter& csv, const PredictResult& r, const OriginalIds& ids, PredictOutput output) {
  std::string text = "id,class";
  const char* prefix = output == PredictOutput::kProbabilities ? ",prob_" : ",logit_";
  if (output != PredictOutput::kClass) {
    for (int64_t c = 0; c < r.num_classes; ++c) text += prefix + std::to_string(c);
  }
  text += '\n';
  std::vector<double> row(static_cast<size_t>(r.num_classes));
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    text += CsvField(ids.IdOf(r.nodes[i]));
    text += ',';
    text += std::to_string(r.classes[i]);
    if (output != PredictOutput::kClass) {
      const float* logits = r.logits.data() + i * static_cast<size_t>(r.num_classes);
      double max = logits[0], sum = 0;
      for (int64_t c = 0; c < r.num_classes; ++c) max = std::max(max, static_cast<double>(logits[c]));
      for (int64_t c = 0; c < r.num_classes; ++c) sum += row[static_cast<size_t>(c)] = std::exp(logits[c] - max);
      for (int64_t c = 0; c < r.num_classes; ++c) {
        const double value = output == PredictOutput::kProbabilities ? row[static_cast<size_t>(c)] / sum : logits[c];
        text += fmt::format(",{:.9g}", value);
      }
    }
    text += '\n';
    if (text.size() >= (1u << 20)) {
      SEER_RETURN_IF_ERROR(csv.Append(text.data(), static_cast<int64_t>(text.size())));
      text.clear();
    }
  }
  return csv.Append(text.data(), static_cast<int64_t>(text.size()));
}

// The CSV of a link model's output `npy_path`: --out-ids when given (its default, --out's
// .csv, means "beside the output": NPY.csv), checked and opened; *path names it.
Result<AtomicFileWriter> OpenLinkCsv(const PredictOutputs& files, const std::string& npy_path, std::string* path) {
  *path = files.ids_out_path.empty() || files.ids_out_path == CsvPathFor(files.out_path) ? CsvPathFor(npy_path)
                                                                                         : files.ids_out_path;
  SEER_RETURN_IF_ERROR(CheckOutputPath(*path));
  return AtomicFileWriter::Create(*path);
}

// A link prediction model's outputs: the pairs' scores (.npy float32, and the CSV
// "src,dst,score" with original ids when the dataset has them or --out-ids is given), or
// the nodes' embeddings (--embeddings, default embeddings.npy).
Status WriteLinkOutputs(const PredictOptions& o, PredictOutputs files, const PredictResult& r, const OriginalIds& ids) {
  if (r.rank != 0) return Status::Ok();
  if (!o.pairs.empty()) {
    const auto n = static_cast<int64_t>(r.pair_scores.size());
    std::optional<AtomicFileWriter> csv;
    if (!files.ids_out_path.empty()) {
      std::string path;
      SEER_ASSIGN_OR_RETURN(AtomicFileWriter writer, OpenLinkCsv(files, files.scores_path, &path));
      csv.emplace(std::move(writer));
      std::string text = "src,dst,score\n";
      for (int64_t i = 0; i < n; ++i) {
        const auto& [u, v] = o.pairs[static_cast<size_t>(i)];
        text += CsvField(ids.IdOf(u)) + "," + CsvField(ids.IdOf(v)) + fmt::format(",{:.9g}\n", r.pair_scores[i]);
      }
      SEER_RETURN_IF_ERROR(csv->Append(text.data(), static_cast<int64_t>(text.size())));
      files.ids_out_path = path;
    }
    SEER_RETURN_IF_ERROR(CheckOutputPath(files.scores_path));
    SEER_RETURN_IF_ERROR(WriteNpy(files.scores_path, "<f4", {n}, r.pair_scores.data()));
    if (csv) SEER_RETURN_IF_ERROR(csv->Close());
    if (o.show_progress) {
      fmt::print(stderr, "seer predict: {} pair scores (logits; higher = more likely an edge) -> {}{}\n", n,
                 files.scores_path, csv ? " and " + files.ids_out_path : "");
    }
    return Status::Ok();
  }
  const std::string path = files.embeddings_path.empty() ? "embeddings.npy" : files.embeddings_path;
  SEER_RETURN_IF_ERROR(CheckOutputPath(path));
  const auto n = static_cast<int64_t>(r.nodes.size());
  // Which original id each row is, when the dataset's ids are not its row numbers.
  std::optional<AtomicFileWriter> csv;
  std::string csv_path;
  if (!ids.identity() || !files.ids_out_path.empty()) {
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter writer, OpenLinkCsv(files, path, &csv_path));
    csv.emplace(std::move(writer));
    std::string text = "row,id\n";
    for (int64_t i = 0; i < n; ++i) {
      text += std::to_string(i) + "," + CsvField(ids.IdOf(r.nodes[static_cast<size_t>(i)])) + "\n";
      if (text.size() >= (1u << 20)) {
        SEER_RETURN_IF_ERROR(csv->Append(text.data(), static_cast<int64_t>(text.size())));
        text.clear();
      }
    }
    SEER_RETURN_IF_ERROR(csv->Append(text.data(), static_cast<int64_t>(text.size())));
  }
  SEER_RETURN_IF_ERROR(WriteNpy(path, "<f4", {n, r.embedding_dim}, r.embeddings.data()));
  if (csv) SEER_RETURN_IF_ERROR(csv->Close());
  if (o.show_progress) {
    fmt::print(stderr, "seer predict: link prediction model: {} node embeddings of {} floats -> {} (rows in {} "
                       "order{})\n",
               n, r.embedding_dim, path, o.nodes.empty() ? "node" : "--nodes",
               csv ? "; their original ids in " + csv_path : "");
  }
  return Status::Ok();
}

Status Predict(PredictOptions o, PredictOutputs files) {
  // A typed dataset's nodes are its target type's rows, by that type's original ids.
  SEER_ASSIGN_OR_RETURN(Dataset dataset, Dataset::OpenAnyKind(o.dataset_dir));
  SEER_ASSIGN_OR_RETURN(IdSpace space, LoadIdSpace(dataset, &o));
  const OriginalIds& ids = space.ids;
  if (files.ids_out_path.empty() && (!ids.identity() || files.output != PredictOutput::kClass)) {
    files.ids_out_path = CsvPathFor(files.out_path);
  }
  if (!files.ids_out_path.empty()) SEER_RETURN_IF_ERROR(CheckOutputPath(files.ids_out_path));
  if (!files.pairs_path.empty() && !files.nodes_path.empty()) {
    return InvalidArgument("--pairs and --nodes: give one (a link prediction model scores pairs or embeds nodes)");
  }
  if (!files.nodes_path.empty()) {
    SEER_ASSIGN_OR_RETURN(o.nodes, ReadNodes(files.nodes_path, space));
  }
  if (!files.pairs_path.empty()) {
    SEER_ASSIGN_OR_RETURN(o.pairs, ReadPairs(files.pairs_path, space));
  }
  o.want_embeddings = !files.embeddings_path.empty();
  o.want_logits = files.output != PredictOutput::kClass;
  SEER_ASSIGN_OR_RETURN(PredictResult result, RunPrediction(o));
  if (result.link) return WriteLinkOutputs(o, files, result, ids);
  if (!result.warning.empty() && result.rank == 0) fmt::print(stderr, "seer predict: warning: {}\n", result.warning);
  // Data-parallel: every rank predicted its share and holds the gathered result; rank 0
  // alone writes the files.
  if (result.rank != 0) return Status::Ok();
  const auto num_nodes = static_cast<int64_t>(result.nodes.size());
  // All outputs or none: the CSV is complete in its temporary before the .npy files are
  // written, and renamed in last (an error on the way removes it).
  std::optional<AtomicFileWriter> csv;
  if (!files.ids_out_path.empty()) {
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(files.ids_out_path));
    csv.emplace(std::move(writer));
    SEER_RETURN_IF_ERROR(WriteCsv(*csv, result, ids, files.output));
  }
  SEER_RETURN_IF_ERROR(WriteNpy(files.out_path, "<i8", {num_nodes}, result.classes.data()));
  if (o.want_embeddings) {
    SEER_RETURN_IF_ERROR(WriteNpy(files.embeddings_path, "<f4", {num_nodes, result.embedding_dim},
                                  result.embeddings.data()));
  }
  if (csv) SEER_RETURN_IF_ERROR(csv->Close());
  if (o.show_progress) {
    fmt::print(stderr, "seer predict: {} nodes -> {}{}", num_nodes, files.out_path,
               files.ids_out_path.empty() ? "" : " and " + files.ids_out_path);
    if (result.accuracy >= 0) {
      fmt::print(stderr, " (accuracy vs labels {:.4f} over {} labelled of {} predicted)", result.accuracy,
                 result.labeled, result.distinct_nodes);
    } else if (result.distinct_nodes > 0) {
      fmt::print(stderr, " (no accuracy: none of the {} predicted nodes is labelled)", result.distinct_nodes);
    }
    fmt::print(stderr, "\n");
  }
  return Status::Ok();
}

}  // namespace

CommandMain RegisterPredictCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand("predict", "Predict node classes with a trained model (.npy and CSV output); with "
                                             "a --task link model, node embeddings or --pairs scores");
  auto o = std::make_shared<PredictOptions>();
  auto files = std::make_shared<PredictOutputs>();
  AddSharedDataPathFlags(cmd, o.get());
  cmd->add_option("--model", o->model_path, "Model file from seer train --save-model")->required();
  cmd->add_option("--target-type", o->target_type,
                  "Typed datasets: the node type the model classifies (default: the only one with labels); --nodes "
                  "and the output rows are then that type's rows");
  cmd->add_option("--nodes", files->nodes_path,
                  "Nodes to predict, by original id: a text file (one id per line) or an integer .npy; the ids "
                  "of node_ids.txt for a --remap-ids dataset, else the input's row numbers; a typed dataset's: the target "
                  "type's (its TYPE.node_ids.txt) (default: the test split)")
      ->capture_default_str();
  AddOptionalEnumOption(cmd, "--task", &o->task, kModelTaskNames, "task",
                        "The model's task (auto: the model file's; node or link: refuse a model of the other)");
  cmd->add_option("--pairs", files->pairs_path,
                  "Link prediction models: (src, dst) pairs to score, by original id: text (one pair per line, "
                  "tab separated, else comma, else blanks) or an (N, 2) integer .npy")
      ->capture_default_str();
  cmd->add_option("--scores", files->scores_path, "With --pairs: the pairs' scores (.npy float32 logits, in order)")
      ->capture_default_str();
  cmd->add_option("--out", files->out_path, "Predicted classes (.npy int64, one per node, in --nodes order)")
      ->capture_default_str();
  cmd->add_option("--out-ids", files->ids_out_path,
                  "The CSV 'id,class[,prob_0..|logit_0..]' with original ids, RFC 4180 quoting (default: --out with "
                  ".csv when the dataset has original ids or --output is not class)")
      ->capture_default_str();
  AddEnumOption(cmd, "--output", &files->output, kPredictOutputNames, "prediction output",
                "What the CSV holds per node besides the class (probabilities = softmax of the logits)");
  cmd->add_option("--embeddings", files->embeddings_path,
                  "Also write the last hidden layer (.npy float32 nodes x dim); a link prediction model's final "
                  "embeddings (default embeddings.npy for one, every node without --nodes)")
      ->capture_default_str();
  AddFanoutsOption(cmd, "--fanouts", &o->fanouts,
                   "Fan-outs (default: the model's training fan-outs, recorded in the model file)");
  AddEnumOption(cmd, "--io", &o->io, kDataIoModeNames, "I/O mode", "SSD reads");
  AddSetFlag(cmd, "--quiet", &o->show_progress, false, "No progress on stderr");
  cmd->add_flag("--allow-other-dataset", o->allow_other_dataset,
                "Predict even when the model records another dataset's identity (refused by default)");
  auto nproc = std::make_shared<int>(1);
  AddDistributedFlags(cmd, o.get(), nproc.get());
  return [o, files, nproc]() -> int {
    if (int launched = LaunchRanksIfAsked("predict", *nproc, *o); launched >= 0) return launched;
    SweepAtStart({});  // dead runs' runtime directories under $TMPDIR
    for (const std::string& out : {files->out_path, files->ids_out_path, files->embeddings_path}) {
      if (out.empty()) continue;
      if (Status st = CheckOutputPath(out); !st.ok()) return ReportError("predict", st);
    }
    Status st = Predict(*o, *files);
    return st.ok() ? 0 : ReportError("predict", st);
  };
}

}  // namespace seer::cli
