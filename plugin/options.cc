// options.cc — parses -fplugin-arg-ballarus-KEY=VALUE into g_options, and
// the help text that lists every option.  When a key is given several times
// the last one wins (the wrappers put their own mode= first so the user's
// wins).

#include "plugin/options.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "plugin/profile_weights.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

namespace {

const char kPluginName[] = "ballarus";

}  // namespace

const char kHelp[] =
    "ballarus: exact edge profiles inside GCC (Knuth; Ball & Larus).\n"
    "Options (-fplugin-arg-ballarus-KEY=VALUE; when a key is given several\n"
    "times, the last one wins):\n"
    "  mode=edge           optimal edge profiling (default): counters only on\n"
    "                      the chords of a maximum spanning tree of the CFG\n"
    "                      (Knuth; Ball & Larus 1994); the other edges are\n"
    "                      derived exactly by ballarus-reconstruct\n"
    "  mode=naive          a 64-bit counter on every CFG edge that can hold one\n"
    "  mode=path           Ball-Larus path profiling (MICRO 1996): every\n"
    "                      acyclic path of every function counted; the edge\n"
    "                      profile is derived from the paths\n"
    "  mode=edge,path      both in one build: one run yields an edge and a\n"
    "                      path profile (ballarus-reconstruct verify checks\n"
    "                      one against the other)\n"
    "  path-table-max=N    every function counts its paths in a dense array\n"
    "                      of at most N+1 counters (default 4096): one with\n"
    "                      more paths is cut at cold blocks until it fits;\n"
    "                      0 puts every function in the runtime hash table\n"
    "  path-storage=dense|hash  hash: functions with more than path-table-max\n"
    "                      paths go to an exact, thread-safe runtime hash\n"
    "                      table instead of being cut (default dense)\n"
    "  early-termination=on|off  count paths cut short by exit(), longjmp\n"
    "                      or an exception at the call that did not return\n"
    "                      (default on: one counter update before each call\n"
    "                      that may not return, which ballarus-reconstruct\n"
    "                      settles; off loses those paths)\n"
    "  weights=heuristic   spanning-tree weights from the Ball-Larus static\n"
    "                      estimate (default): counters land on cold edges\n"
    "  weights=gcc         GCC's own guessed edge frequencies (falls back to\n"
    "                      heuristic where GCC has none, e.g. at -O0)\n"
    "  weights=uniform     every edge alike\n"
    "  weights=profile=FILE exact counts from an earlier ballarus profile of the\n"
    "                      same build (the best any spanning tree can do)\n"
    "  update=single       plain increments: fastest, racy under threads\n"
    "  update=thread       plain increments into per-thread copies of the\n"
    "                      counters, added up at thread exit and at every\n"
    "                      dump: exact under threads at about the cost of\n"
    "                      single (default when compiling with -pthread or\n"
    "                      -fprofile-update=atomic, where gcc's prefer-atomic\n"
    "                      would choose atomic)\n"
    "  update=atomic       relaxed atomic increments: exact under threads,\n"
    "                      several times slower\n"
    "  dump                write the pass dump (<output>.NNNi.ballarus), which\n"
    "                      explains each function's counter placement; GCC 12\n"
    "                      parses -fdump-ipa-* before plugins load, so\n"
    "                      -fdump-ipa-ballarus itself is refused (-fdump-ipa-all\n"
    "                      includes ballarus' dump)\n"
    "  help                print this text\n";

Options g_options;
ballarus::ProfileWeights g_profile_weights;

namespace {

// GCC 12's plugin-argument parser (plugin.cc, parse_plugin_arg_opt) drops
// one character from the end of a value for every '=' inside it, so
// "weights=profile=FILE" arrives with FILE cut short.  The compiler's own
// record of the command line is intact: take the value from there (the last
// such option, as the last option wins).
std::string RawWeightsProfile(const std::string& truncated) {
  const std::string prefix = std::string(kPluginName) + "-weights=profile=";
  std::string found;
  for (unsigned i = 0; i < save_decoded_options_count; ++i) {
    const cl_decoded_option& o = save_decoded_options[i];
    if (o.opt_index == OPT_fplugin_arg_ && o.arg != nullptr &&
        strncmp(o.arg, prefix.c_str(), prefix.size()) == 0)
      found = o.arg + prefix.size();
  }
  return found.empty() ? truncated : found;
}

// Parses -fplugin-arg-ballarus-KEY=VALUE for an option taking auto, on or
// off into *out; false with an error naming the option otherwise.
bool ParseAutoOnOff(const std::string& key, const char* value,
                    Options::AutoOnOff* out) {
  const std::string v = value ? value : "";
  if (v == "auto" || v == "on" || v == "off") {
    *out = v == "on"    ? Options::AutoOnOff::kOn
           : v == "off" ? Options::AutoOnOff::kOff
                        : Options::AutoOnOff::kAuto;
    return true;
  }
  error("ballarus: unknown value %qs for %<-fplugin-arg-ballarus-%s%> "
        "(expected auto, on or off)",
        v.c_str(), key.c_str());
  return false;
}

// Parses -fplugin-arg-ballarus-KEY=VALUE for an option taking on or off
// into *out; false with an error naming the option otherwise.
bool ParseOnOff(const std::string& key, const char* value, bool* out) {
  const std::string v = value ? value : "";
  if (v == "on" || v == "off") {
    *out = v == "on";
    return true;
  }
  error("ballarus: unknown value %qs for %<-fplugin-arg-ballarus-%s%> "
        "(expected on or off)",
        v.c_str(), key.c_str());
  return false;
}

}  // namespace

bool ParseOptions(const plugin_name_args* info) {
  bool ok = true;
  for (int i = 0; i < info->argc; ++i) {
    const char* key = info->argv[i].key;
    const char* value = info->argv[i].value;
    std::string k = key;
    if (k == "help") {
      fputs(kHelp, stderr);
      continue;
    }
    if (k == "dump") {
      g_options.dump = value == nullptr || std::string(value) != "0";
      continue;
    }
    if (k == "mode") {
      if (value == nullptr) {
        error("ballarus: option %<-fplugin-arg-ballarus-mode%> needs a value "
              "(edge, naive, path or edge,path)");
        ok = false;
      } else {
        std::string v = value;
        if (v == "naive") {
          g_options.mode = Mode::kNaive;
          g_options.paths = false;
        } else if (v == "edge") {
          g_options.mode = Mode::kEdge;
          g_options.paths = false;
        } else if (v == "path") {
          g_options.mode = Mode::kNone;
          g_options.paths = true;
        } else if (v == "edge,path" || v == "path,edge") {
          g_options.mode = Mode::kEdge;
          g_options.paths = true;
        } else if (v == "naive,path" || v == "path,naive") {
          g_options.mode = Mode::kNaive;
          g_options.paths = true;
        } else {
          error("ballarus: unknown value %qs for "
                "%<-fplugin-arg-ballarus-mode%> (expected edge, naive, path "
                "or edge,path)",
                value);
          ok = false;
        }
      }
      continue;
    }
    if (k == "path-table-max") {
      std::string v = value ? value : "";
      char* end = nullptr;
      errno = 0;
      unsigned long long n = v.empty() ? 0 : strtoull(v.c_str(), &end, 10);
      if (v.empty() || errno != 0 || *end != '\0' || v[0] == '-' ||
          n > (1ull << 40)) {
        error("ballarus: %<-fplugin-arg-ballarus-path-table-max%> needs a "
              "number of paths between 0 and 2^40, not %qs",
              v.c_str());
        ok = false;
      } else {
        g_options.path_table_max = n;
      }
      continue;
    }
    if (k == "path-hoist" || k == "path-signed" || k == "path-returns" ||
        k == "path-balance" || k == "path-cut-hoist" ||
        k == "path-precount-hoist" || k == "path-entry-balance" ||
        k == "loop-barrier" || k == "path-keep-tails") {
      ok &= ParseOnOff(k, value,
                       k == "path-hoist"       ? &g_options.path_hoist
                       : k == "loop-barrier"   ? &g_options.loop_barrier
                       : k == "path-keep-tails" ? &g_options.path_keep_tails
                       : k == "path-signed"    ? &g_options.path_signed
                       : k == "path-returns"   ? &g_options.path_returns
                       : k == "path-balance"   ? &g_options.path_balance
                       : k == "path-cut-hoist" ? &g_options.path_cut_hoist
                       : k == "path-entry-balance"
                           ? &g_options.path_entry_balance
                           : &g_options.path_precount_hoist);
      continue;
    }
    if (k == "path-loops") {
      std::string v = value ? value : "";
      if (v == "on" || v == "off" || v == "profile") {
        g_options.path_loops = v == "on"    ? Options::PathLoops::kOn
                               : v == "off" ? Options::PathLoops::kOff
                                            : Options::PathLoops::kProfile;
      } else {
        error("ballarus: unknown value %qs for "
              "%<-fplugin-arg-ballarus-path-loops%> (expected profile, on or "
              "off)",
              v.c_str());
        ok = false;
      }
      continue;
    }
    if (k == "path-loop-cuts" || k == "path-call-cuts" ||
        k == "path-goto-targets" || k == "loop-registers" ||
        k == "path-from-edges" || k == "path-derive") {
      ok &= ParseAutoOnOff(k, value,
                           k == "path-loop-cuts"    ? &g_options.path_loop_cuts
                           : k == "path-call-cuts"  ? &g_options.path_call_cuts
                           : k == "path-goto-targets" ? &g_options.path_goto_targets
                           : k == "loop-registers" ? &g_options.loop_registers
                           : k == "path-from-edges" ? &g_options.path_from_edges
                                                    : &g_options.path_derive);
      continue;
    }
    if (k == "path-register") {
      std::string v = value ? value : "";
      if (v == "pointer" || v == "number") {
        g_options.path_pointer = v == "pointer";
      } else {
        error("ballarus: unknown value %qs for "
              "%<-fplugin-arg-ballarus-path-register%> (expected pointer or "
              "number)",
              v.c_str());
        ok = false;
      }
      continue;
    }
    if (k == "path-storage") {
      std::string v = value ? value : "";
      if (v == "dense" || v == "hash") {
        g_options.path_storage_hash = v == "hash";
      } else {
        error("ballarus: unknown value %qs for "
              "%<-fplugin-arg-ballarus-path-storage%> (expected dense or "
              "hash)",
              v.c_str());
        ok = false;
      }
      continue;
    }
    if (k == "early-termination") {
      std::string v = value ? value : "on";
      if (v == "on" || v == "1") {
        g_options.early_termination = true;
      } else if (v == "off" || v == "0") {
        g_options.early_termination = false;
      } else {
        error("ballarus: unknown value %qs for "
              "%<-fplugin-arg-ballarus-early-termination%> (expected on or "
              "off)",
              v.c_str());
        ok = false;
      }
      continue;
    }
    if (k == "weights") {
      std::string v = value ? value : "";
      if (v == "heuristic") {
        g_options.weights = WeightKind::kHeuristic;
      } else if (v == "gcc") {
        g_options.weights = WeightKind::kGcc;
      } else if (v == "uniform") {
        g_options.weights = WeightKind::kUniform;
      } else if (v.rfind("profile=", 0) == 0 && v.size() > 8) {
        g_options.weights = WeightKind::kProfile;
        g_options.profile_path = RawWeightsProfile(v.substr(8));
      } else {
        error("ballarus: unknown value %qs for "
              "%<-fplugin-arg-ballarus-weights%> (expected heuristic, gcc, "
              "uniform or profile=FILE)",
              v.c_str());
        ok = false;
      }
      continue;
    }
    if (k == "update") {
      std::string v = value ? value : "";
      if (v == "single") {
        g_options.update = Update::kSingle;
      } else if (v == "atomic") {
        g_options.update = Update::kAtomic;
      } else if (v == "thread") {
        g_options.update = Update::kThread;
      } else {
        error("ballarus: unknown value %qs for "
              "%<-fplugin-arg-ballarus-update%> (expected single, thread or "
              "atomic)",
              value ? value : "");
        ok = false;
      }
      continue;
    }
    error("ballarus: unknown option %<-fplugin-arg-ballarus-%s%>; "
          "-fplugin-arg-ballarus-help lists the options",
          key);
    ok = false;
  }
  return ok;
}

}  // namespace ballarus::plugin
